-- Headless end-to-end test of the dsh_lsp plugin against the real dsh-lsp binary.
-- Run by e2e.sh:  nvim --headless -u NONE -i NONE -n -c 'luafile e2e.lua'
-- Environment: DSH_LSP_BIN (server), DSH_STORE (a COPY of testdata/fixtures/store-raw),
-- DSH_EXPECTED (testdata/fixtures/expected/store-raw.expected.json), DSH_PLUGIN
-- (editors/neovim), DSH_WORK (scratch directory). Prints 'N passed, M failed'.
-- The helpers shared with recipes.lua and codecompanion.lua (lib.lua, next to this file).
local T = dofile(debug.getinfo(1, 'S').source:sub(2):match('^(.*)/') .. '/lib.lua')
local api = vim.api
local log, check, eq, env = T.log, T.check, T.eq, T.env
local find, labels, keys = T.find, T.labels, T.keys
local attached_clients, item_label = T.dsh_clients, T.item_label

local BIN, STORE, EXPECTED = env('DSH_LSP_BIN'), env('DSH_STORE'), env('DSH_EXPECTED')
local PLUGIN, WORK = env('DSH_PLUGIN'), env('DSH_WORK')

-- Fixture facts (testdata/fixtures/README.md): session A is titled "Renaming git branches",
-- E cites A; both live in /home/alice/proj.
local A = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001'
local E = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0005'
local PROJ = '/home/alice/proj'
local BUDGET = 65536

local omni = not (vim.lsp.completion and vim.lsp.completion.enable) -- 0.7/0.10: <C-x><C-o>

vim.notify = function(msg, level) log('notify', tostring(level), msg) end
vim.o.showmode = false
vim.o.swapfile = false
vim.opt.shortmess:append('c')
vim.opt.completeopt = { 'menuone', 'noinsert' }
vim.o.hidden = true

-- ---------------------------------------------------------------- reference values (CLI, fixtures)
local function cli(args)
  local argv = { BIN }
  vim.list_extend(argv, args)
  local o = vim.fn.system(argv)
  assert(vim.v.shell_error == 0, 'dsh-lsp ' .. table.concat(args, ' ') .. ' failed: ' .. o)
  return vim.json.decode(o)
end

local expected_prompt = T.expected_prompt(EXPECTED, A, BUDGET)
assert(expected_prompt, 'no expected prompt for session A at budget 65536')

local cands_proj = cli({ 'candidates', '--sessions', STORE, '--target-cwd', PROJ })
local cands_alice = cli({ 'candidates', '--sessions', STORE, '--target-cwd', PROJ, 'alice' })
local cands_e = cli({ 'candidates', '--sessions', STORE, '--target-cwd', PROJ, '--target-id', E })
local mention_a = assert(find(cands_proj, A), 'CLI candidates lack session A').mention
local mention_e = assert(find(cands_proj, E), 'CLI candidates lack session E').mention
local unknown_uri = cli({ 'uri', 'encode', 'no-such-session' }).uri
local label_a = find(cands_proj, A).label

-- Every outcome below is decided by a condition (T.wait_for polls), never by a delay.
local function wait_for(pred, ms) return T.wait_for(pred, ms or 5000) and true or false end

local dsh -- the plugin module

-- Types '@' at the end of the line `prefix` like a user (omnifunc on 0.7/0.10, autotrigger on
-- 0.11+), checks the menu lists want_labels in order, selects want_label and accepts it.
local function complete_and_accept(buf, prefix, typed, use_omni, want_labels, want_label, want_line, what)
  api.nvim_set_current_buf(buf)
  api.nvim_buf_set_lines(buf, 0, -1, false, { prefix })
  keys('A' .. typed .. (use_omni and '<C-x><C-o>' or ''))
  local ok = wait_for(function()
    local ci = vim.fn.complete_info({ 'items', 'pum_visible' })
    return #ci.items > 0
  end, 8000)
  if not check(ok, what .. ': completion menu opens' .. (use_omni and (' with <C-x><C-o> (' .. vim.bo[buf].omnifunc .. ')') or ' on @ (autotrigger)'),
        'mode=' .. vim.fn.mode() .. ' line=' .. api.nvim_get_current_line()) then
    keys('<Esc>')
    wait_for(function() return vim.fn.mode() == 'n' end, 5000)
    return
  end
  local ci = vim.fn.complete_info({ 'items', 'selected' })
  local got = vim.tbl_map(item_label, ci.items)
  eq(got, want_labels, what .. ': menu lists the candidates in dsh order')
  local idx
  for i, l in ipairs(got) do if l == want_label and not idx then idx = i - 1 end end
  if not check(idx ~= nil, what .. ': menu has ' .. want_label) then
    keys('<Esc>')
    wait_for(function() return vim.fn.mode() == 'n' end, 5000)
    return
  end
  local presses = idx - math.max(ci.selected, -1)
  keys(string.rep('<C-n>', presses))
  wait_for(function() return vim.fn.complete_info({ 'selected' }).selected == idx end, 2000)
  keys('<C-y>')
  wait_for(function() return vim.fn.pumvisible() == 0 end, 5000)
  keys('<Esc>')
  wait_for(function() return vim.fn.mode() == 'n' end, 5000)
  wait_for(function() return api.nvim_buf_get_lines(buf, 0, -1, false)[1] == want_line end, 5000)
  eq(api.nvim_buf_get_lines(buf, 0, -1, false), { want_line }, what .. ': accepting inserts exactly the canonical mention')
end

local function diags(buf, code)
  return vim.tbl_filter(function(d) return d.code == code and d.source == 'dsh' end, vim.diagnostic.get(buf))
end

-- Writes `line`, waits for a diagnostic `code` at byte column `col` (or one of the columns in a
-- list), then writes `fixed` and waits until every dsh diagnostic is gone.
local function diag_cycle(buf, line, code, severity, cols, fixed, what)
  api.nvim_buf_set_lines(buf, 0, -1, false, { line })
  local ok = wait_for(function() return #diags(buf, code) > 0 end, 5000)
  local d = diags(buf, code)[1]
  if check(ok, what .. ': ' .. code .. ' diagnostic appears', vim.inspect(vim.diagnostic.get(buf))) then
    check(d.severity == severity and d.lnum == 0 and vim.tbl_contains(cols, d.col),
      what .. ': ' .. code .. ' severity and position',
      ('got severity=%s lnum=%s col=%s, want severity=%s lnum=0 col in %s'):format(
        d.severity, d.lnum, d.col, severity, vim.inspect(cols)))
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, { fixed })
  check(wait_for(function() return #vim.tbl_filter(function(x) return x.source == 'dsh' end,
    vim.diagnostic.get(buf)) == 0 end, 5000), what .. ': diagnostics clear after the fix',
    vim.inspect(vim.diagnostic.get(buf)))
end

-- What the client sends as the document text: lines joined by \n, plus \n when 'eol' is set.
local function sent_text(buf, text)
  return text .. (vim.bo[buf].eol and '\n' or '')
end

local function check_prepare(res, err, want_content, what)
  if not check(err == nil and type(res) == 'table', what .. ': prepare succeeds', vim.inspect(err)) then return end
  eq(res.content, want_content, what .. ': readable text')
  eq(res.references, { { sessionId = A, label = label_a } }, what .. ': references')
  local msg = res.contextMessage or {}
  eq(msg.source and msg.source.kind, 'session-reference', what .. ': context message source kind')
  eq(msg.role, 'user', what .. ': context message role')
  check(dsh.context_text(res) == expected_prompt, what .. ': context message text is byte-exact (expected.json, budget 65536)',
    'got ' .. #dsh.context_text(res) .. ' bytes: ' .. dsh.context_text(res):sub(1, 300))
end

-- ---------------------------------------------------------------- the scenario
local function main()
  log('server', BIN, 'store', STORE)
  vim.opt.runtimepath:prepend(PLUGIN)
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/dsh_lsp.lua')
  dsh = require('dsh_lsp')
  check(vim.fn.exists(':DshPrepare') == 2 and vim.fn.exists(':DshMention') == 2, 'commands defined by plugin/dsh_lsp.lua')

  dsh.setup({
    cmd = { BIN },
    sessions_dir = STORE,
    target = function(bufnr)
      -- per-buffer target: the *.dshchat file is the chat of session E
      if api.nvim_buf_get_name(bufnr):match('%.dshchat$') then return { sessionId = E, cwd = PROJ } end
      return { cwd = PROJ }
    end,
    log_level = 'debug',
    log_file = WORK .. '/dsh-lsp.log',
  })

  -- 1. a codecompanion scratch buffer (no name, buftype=nofile)
  local scratch = api.nvim_create_buf(true, true)
  api.nvim_set_current_buf(scratch)
  vim.bo[scratch].filetype = 'codecompanion'
  check(vim.bo[scratch].buftype == 'nofile', 'scratch buffer has buftype=nofile')
  local ok = wait_for(function()
    local cs = attached_clients(scratch)
    return #cs == 1 and cs[1].initialized
  end, 8000)
  if not check(ok, 'client attached to the codecompanion scratch buffer and initialized') then return end
  local client = attached_clients(scratch)[1]
  -- Until the store's first index pass ends, completion answers with what is indexed so far
  -- (by design); the menu checks below want the whole store: dsh/candidates waits for it.
  local indexed = false
  dsh.candidates(scratch, '', function() indexed = true end)
  check(wait_for(function() return indexed end, 15000), 'the store is indexed (dsh/candidates answered)')
  local tc = (client.server_capabilities.completionProvider or {}).triggerCharacters or {}
  check(vim.tbl_contains(tc, '@'), 'server triggerCharacters contain @', vim.inspect(tc))

  complete_and_accept(scratch, 'see ', '@', omni, labels(cands_proj), label_a, 'see ' .. mention_a, 'scratch @')
  -- a query matched on the cwd: the plugin's omnifunc keeps what the server found and replaces the query
  complete_and_accept(scratch, 'see @alice', '', true, labels(cands_alice), label_a, 'see ' .. mention_a, 'scratch @alice')

  -- content search: 'origin' is said only in session A's body (no id, cwd or title holds it), so
  -- dsh's candidates are none and the content hit is A. The server indexes the bodies in the
  -- background and answers completion from that index as it is: ask until A is offered (the
  -- server then has the hits cached for this query), then complete like a user.
  local word = 'origin'
  eq(cli({ 'candidates', '--sessions', STORE, '--target-cwd', PROJ, word }), {}, 'content word: no candidate holds it in its id, cwd or title')
  api.nvim_buf_set_lines(scratch, 0, -1, false, { 'see @' .. word })
  local offered = false
  local deadline = vim.loop.hrtime() + 20e9
  while not offered and vim.loop.hrtime() < deadline do
    local result
    vim.lsp.buf_request(scratch, 'textDocument/completion', {
      textDocument = { uri = vim.uri_from_bufnr(scratch) },
      position = { line = 0, character = #('see @' .. word) },
    }, function(_, r) result = r or {} end)
    wait_for(function() return result ~= nil end, 5000)
    local items = result and (result.items or result) or {}
    offered = #items == 1 and items[1].label == label_a
    if not offered then T.yield(100) end
  end
  if check(offered, 'content search: the server offers session A for a word of its body') then
    complete_and_accept(scratch, 'see @' .. word, '', true, { label_a }, label_a, 'see ' .. mention_a, 'scratch content @' .. word)
  end

  -- diagnostics: malformed explicit mention after multibyte text (position encoding), unknown id
  local pre = 'café 🙂 see '
  local broken = '@[x](dsh-session:not-canonical)'
  diag_cycle(scratch, pre .. broken .. ' ok', 'invalid-uri', vim.diagnostic.severity.ERROR,
    { #pre, #pre + #'@[x](' }, pre .. mention_a .. ' ok', 'scratch')
  diag_cycle(scratch, 'ask ' .. unknown_uri, 'unknown-session', vim.diagnostic.severity.WARN,
    { #'ask ' }, 'ask ' .. mention_a, 'scratch')

  -- prepare via the Lua API, compared with expected.json and with `dsh-lsp prepare`
  api.nvim_buf_set_lines(scratch, 0, -1, false, { 'see ' .. mention_a })
  local done, res, err = false, nil, nil
  dsh.prepare(scratch, function(e, r) done, res, err = true, r, e end)
  wait_for(function() return done end, 8000)
  check_prepare(res, err, sent_text(scratch, 'see @' .. label_a), 'scratch Lua API')
  local cli_prep = cli({ 'prepare', '--sessions', STORE, '--target-cwd', PROJ, 'see ' .. mention_a })
  check(res and dsh.context_text(res) == dsh.context_text(cli_prep), 'scratch Lua API: same context text as `dsh-lsp prepare`')

  -- prepare_text (the running server) and inline (rewrites an input buffer)
  local r3, e3 = dsh.prepare_text_sync('see ' .. mention_a, { cwd = PROJ })
  check_prepare(r3, e3, 'see @' .. label_a, 'prepare_text_sync via the server')
  local inline_done = false
  dsh.inline(scratch, function() inline_done = true end)
  wait_for(function() return inline_done end, 8000)
  eq(api.nvim_buf_get_lines(scratch, 0, -1, false),
    vim.split('see @' .. label_a .. '\n\n' .. expected_prompt, '\n', { plain = true }),
    'inline rewrites the input buffer into readable text + context')
  api.nvim_buf_set_lines(scratch, 0, -1, false, { 'see ' .. mention_a })

  -- :DshPrepare → register "d and a scratch split
  vim.fn.setreg('d', 'old')
  local wins = #api.nvim_list_wins()
  vim.cmd('DshPrepare')
  ok = wait_for(function() return #api.nvim_list_wins() == wins + 1 end, 8000)
  check(ok and vim.fn.getreg('d') == expected_prompt, ':DshPrepare puts the exact context message in register "d',
    vim.fn.getreg('d'):sub(1, 200))
  local split = table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(ok and split:find('see @' .. label_a, 1, true) ~= nil and split:find(expected_prompt, 1, true) ~= nil,
    ':DshPrepare split shows readable text and context', split:sub(1, 300))
  if ok then vim.cmd('close') end

  -- 2. a *.dshchat file: same client, its own target (session E → excluded, self-reference)
  local file = WORK .. '/prompt.dshchat'
  vim.fn.writefile({ 'ask ' }, file)
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local fbuf = api.nvim_get_current_buf()
  check(vim.bo[fbuf].filetype == 'dsh-chat', '*.dshchat file has filetype dsh-chat', vim.bo[fbuf].filetype)
  ok = wait_for(function() return #attached_clients(fbuf) == 1 end, 8000)
  check(ok and attached_clients(fbuf)[1].id == client.id, '*.dshchat file attached to the same client')
  local all = vim.tbl_filter(function(c) return c.name == 'dsh_lsp' end,
    vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients())
  eq(#all, 1, 'one dsh-lsp client for all prompt buffers')

  check(find(cands_e, E) == nil, 'CLI: target session E is not a candidate of its own chat')
  -- Neovim's own vim.lsp.omnifunc on 0.7/0.10 (what vim.lsp users without the plugin get)
  if omni then vim.bo[fbuf].omnifunc = 'v:lua.vim.lsp.omnifunc' end
  complete_and_accept(fbuf, 'ask ', '@', omni, labels(cands_e), label_a, 'ask ' .. mention_a, 'dshchat @')
  diag_cycle(fbuf, 'compare ' .. mention_e, 'self-reference', vim.diagnostic.severity.ERROR,
    { #'compare ', #'compare @[' .. find(cands_proj, E).label .. '](' }, 'compare ' .. mention_a, 'dshchat')

  -- a failing prepare: the JSON-RPC error reaches the caller with the dsh code
  api.nvim_buf_set_lines(fbuf, 0, -1, false, { 'compare ' .. mention_e })
  local rs, es = dsh.prepare_sync(fbuf)
  check(rs == nil and type(es) == 'table' and es.code == -32803 and type(es.data) == 'table'
    and es.data.code == 'SESSION_REFERENCE_SELF_REFERENCE',
    'prepare of a self reference fails with -32803 SESSION_REFERENCE_SELF_REFERENCE', vim.inspect(es))

  api.nvim_buf_set_lines(fbuf, 0, -1, false, { 'compare ' .. mention_a })
  local r2, e2 = dsh.prepare_sync(fbuf)
  check_prepare(r2, e2, sent_text(fbuf, 'compare @' .. label_a), 'dshchat prepare_sync')

  -- :DshMention with a picker that chooses session A like a user would
  api.nvim_buf_set_lines(fbuf, 0, -1, false, { 'x' })
  api.nvim_win_set_cursor(0, { 1, 0 })
  local offered
  local orig_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    offered = items
    for i, it in ipairs(items) do
      if it.sessionId == A then return on_choice(it, i) end
    end
    on_choice(nil, nil)
  end
  vim.cmd('DshMention')
  wait_for(function() return api.nvim_buf_get_lines(fbuf, 0, 1, false)[1] ~= 'x' end, 8000)
  vim.ui.select = orig_select
  eq(offered and labels(offered), labels(cands_e), ':DshMention offers the dsh/candidates of the buffer')
  eq(api.nvim_buf_get_lines(fbuf, 0, -1, false), { 'x' .. mention_a }, ':DshMention inserts the mention after the cursor')

  -- :DshSearch: 'origin' is said only in session A's body; the picker offers A and inserts it
  api.nvim_buf_set_lines(fbuf, 0, -1, false, { 'x' })
  api.nvim_win_set_cursor(0, { 1, 0 })
  local found
  vim.ui.select = function(items, opts, on_choice)
    found = items
    for i, it in ipairs(items) do
      if it.sessionId == A then return on_choice(it, i) end
    end
    on_choice(nil, nil)
  end
  vim.cmd('DshSearch origin')
  wait_for(function() return api.nvim_buf_get_lines(fbuf, 0, 1, false)[1] ~= 'x' end, 8000)
  vim.ui.select = orig_select
  eq(found and vim.tbl_map(function(h) return h.sessionId end, found), { A }, ':DshSearch offers the session whose body says the words')
  eq(api.nvim_buf_get_lines(fbuf, 0, -1, false), { 'x' .. mention_a }, ':DshSearch inserts the mention after the cursor')

  -- setup() again with other settings → workspace/didChangeConfiguration
  -- the notification goes out before the request below on the same pipe, and the server
  -- handles both in order: no wait needed
  local function count_items()
    api.nvim_buf_set_lines(scratch, 0, -1, false, { 'see @' })
    local resp = vim.lsp.buf_request_sync(scratch, 'textDocument/completion', {
      textDocument = { uri = vim.uri_from_bufnr(scratch) },
      position = { line = 0, character = 5 },
      context = { triggerKind = 2, triggerCharacter = '@' },
    }, 5000)
    local result = resp and resp[client.id] and resp[client.id].result
    return #(type(result) == 'table' and (result.items or result) or {})
  end
  dsh.setup({ cmd = { BIN }, sessions_dir = STORE, target = { cwd = PROJ }, candidate_limit = 2 })
  eq(count_items(), 2, 'candidate_limit=2 from a second setup() reaches the server')
  -- a setup() without it: the push says candidateLimit null, the server's default applies again
  dsh.setup({ cmd = { BIN }, sessions_dir = STORE, target = { cwd = PROJ } })
  eq(count_items(), 7, 'a later setup() without candidate_limit restores the default (7 sessions listed)')

  -- :checkhealth dsh_lsp
  vim.cmd('checkhealth dsh_lsp')
  local function health_text() return table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n') end
  wait_for(function() return health_text():find('prompt filetypes', 1, true) ~= nil end, 5000)
  local health = health_text()
  check(health:find('OK', 1, true) ~= nil and health:find('7 session(s) in the store', 1, true) ~= nil,
    ':checkhealth dsh_lsp reports OK with the 7 sessions of the store', health)
  check(not health:find('ERROR', 1, true), ':checkhealth dsh_lsp has no ERROR', health)

  if vim.fn.has('nvim-0.11') == 1 then client:stop() else vim.lsp.stop_client(client.id) end
  wait_for(function() return vim.lsp.get_client_by_id(client.id) == nil end, 3000)
  -- without a running server prepare_text falls back to `dsh-lsp prepare`
  local r4, e4 = dsh.prepare_text_sync('see ' .. mention_a)
  check_prepare(r4, e4, 'see @' .. label_a, 'prepare_text_sync via the CLI fallback')

  -- Neovim 0.11+: lsp/dsh_lsp.lua through vim.lsp.config/enable, then setup() adopts that client
  if vim.lsp.config and vim.lsp.enable then
    api.nvim_del_augroup_by_name('dsh_lsp') -- only vim.lsp.enable may start the server here
    vim.lsp.config('dsh_lsp', { cmd = { BIN }, init_options = { sessionsDir = STORE } })
    vim.lsp.enable('dsh_lsp')
    local file2 = WORK .. '/second.dshchat'
    vim.fn.writefile({ 'see @[x](dsh-session:not-canonical)' }, file2)
    vim.cmd('edit ' .. vim.fn.fnameescape(file2))
    local b2 = api.nvim_get_current_buf()
    ok = wait_for(function() return #attached_clients(b2) == 1 and attached_clients(b2)[1].initialized end, 8000)
    if check(ok, 'vim.lsp.enable(\'dsh_lsp\') attaches the *.dshchat file (lsp/dsh_lsp.lua)') then
      local c2 = attached_clients(b2)[1]
      eq(c2.config.init_options.sessionsDir, STORE, 'vim.lsp.config settings reach the client')
      -- one configuration: what setup() set earlier lives in the same vim.lsp.config entry
      eq(c2.config.init_options.target, { cwd = PROJ }, 'setup() options are part of the vim.lsp.config entry')
      check(wait_for(function() return #diags(b2, 'invalid-uri') > 0 end, 5000), 'vim.lsp.config client publishes diagnostics')
      eq(vim.bo[b2].omnifunc, "v:lua.require'dsh_lsp'.omnifunc", 'lsp/dsh_lsp.lua on_attach runs the plugin attach logic')
      dsh.setup({ cmd = { BIN }, sessions_dir = STORE })
      local s2 = api.nvim_create_buf(true, true)
      api.nvim_set_current_buf(s2)
      vim.bo[s2].filetype = 'codecompanion'
      ok = wait_for(function() return #attached_clients(s2) == 1 end, 8000)
      check(ok and attached_clients(s2)[1].id == c2.id, 'setup() attaches scratch buffers to the vim.lsp.enable client')
      c2:stop()
    end
  end
end

T.run(main, 120000) -- the watchdog: never hang CI
