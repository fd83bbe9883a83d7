-- The Lua recipes of editors/neovim/README.md, run exactly as written (read from the README:
-- the ```lua block after each `<!-- test: NAME -->` marker; only the '/path/to/dsh-lsp'
-- placeholder is replaced by this repository). One scenario per Neovim process (DSH_SCENARIO),
-- each in a fresh HOME whose ~/.dsh/sessions is a copy of testdata/fixtures/store-raw and with
-- `dsh-lsp` on PATH, like a user who installed both.
-- Run by e2e.sh:  nvim --headless -u NONE -i NONE -n -c 'luafile recipes.lua'
-- Environment: DSH_SCENARIO, DSH_LSP_BIN, DSH_STORE (= $HOME/.dsh/sessions), DSH_EXPECTED,
-- DSH_PLUGIN, DSH_REPO, DSH_WORK, DSH_TEST_DIR.
local T = dofile(os.getenv('DSH_TEST_DIR') .. '/lib.lua')
local api = vim.api
local check, eq = T.check, T.eq

local SCENARIO = T.env('DSH_SCENARIO')
local BIN, STORE, EXPECTED = T.env('DSH_LSP_BIN'), T.env('DSH_STORE'), T.env('DSH_EXPECTED')
local PLUGIN, REPO, WORK = T.env('DSH_PLUGIN'), T.env('DSH_REPO'), T.env('DSH_WORK')
local README = PLUGIN .. '/README.md'
local A = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001' -- "Renaming git branches"
T.tag = T.tag .. ' ' .. SCENARIO

vim.notify = function(msg, level) T.log('notify', tostring(level), tostring(msg)) end
vim.o.showmode = false
vim.o.swapfile = false
vim.opt.shortmess:append('c')
vim.opt.completeopt = { 'menuone', 'noinsert' }
vim.o.hidden = true

-- What Neovim's startup does after init.lua: plugin/ scripts, then filetype detection
-- (which sources the plugins' ftdetect/ files, e.g. *.dshchat).
local function startup()
  vim.cmd('runtime plugin/dsh_lsp.lua')
  vim.cmd('filetype on')
end

local autotrigger = vim.lsp.completion ~= nil and vim.lsp.completion.enable ~= nil
local cwd = vim.fn.getcwd()
local cands = T.cli(BIN, { 'candidates', '--sessions', STORE, '--target-cwd', cwd })
assert(#cands == 7, 'the fixture store has 7 sessions, CLI lists ' .. #cands)
local mention_a = T.find(cands, A).mention
local label_a = T.find(cands, A).label

local function expected_prompt() return T.expected_prompt(EXPECTED, A, 65536) end

local function recipe(name, as_expression)
  local code = T.recipe(README, name)
  code = code:gsub(vim.pesc('/path/to/dsh-lsp'), (REPO:gsub('%%', '%%%%')))
  if as_expression then code = 'return ' .. code end
  local chunk, err = loadstring(code, '=README recipe ' .. name)
  if not check(chunk ~= nil, 'README recipe "' .. name .. '" parses', tostring(err)) then return false end
  local ok, res = pcall(chunk)
  check(ok, 'README recipe "' .. name .. '" runs as written', tostring(res))
  return ok, res
end

-- Opens a prompt buffer (a chat plugin's scratch buffer of filetype ft, or a file), waits for
-- the dsh-lsp client, types '@' and checks the menu lists the store's sessions in dsh order.
local function lists_sessions(what, open)
  local buf = open()
  local ok = T.wait_for(function()
    local cs = T.dsh_clients(buf)
    return #cs == 1 and cs[1].initialized
  end, 15000)
  if not check(ok, what .. ': dsh-lsp attached') then return nil end
  check(T.wait_indexed(buf), what .. ': the store is indexed')
  api.nvim_buf_set_lines(buf, 0, -1, false, { 'see ' })
  local labels = T.open_menu('@', not autotrigger)
  if check(labels ~= nil, what .. ': ' .. (autotrigger and '@ opens the menu' or '@<C-x><C-o> opens the menu')) then
    eq(labels, T.labels(cands), what .. ': the menu lists the 7 sessions of the configured store')
    T.keys('<C-e><Esc>')
    T.wait_mode('n')
  end
  return buf, T.dsh_clients(buf)[1]
end

local function scratch(ft)
  return function()
    local b = api.nvim_create_buf(true, true)
    api.nvim_set_current_buf(b)
    vim.bo[b].filetype = ft
    return b
  end
end
local function file(name)
  return function()
    local path = WORK .. '/' .. name
    vim.fn.writefile({ '' }, path)
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    return api.nvim_get_current_buf()
  end
end

local scenarios = {}

-- setup{} as in the README's Setup section (defaults: ~/.dsh/sessions, `dsh-lsp` on PATH)
function scenarios.setup()
  vim.opt.runtimepath:prepend(PLUGIN) -- the Install step
  if not recipe('setup') then return end
  startup()
  local _, c1 = lists_sessions('codecompanion scratch buffer', scratch('codecompanion'))
  local _, c2 = lists_sessions('*.dshchat file', file('setup.dshchat'))
  check(c1 and c2 and c1.id == c2.id and #T.all_dsh_clients() == 1, 'one client for both buffers')
end

-- lazy.nvim's spec, used the way lazy.nvim uses it (lazy.nvim itself is not installed here)
function scenarios.lazy()
  local ok, spec = recipe('lazy', true)
  if not (ok and check(type(spec) == 'table' and type(spec.dir) == 'string', 'lazy spec is a table with dir')) then return end
  check(vim.fn.isdirectory(spec.dir .. '/lua/dsh_lsp') == 1, 'lazy spec dir is the plugin directory', spec.dir)
  vim.opt.runtimepath:append(spec.dir)
  require('dsh_lsp').setup(spec.opts)
  startup()
  lists_sessions('AvanteInput scratch buffer', scratch('AvanteInput'))
end

-- by hand, then the avante and CopilotChat recipes (against a stand-in CopilotChat module)
scenarios['by-hand'] = function()
  if not recipe('by-hand') then return end
  startup()
  local want = 'see @' .. label_a .. '\n\n' .. expected_prompt()

  if not recipe('avante') then return end
  local buf = lists_sessions('AvanteInput scratch buffer', scratch('AvanteInput'))
  if buf then
    api.nvim_buf_set_lines(buf, 0, -1, false, { 'see ' .. mention_a })
    T.keys('<M-p>')
    local ok = T.wait_for(function()
      return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n') == want
    end, 10000)
    check(ok, 'avante recipe: <M-p> rewrites the input into readable text + context message (expected.json)',
      table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):sub(1, 300))
  end

  local asked = {}
  package.loaded['CopilotChat'] = { ask = function(msg) table.insert(asked, msg) end } -- stand-in
  if not recipe('copilotchat') then return end
  lists_sessions('copilot-chat scratch buffer', scratch('copilot-chat'))
  vim.cmd('DshAsk see ' .. mention_a)
  local ok = T.wait_for(function() return #asked == 1 end, 10000)
  if check(ok, 'copilotchat recipe: :DshAsk calls CopilotChat.ask once') then
    check(asked[1] == want, 'copilotchat recipe: ask() gets readable text + context message (expected.json)',
      tostring(asked[1]):sub(1, 300))
  end
end

-- Neovim 0.11+: the vim.lsp.config recipe. $DSH_HOME points at an empty directory, so the
-- server's default store is empty: only the recipe's sessionsDir (~/.dsh/sessions) lists the
-- 7 sessions. order: which buffer starts the server (vim.lsp.enable's file, or setup()'s chat).
local function lsp_config(order)
  return function()
    if vim.fn.has('nvim-0.11') == 0 then
      T.log('SKIP', 'the vim.lsp.config recipe needs Neovim 0.11+')
      return
    end
    vim.env.DSH_HOME = WORK .. '/empty-dsh-home' -- inherited by the server
    vim.fn.mkdir(WORK .. '/empty-dsh-home/sessions', 'p')
    vim.opt.runtimepath:prepend(PLUGIN) -- the Install step
    if not recipe('vim-lsp-config') then return end
    startup()
    local first, second
    if order == 'file-first' then
      first = { '*.dshchat file (vim.lsp.enable)', file('first.dshchat') }
      second = { 'codecompanion scratch buffer (setup())', scratch('codecompanion') }
    else
      first = { 'codecompanion scratch buffer (setup() starts the server)', scratch('codecompanion') }
      second = { '*.dshchat file', file('second.dshchat') }
    end
    local _, c1 = lists_sessions(first[1], first[2])
    local _, c2 = lists_sessions(second[1], second[2])
    check(c1 and c2 and c1.id == c2.id and #T.all_dsh_clients() == 1, 'one client for both buffers')
  end
end
scenarios['vim-lsp-config-file-first'] = lsp_config('file-first')
scenarios['vim-lsp-config-chat-first'] = lsp_config('chat-first')

T.run(function()
  local f = scenarios[SCENARIO]
  assert(f, 'unknown scenario ' .. SCENARIO)
  f()
  for _, c in ipairs(T.all_dsh_clients()) do
    if vim.fn.has('nvim-0.11') == 1 then c:stop() else vim.lsp.stop_client(c.id) end
  end
  T.wait_for(function() return #T.all_dsh_clients() == 0 end, 5000)
end, 120000)
