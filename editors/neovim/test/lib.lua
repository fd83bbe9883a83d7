-- Helpers shared by the headless Neovim test scripts (e2e.lua, recipes.lua, codecompanion.lua):
-- checks, a coroutine scheduler that waits on conditions (never on fixed delays), typing
-- like a user, the dsh-lsp CLI, and the README recipes as written.
--   local T = dofile(DSH_TEST_DIR .. '/lib.lua')
local uv = vim.uv or vim.loop
local api = vim.api

local T = { passed = 0, failed = 0 }
local t0 = uv.hrtime()
local nv = vim.version()
T.tag = ('nvim-%d.%d.%d'):format(nv.major, nv.minor, nv.patch)

function T.out(s) io.stdout:write(s .. '\n') end
function T.log(...)
  T.out(('%s %6.0fms %s'):format(T.tag, (uv.hrtime() - t0) / 1e6, table.concat({ ... }, ' ')))
end
function T.check(ok, what, detail)
  if ok then T.passed = T.passed + 1 else T.failed = T.failed + 1 end
  T.log(ok and 'PASS' or 'FAIL', what .. ((not ok and detail) and ('\n      ' .. detail) or ''))
  return ok
end
function T.eq(got, want, what)
  return T.check(vim.deep_equal(got, want), what, 'got:  ' .. vim.inspect(got) .. '\n      want: ' .. vim.inspect(want))
end
function T.env(name)
  local v = os.getenv(name)
  assert(v and v ~= '', name .. ' is not set')
  return v
end

-- ------------------------------------------------------------------ scheduling
local co
local function finish()
  T.out(('%s: %d passed, %d failed'):format(T.tag, T.passed, T.failed))
  vim.cmd(T.failed == 0 and 'qa!' or 'cq!')
end
local function resume()
  local ok, err = coroutine.resume(co)
  if not ok then
    T.failed = T.failed + 1
    T.log('FAIL', 'test script error: ' .. tostring(err))
    T.out(debug.traceback(co))
    finish()
  end
end
--- Gives control back to Neovim's main loop (typeahead, RPC, timers) for about ms ms.
--- Only used inside wait_for's polling and to let typeahead run: every test outcome is
--- decided by a condition.
function T.yield(ms)
  local t = uv.new_timer()
  t:start(ms or 10, 0, function()
    t:stop(); t:close()
    vim.schedule(resume)
  end)
  coroutine.yield()
end
--- Polls pred until it returns a truthy value (returned) or ms milliseconds pass (false).
function T.wait_for(pred, ms)
  local deadline = uv.hrtime() + (ms or 10000) * 1e6
  while true do
    local ok, v = pcall(pred)
    if ok and v then return v end
    if uv.hrtime() > deadline then return false end
    T.yield(15)
  end
end
--- Runs main() as a coroutine, then prints the result line and quits (watchdog: never hang CI).
function T.run(main, watchdog_ms)
  co = coroutine.create(function()
    main()
    finish()
  end)
  local dog = uv.new_timer()
  dog:start(watchdog_ms or 150000, 0, vim.schedule_wrap(function()
    T.failed = T.failed + 1
    T.log('FAIL', 'watchdog: test did not finish')
    finish()
  end))
  vim.schedule(resume)
end

--- Feeds keys like a user types them (processed by the main loop, not synchronously).
function T.keys(s) api.nvim_feedkeys(api.nvim_replace_termcodes(s, true, false, true), 't', false) end
--- Waits until the typeahead is consumed and Neovim is in mode m ('n', 'i').
function T.wait_mode(m, ms) return T.wait_for(function() return vim.fn.mode() == m end, ms or 5000) end

-- ------------------------------------------------------------------ dsh-lsp
--- Runs `bin args...` and returns its decoded JSON stdout (stderr dropped) and exit status.
function T.cli(bin, args)
  local argv = { bin }
  vim.list_extend(argv, args)
  local cmd = table.concat(vim.tbl_map(vim.fn.shellescape, argv), ' ') .. ' 2>/dev/null'
  local o = vim.fn.system(cmd)
  return vim.json.decode(o), vim.v.shell_error
end
function T.labels(list) return vim.tbl_map(function(c) return c.label end, list) end
function T.find(list, id)
  for i, c in ipairs(list) do if c.sessionId == id then return c, i end end
end

--- The prompt expected.json (at path) gives for a mention of session id with maxReferenceBytes
--- budget (nil when it has none).
function T.expected_prompt(path, id, budget)
  local doc = vim.json.decode(table.concat(vim.fn.readfile(path), '\n'))
  for _, s in ipairs(doc.sessions) do
    if s.header.id == id then
      for _, r in ipairs(s.references) do
        if r.maxReferenceBytes == budget then return r.prompt end
      end
    end
  end
end

function T.dsh_clients(buf)
  local res = {}
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  for _, c in pairs(list) do if c.name == 'dsh_lsp' then table.insert(res, c) end end
  return res
end
function T.all_dsh_clients()
  local list = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  return vim.tbl_filter(function(c) return c.name == 'dsh_lsp' end, list)
end

--- The label of a completion menu entry (the LSP item's, else what the menu shows).
function T.item_label(it)
  local ud = it.user_data
  if type(ud) == 'string' and ud ~= '' then
    local ok, d = pcall(vim.json.decode, ud)
    ud = ok and d or nil
  end
  local ci = type(ud) == 'table' and ud.nvim and ud.nvim.lsp and ud.nvim.lsp.completion_item
  return ci and ci.label or it.abbr or it.word
end

--- Waits until the server attached to buf has indexed its store: until the first pass ends,
--- completion answers with what is indexed so far (by design), and dsh/candidates waits for it.
function T.wait_indexed(buf, ms)
  local done = false
  require('dsh_lsp').candidates(buf, '', function() done = true end)
  return T.wait_for(function() return done end, ms or 15000)
end

--- In the current window, types `typed` at the end of the last line like a user (autotrigger on
--- 0.11+, then <C-x><C-o> when use_omni), waits for the completion menu and returns its labels
--- (nil when no menu opened). Leaves Insert mode with the menu open.
function T.open_menu(typed, use_omni)
  T.keys('G' .. 'A' .. typed .. (use_omni and '<C-x><C-o>' or ''))
  local ok = T.wait_for(function() return #vim.fn.complete_info({ 'items' }).items > 0 end, 10000)
  if not ok then return nil end
  return vim.tbl_map(T.item_label, vim.fn.complete_info({ 'items' }).items)
end
--- Selects the menu entry labelled want, accepts it and returns to Normal mode.
function T.accept(labels, want)
  local idx
  for i, l in ipairs(labels) do if l == want and not idx then idx = i - 1 end end
  if idx == nil then
    T.keys('<Esc>'); T.wait_mode('n')
    return false
  end
  local sel = vim.fn.complete_info({ 'selected' }).selected
  T.keys(string.rep('<C-n>', idx - math.max(sel, -1)))
  T.wait_for(function() return vim.fn.complete_info({ 'selected' }).selected == idx end, 5000)
  T.keys('<C-y>')
  T.wait_for(function() return vim.fn.pumvisible() == 0 end, 5000)
  T.keys('<Esc>')
  T.wait_mode('n')
  return true
end

-- ------------------------------------------------------------------ README recipes
--- The Lua code block that follows `<!-- test: name -->` in the markdown file path, as written.
function T.recipe(path, name)
  local text = table.concat(vim.fn.readfile(path), '\n')
  local marker = '<!-- test: ' .. name .. ' -->'
  local at = text:find(marker, 1, true)
  assert(at, ('recipe %q not found in %s'):format(name, path))
  local s, e = text:find('```lua\n', at, true)
  assert(s, ('recipe %q: no ```lua block after the marker'):format(name))
  local close = text:find('\n```', e, true)
  return text:sub(e + 1, close)
end
--- Runs a recipe's code (a chunk named after it, so errors say which recipe failed).
function T.run_recipe(code, name, subst)
  for k, v in pairs(subst or {}) do code = code:gsub(vim.pesc(k), (v:gsub('%%', '%%%%'))) end
  local chunk, err = loadstring(code, '=recipe ' .. name)
  if not chunk then return false, err end
  return pcall(chunk)
end

return T
