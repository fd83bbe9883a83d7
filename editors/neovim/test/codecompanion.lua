-- End-to-end test of the CodeCompanion extension (lua/codecompanion/_extensions/dsh) in the
-- real olimorris/codecompanion.nvim chat buffer, Neovim 0.12+, against the real dsh-lsp and a
-- fake OpenAI-compatible model server on 127.0.0.1 (fake-model-server.py) that records every
-- request. Run by e2e.sh:  nvim --headless -u NONE -i NONE -n -c 'luafile codecompanion.lua'
-- Environment: DSH_LSP_BIN, DSH_STORE (a copy of testdata/fixtures/store-raw), DSH_EXPECTED,
-- DSH_PLUGIN (editors/neovim), DSH_WORK (scratch), DSH_TEST_DIR (this directory),
-- DSH_CODECOMPANION_DIR, DSH_PLENARY_DIR (checkouts of the pinned commits).
local T = dofile(os.getenv('DSH_TEST_DIR') .. '/lib.lua')
local api = vim.api
local check, eq = T.check, T.eq

local BIN, STORE, EXPECTED = T.env('DSH_LSP_BIN'), T.env('DSH_STORE'), T.env('DSH_EXPECTED')
local PLUGIN, WORK, HERE = T.env('DSH_PLUGIN'), T.env('DSH_WORK'), T.env('DSH_TEST_DIR')
local CC, PLENARY = T.env('DSH_CODECOMPANION_DIR'), T.env('DSH_PLENARY_DIR')

local A = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001' -- "Renaming git branches"
local IDS = { '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002', '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0003',
  '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0004', '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0006' }

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level })
  T.log('notify', tostring(level), tostring(msg))
end
vim.o.showmode = false
vim.o.swapfile = false
vim.opt.shortmess:append('c')
vim.opt.completeopt = { 'menuone', 'noinsert' }
vim.o.hidden = true

local cwd = vim.fn.getcwd()
-- `dsh-lsp SUBCOMMAND --sessions STORE --target-cwd CWD ARGS...` (what the server sees here)
local function cli(args)
  local full = { args[1], '--sessions', STORE, '--target-cwd', cwd }
  vim.list_extend(full, vim.list_slice(args, 2))
  return T.cli(BIN, full)
end

local function expected_prompt() return T.expected_prompt(EXPECTED, A, 65536) end

local function requests(file)
  if vim.fn.filereadable(file) == 0 then return {} end
  local out = {}
  for _, line in ipairs(vim.fn.readfile(file)) do
    if line ~= '' then table.insert(out, vim.json.decode(line)) end
  end
  return out
end

local function user_messages(req)
  return vim.tbl_filter(function(m) return m.role == 'user' end, req.messages or {})
end

local function context_of(res)
  local parts = {}
  for _, b in ipairs((res.contextMessage or {}).content or {}) do
    if b.type == 'text' then table.insert(parts, b.text) end
  end
  return table.concat(parts, '\n')
end

local function notes_matching(pat)
  return vim.tbl_filter(function(n) return n.msg:find(pat, 1, true) ~= nil end, notes)
end

-- Appends text to the user's turn (the end of the chat buffer) as pasted text.
local function put_text(buf, text)
  local last = api.nvim_buf_line_count(buf)
  local line = api.nvim_buf_get_lines(buf, last - 1, last, false)[1]
  api.nvim_buf_set_text(buf, last - 1, #line, last - 1, #line, { text })
end

local function main()
  T.log('server', BIN, 'codecompanion', CC)
  -- the fake model server: port file written once it listens
  local port_file, req_file = WORK .. '/model.port', WORK .. '/model-requests.jsonl'
  local job = vim.fn.jobstart({ 'python3', HERE .. '/fake-model-server.py', port_file, req_file })
  check(job > 0, 'fake model server started')
  local port = T.wait_for(function()
    return vim.fn.filereadable(port_file) == 1 and tonumber(vim.fn.readfile(port_file)[1])
  end, 15000)
  if not check(port, 'fake model server listens on 127.0.0.1') then return end

  vim.opt.runtimepath:prepend(PLENARY)
  vim.opt.runtimepath:prepend(CC)
  vim.opt.runtimepath:prepend(PLUGIN)
  vim.cmd('filetype plugin on')
  vim.cmd('runtime! plugin/dsh_lsp.lua plugin/codecompanion.lua')

  -- The README recipe, as written, with the model adapter of this test added to the options
  -- it passes to codecompanion.setup().
  vim.env.DSH_FAKE_KEY = 'test-key'
  local cc = require('codecompanion')
  local real_setup = cc.setup
  local given
  cc.setup = function(opts)
    given = vim.deepcopy(opts)
    return real_setup(vim.tbl_deep_extend('force', {
      adapters = { http = { fake = function()
        return require('codecompanion.adapters').extend('openai_compatible', {
          env = { url = 'http://127.0.0.1:' .. port, api_key = 'DSH_FAKE_KEY', chat_url = '/v1/chat/completions' },
          schema = { model = { default = 'fake-model' } },
        })
      end } },
      interactions = { chat = { adapter = 'fake' }, inline = { adapter = 'fake' } },
      opts = { log_level = 'ERROR' },
    }, opts))
  end
  local recipe = T.recipe(PLUGIN .. '/README.md', 'codecompanion')
  local ok, err = T.run_recipe(recipe, 'codecompanion')
  cc.setup = real_setup
  if not check(ok, 'README CodeCompanion recipe runs as written', tostring(err)) then return end
  check(given and given.extensions and given.extensions.dsh ~= nil, 'the recipe enables the dsh extension', vim.inspect(given))

  -- the real chat buffer
  cc.chat()
  local chat = T.wait_for(function() return cc.last_chat() end, 10000)
  if not check(chat, 'CodeCompanion opened a chat') then return end
  local buf = chat.bufnr
  api.nvim_set_current_buf(buf)
  eq(vim.bo[buf].filetype, 'codecompanion', 'chat buffer filetype')
  ok = T.wait_for(function()
    local cs = T.dsh_clients(buf)
    return #cs == 1 and cs[1].initialized
  end, 15000)
  if not check(ok, 'dsh-lsp attached to the chat buffer') then return end
  check(T.wait_indexed(buf), 'the store is indexed')

  -- completion in the chat buffer: `@` (autotrigger) lists the store's sessions in dsh order
  local cands = cli({ 'candidates' })
  local label_a = T.find(cands, A).label
  local mention_a = T.find(cands, A).mention
  local labels = T.open_menu(' see @', false)
  if check(labels ~= nil, 'chat buffer: @ opens the completion menu') then
    eq(labels, T.labels(cands), 'chat buffer: the menu lists the sessions of `dsh-lsp candidates`')
    check(T.accept(labels, label_a), 'chat buffer: menu has ' .. label_a)
  end
  local last = api.nvim_buf_get_lines(buf, -2, -1, false)[1]
  check(last:sub(-#(' see ' .. mention_a)) == ' see ' .. mention_a,
    'chat buffer: accepting inserts the canonical mention', last)

  -- send: the model gets the context message, then the readable text
  local want = cli({ 'prepare', 'see ' .. mention_a })
  local want_ctx = context_of(want)
  check(want_ctx ~= '' and want_ctx == expected_prompt(), '`dsh-lsp prepare` context equals expected.json (budget 65536)')
  T.keys('<C-s>')
  ok = T.wait_for(function() return #requests(req_file) == 1 end, 20000)
  if check(ok, 'submit reaches the fake model (1 request)') then
    local req = requests(req_file)[1]
    local um = user_messages(req)
    local n = #req.messages
    check(n >= 2 and req.messages[n - 1].role == 'user' and req.messages[n].role == 'user',
      'request ends with two user messages', vim.inspect(req.messages))
    check(req.messages[n - 1].content == want_ctx,
      'first: the context message, byte-equal to `dsh-lsp prepare`',
      ('got %d bytes: %s'):format(#(req.messages[n - 1].content or ''), (req.messages[n - 1].content or ''):sub(1, 200)))
    eq(req.messages[n].content, want.content, 'then: the readable message (mentions as @label)')
    eq(#um, 2, 'no other user message sent')
    eq(req.model, 'fake-model', 'request names the configured model')
  end
  ok = T.wait_for(function()
    return chat.current_request == nil and table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):find('fake model reply', 1, true)
  end, 20000)
  check(ok, 'the model reply is shown in the chat buffer')
  T.wait_for(function() return chat.current_request == nil and vim.bo[buf].modifiable end, 10000)
  check(#notes_matching('1 referenced session(s) sent as context') == 1, 'the extension reports the referenced session')

  -- dsh refuses the message: nothing is sent, the error and its dsh code are shown
  local unknown = T.cli(BIN, { 'uri', 'encode', 'no-such-session' }).uri
  local cases = {
    { what = 'unknown session', text = ' ask ' .. unknown },
    { what = 'too many references', text = ' compare' .. table.concat(vim.tbl_map(function(id)
      return ' @[s](' .. T.cli(BIN, { 'uri', 'encode', id }).uri .. ')'
    end, IDS)) },
  }
  for _, c in ipairs(cases) do
    local res, code = cli({ 'prepare', vim.trim(c.text) })
    local want_code = code ~= 0 and res.error and res.error.code
    check(want_code and want_code:match('^SESSION_REFERENCE_'), c.what .. ': `dsh-lsp prepare` refuses it', vim.inspect(res))
    local before = #notes
    put_text(buf, c.text)
    T.keys('<C-s>')
    ok = T.wait_for(function()
      for i = before + 1, #notes do
        if notes[i].msg:find('message not sent', 1, true) then return notes[i] end
      end
    end, 10000)
    if check(ok, c.what .. ': the send is blocked with an error') then
      check(ok.level == vim.log.levels.ERROR and ok.msg:find('[' .. tostring(want_code) .. ']', 1, true) ~= nil,
        c.what .. ': the error shows dsh\'s code ' .. tostring(want_code), ok.msg)
    end
    -- the submission returned without a request; the buffer is editable again
    check(chat.current_request == nil and vim.bo[buf].modifiable, c.what .. ': the chat stays editable')
    eq(#requests(req_file), 1, c.what .. ': nothing reached the model')
    -- take the refused text back out, as the user would
    local lastn = api.nvim_buf_line_count(buf)
    local l = api.nvim_buf_get_lines(buf, lastn - 1, lastn, false)[1]
    api.nvim_buf_set_lines(buf, lastn - 1, lastn, false, { l:sub(1, #l - #c.text) })
  end

  -- after the refusals, a valid message is the next request (the refused ones never were)
  put_text(buf, ' again ' .. mention_a)
  local want2 = cli({ 'prepare', 'again ' .. mention_a })
  T.keys('<C-s>')
  ok = T.wait_for(function() return #requests(req_file) == 2 end, 20000)
  if check(ok, 'the next valid message is sent (2 requests in all)') then
    local req = requests(req_file)[2]
    local n = #req.messages
    eq(req.messages[n].content, want2.content, 'second request ends with the new readable message')
    check(req.messages[n - 1].content == context_of(want2), 'second request: its context message precedes it')
    local all = vim.json.encode(req.messages)
    check(not all:find('no-such-session', 1, true) and not all:find(' compare @', 1, true),
      'no refused text in the history sent to the model')
    check(not req.messages[n].content:find('dsh-session:', 1, true), 'the raw mention is not sent')
  end
  T.wait_for(function() return chat.current_request == nil end, 20000)
  vim.fn.jobstop(job)
end

T.run(main, 170000)
