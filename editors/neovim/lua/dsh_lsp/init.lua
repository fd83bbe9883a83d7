-- dsh_lsp: cite other dsh chat sessions in Neovim prompt buffers through the dsh-lsp server.
--
-- Works on Neovim 0.7 and later. One client is started for all prompt buffers (file
-- buffers and the scratch buffers of chat plugins such as CodeCompanion, avante and
-- CopilotChat, which vim.lsp.enable() skips because they have buftype=nofile).
--
-- One configuration: on Neovim 0.11+ the client configuration is the vim.lsp.config entry
-- 'dsh_lsp' (lsp/dsh_lsp.lua, then every vim.lsp.config('dsh_lsp', ...) call); setup()
-- writes the options it is given into that same entry, and the clients it starts for
-- scratch buffers are built from it. Before 0.11 setup() options are the configuration.
local M = {}

local uv = vim.uv or vim.loop
local api = vim.api

--- Name of the LSP client (also the name of the vim.lsp.config entry in lsp/dsh_lsp.lua).
M.client_name = 'dsh_lsp'

--- Default options of setup(); see :help dsh_lsp-options.
M.defaults = {
  cmd = { 'dsh-lsp' },
  cmd_env = nil,
  sessions_dir = nil,
  filetypes = { 'dsh-chat', 'codecompanion', 'AvanteInput', 'copilot-chat' },
  extra_filetypes = {},
  target = nil,
  max_references = nil,
  candidate_limit = nil,
  max_reference_bytes = nil,
  root_dir = nil,
  register = 'd',
  autotrigger = true,
  omnifunc = true,
  scratch_names = true,
  on_attach = nil,
  capabilities = nil,
  log_level = nil,
  log_file = nil,
  timeout_ms = 10000,
}

local state = {
  config = nil, -- effective options (defaults + user options)
  client_id = nil, -- the one dsh-lsp client this module started or adopted
  augroup = nil,
  last_settings = nil, -- JSON of the settings last sent, to detect changes
  setup_keys = {}, -- settings keys the last setup() wrote into vim.lsp.config (0.11+)
}

-- The settings keys of the contract, in the order they are sent.
local SETTING_KEYS = { 'sessionsDir', 'target', 'maxReferences', 'candidateLimit', 'maxReferenceBytes' }

local has = function(feature) return vim.fn.has(feature) == 1 end

-- Client methods became colon-calls in 0.11; the dot form warns there.
local function client_request(client, method, params, handler, bufnr)
  if has('nvim-0.11') then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

local function client_notify(client, method, params)
  if has('nvim-0.11') then return client:notify(method, params) end
  return client.notify(method, params)
end

local function client_is_stopped(client)
  if has('nvim-0.11') then return client:is_stopped() end
  return client.is_stopped()
end

local function resolve_bufnr(bufnr)
  if bufnr == nil or bufnr == 0 then return api.nvim_get_current_buf() end
  return bufnr
end

local function notify(msg, level)
  vim.notify('dsh-lsp: ' .. msg, level or vim.log.levels.INFO)
end

local function list_clients(filter)
  if vim.lsp.get_clients then return vim.lsp.get_clients(filter) end
  local clients = {}
  if filter and filter.bufnr then
    for _, c in pairs(vim.lsp.buf_get_clients(filter.bufnr)) do table.insert(clients, c) end
  else
    clients = vim.lsp.get_active_clients()
  end
  if filter and filter.name then
    clients = vim.tbl_filter(function(c) return c.name == filter.name end, clients)
  end
  return clients
end

--- Absolute path of a directory, without a trailing slash ('~' and $VARS expanded).
function M.normalize_dir(dir)
  local abs = vim.fn.fnamemodify(vim.fn.expand(dir), ':p')
  if #abs > 1 then abs = abs:gsub('/$', '') end
  return abs
end

--- Effective options (after setup()), or the defaults.
function M.get_config()
  return state.config or vim.deepcopy(M.defaults)
end

-- The settings object that setup() options opts give (keys with no value left out).
local function settings_of_options(opts)
  local s = {}
  if opts.sessions_dir and opts.sessions_dir ~= '' then
    s.sessionsDir = M.normalize_dir(opts.sessions_dir)
  end
  if type(opts.target) == 'table' and next(opts.target) ~= nil then s.target = opts.target end
  s.maxReferences = opts.max_references
  s.candidateLimit = opts.candidate_limit
  s.maxReferenceBytes = opts.max_reference_bytes
  return s
end

-- Neovim 0.11+: the resolved vim.lsp.config entry (lsp/dsh_lsp.lua + vim.lsp.config calls).
local function native_config()
  if not (has('nvim-0.11') and vim.lsp.config) then return nil end
  local ok, c = pcall(function() return vim.lsp.config[M.client_name] end)
  if ok and type(c) == 'table' then return vim.deepcopy(c) end
  return nil
end

local function is_value(v) return v ~= nil and v ~= vim.NIL end

-- The effective settings of a client configuration, with the server's precedence (CONTRACT
-- §2): init_options, then settings.dsh key by key (null: back to the default).
local function effective_settings(cfg)
  local s = {}
  local init = type(cfg.init_options) == 'table' and cfg.init_options or {}
  local pushed = type(cfg.settings) == 'table' and type(cfg.settings.dsh) == 'table' and cfg.settings.dsh or {}
  for _, k in ipairs(SETTING_KEYS) do
    if is_value(init[k]) then s[k] = init[k] end
    if pushed[k] == vim.NIL then s[k] = nil elseif pushed[k] ~= nil then s[k] = pushed[k] end
  end
  return s
end

local function as_object(s)
  if next(s) == nil then return vim.empty_dict() end
  return s
end

--- The settings object of the contract (initializationOptions and settings.dsh) the server
--- gets: on 0.11+ from the vim.lsp.config entry (which setup() writes into), else from the
--- setup() options (or opts). Keys with no value are left out; an empty object stays an
--- object in JSON.
function M.settings(opts)
  if opts then return as_object(settings_of_options(opts)) end
  local cfg = native_config()
  if cfg then return as_object(effective_settings(cfg)) end
  return as_object(settings_of_options(M.get_config()))
end

local function server_cmd(opts)
  local cmd = type(opts.cmd) == 'string' and { opts.cmd } or vim.deepcopy(opts.cmd)
  if opts.log_level then vim.list_extend(cmd, { '--log-level', opts.log_level }) end
  if opts.log_file then vim.list_extend(cmd, { '--log-file', vim.fn.expand(opts.log_file) }) end
  return cmd
end

local function root_dir_for(opts, bufnr)
  local root = opts.root_dir
  if type(root) == 'function' then root = root(bufnr) end
  if type(root) == 'string' and root ~= '' then return M.normalize_dir(root) end
  -- Chat buffers rarely have a file: the working directory is the project the chat is about,
  -- which is also where dsh records its sessions' cwd.
  return uv.cwd()
end

--- Target {sessionId?, cwd?} of a buffer: b:dsh_lsp_target, else opts.target when it is a
--- function of the buffer. A table opts.target is the global settings.target instead.
function M.buffer_target(bufnr)
  bufnr = resolve_bufnr(bufnr)
  local ok, t = pcall(api.nvim_buf_get_var, bufnr, 'dsh_lsp_target')
  if ok and type(t) == 'table' then return t end
  local opts = M.get_config()
  if type(opts.target) == 'function' then
    local ok2, res = pcall(opts.target, bufnr)
    if not ok2 then
      notify('target function failed: ' .. tostring(res), vim.log.levels.WARN)
      return nil
    end
    if type(res) == 'table' and next(res) ~= nil then return res end
  end
  return nil
end

--- The running dsh-lsp client, if any (started here or by vim.lsp.enable('dsh_lsp')).
function M.get_client()
  if state.client_id then
    local c = vim.lsp.get_client_by_id(state.client_id)
    if c and not client_is_stopped(c) then return c end
    state.client_id = nil
  end
  for _, c in ipairs(list_clients({ name = M.client_name })) do
    if not client_is_stopped(c) then
      state.client_id = c.id
      return c
    end
  end
  return nil
end

--- Sends dsh/setTarget for bufnr (target: {sessionId?, cwd?}); remembers it in b:dsh_lsp_target.
--- Chat plugins call this once they know which dsh session a buffer belongs to.
function M.set_target(bufnr, target)
  bufnr = resolve_bufnr(bufnr)
  if target then api.nvim_buf_set_var(bufnr, 'dsh_lsp_target', target) end
  target = target or M.buffer_target(bufnr)
  local client = M.get_client()
  if not (client and target) then return false end
  client_notify(client, 'dsh/setTarget', { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, target = target })
  return true
end

-- Last completion response of omnifunc(): findstart asks the server, the second call returns it.
local omni_items = {}

local function item_text(item)
  if type(item.textEdit) == 'table' and item.textEdit.newText then return item.textEdit.newText end
  if type(item.insertText) == 'string' and item.insertText ~= '' then return item.insertText end
  return item.label
end

-- Byte column of an LSP character offset in line, for the negotiated position encoding.
local function byte_col(line, character, encoding)
  if encoding == 'utf-8' then return math.min(character, #line) end
  local ok, col
  if has('nvim-0.11') then
    ok, col = pcall(vim.str_byteindex, line, encoding == 'utf-32' and 'utf-32' or 'utf-16', character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, encoding ~= 'utf-32')
  end
  return (ok and col) or math.min(character, #line)
end

local function documentation(item)
  local doc = item.documentation
  if type(doc) == 'table' then doc = doc.value end
  return type(doc) == 'string' and doc or ''
end

--- 'omnifunc' for prompt buffers (set by on_attach; see the omnifunc option). Unlike
--- vim.lsp.omnifunc of Neovim 0.7-0.10, it does not drop items whose insert text does not
--- start with the typed query (a mention starts with '[', the query is a title, cwd or id),
--- keeps the server's order, and replaces the query: `@git<C-x><C-o>` works.
function M.omnifunc(findstart, base)
  local bufnr = api.nvim_get_current_buf()
  if findstart ~= 1 then
    local items = omni_items
    omni_items = {}
    return items
  end
  omni_items = {}
  local client
  for _, c in ipairs(list_clients({ bufnr = bufnr })) do
    if c.name == M.client_name then client = c end
  end
  if not client then return -3 end
  local pos = api.nvim_win_get_cursor(0)
  local line = api.nvim_get_current_line()
  local before = line:sub(1, pos[2])
  local at = before:match('()@[^%s@%[%]%(%)]*$')
  local start = at and at or pos[2] -- byte column after '@' (0-based), else the cursor
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 1 }
  local resp = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion', params, M.get_config().timeout_ms)
  local result = resp and resp[client.id] and resp[client.id].result
  local list = type(result) == 'table' and (result.items or result) or {}
  -- The server's edit range decides where the replaced text starts (after the '@').
  for _, item in ipairs(list) do
    local te = item.textEdit
    local range = type(te) == 'table' and (te.range or te.insert)
    if range and range.start.line == pos[1] - 1 then
      start = byte_col(line, range.start.character, client.offset_encoding)
      break
    end
  end
  table.sort(list, function(a, b) return (a.sortText or a.label) < (b.sortText or b.label) end)
  for _, item in ipairs(list) do
    table.insert(omni_items, {
      word = item_text(item),
      abbr = item.label,
      menu = item.detail or '',
      info = documentation(item),
      kind = vim.lsp.protocol.CompletionItemKind[item.kind] or '',
      icase = 1,
      dup = 1,
      empty = 1,
      user_data = { dsh_lsp = { completion_item = item } },
    })
  end
  return start
end

-- Buffers _on_attach has set up: "client:bufnr" -> true.
local attached = {}

-- Called for every buffer the client attaches to (after initialize and didOpen), from the
-- client's on_attach and from LspAttach (plugin/dsh_lsp.lua); runs once per client and buffer.
function M._on_attach(client, bufnr)
  local key = client.id .. ':' .. bufnr
  if attached[key] then return end
  attached[key] = true
  api.nvim_create_autocmd({ 'BufWipeout', 'BufDelete' }, {
    buffer = bufnr, once = true, callback = function() attached[key] = nil end,
  })
  local opts = M.get_config()
  local completion = vim.lsp.completion
  local autotrigger = opts.autotrigger and completion and completion.enable
  if autotrigger then
    -- Must run after initialize: the server's triggerCharacters ('@') are known only then.
    completion.enable(true, client.id, bufnr, { autotrigger = true })
  end
  -- Neovim 0.11+ sets vim.lsp.omnifunc by itself before on_attach: replace that one too.
  local current = vim.bo[bufnr].omnifunc
  if opts.omnifunc == 'always' or (opts.omnifunc and (current == '' or current == 'v:lua.vim.lsp.omnifunc')) then
    vim.bo[bufnr].omnifunc = "v:lua.require'dsh_lsp'.omnifunc"
  end
  local target = M.buffer_target(bufnr)
  if target then
    client_notify(client, 'dsh/setTarget', { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, target = target })
  end
  if type(opts.on_attach) == 'function' then opts.on_attach(client, bufnr) end
end

--- The server program of a client configuration (default: the effective one).
function M.server_path(cfg)
  cfg = cfg or M.client_config()
  if type(cfg.cmd) == 'table' and type(cfg.cmd[1]) == 'string' then return cfg.cmd[1] end
  return 'dsh-lsp'
end

--- Client configuration for vim.lsp.start / vim.lsp.start_client: on 0.11+ the vim.lsp.config
--- entry 'dsh_lsp' (what vim.lsp.enable('dsh_lsp') starts too), else built from setup().
function M.client_config(bufnr)
  local opts = M.get_config()
  local cfg = native_config()
  if cfg then
    -- vim.lsp.start needs a root directory, not vim.lsp.enable's root_dir function.
    if type(cfg.root_dir) ~= 'string' then cfg.root_dir = root_dir_for(opts, resolve_bufnr(bufnr)) end
    local own = cfg.on_attach
    cfg.on_attach = function(client, b)
      for _, f in ipairs(type(own) == 'table' and own or { own }) do f(client, b) end
      M._on_attach(client, b) -- once per buffer, whatever the entry's on_attach did
    end
    cfg.name = M.client_name
    return cfg
  end
  local settings = M.settings(opts)
  return {
    name = M.client_name,
    cmd = server_cmd(opts),
    cmd_env = opts.cmd_env,
    root_dir = root_dir_for(opts, resolve_bufnr(bufnr)),
    filetypes = vim.list_extend(vim.deepcopy(opts.filetypes or {}), opts.extra_filetypes or {}),
    init_options = settings,
    settings = { dsh = vim.deepcopy(settings) },
    capabilities = opts.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = M._on_attach,
  }
end

-- Scratch buffers without a name would all be "file://" to the server, and diagnostics for
-- that URI would land in a new buffer: give them a unique non-file URI as their name.
local function ensure_buffer_name(bufnr)
  if api.nvim_buf_get_name(bufnr) ~= '' then return end
  if not M.get_config().scratch_names then return end
  pcall(api.nvim_buf_set_name, bufnr, ('dsh-chat://buffer/%d'):format(bufnr))
end

--- Starts dsh-lsp if needed and attaches bufnr (default: current buffer). Returns the client id.
function M.attach(bufnr)
  bufnr = resolve_bufnr(bufnr)
  if not api.nvim_buf_is_valid(bufnr) then return nil end
  ensure_buffer_name(bufnr)
  local client = M.get_client()
  if client then
    vim.lsp.buf_attach_client(bufnr, client.id)
    return client.id
  end
  local cfg = M.client_config(bufnr)
  local id
  if vim.lsp.start then -- 0.8+
    id = vim.lsp.start(cfg, {
      bufnr = bufnr,
      reuse_client = function(c, conf) return c.name == conf.name end,
    })
  else -- 0.7
    id = vim.lsp.start_client(cfg)
    if id then vim.lsp.buf_attach_client(bufnr, id) end
  end
  if id then
    state.client_id = id
    state.last_settings = vim.json.encode(M.settings())
  else
    notify('could not start ' .. table.concat(cfg.cmd, ' '), vim.log.levels.ERROR)
  end
  return id
end

-- Sends workspace/didChangeConfiguration when the settings of a running client changed. The
-- push names every key (null for the unset ones: the server's default), so it says the whole
-- configuration whatever the server kept from initializationOptions.
local function push_settings()
  local client = M.get_client()
  if not client then return end
  local settings = M.settings()
  local encoded = vim.json.encode(settings)
  if encoded == state.last_settings then return end
  state.last_settings = encoded
  local full = {}
  for _, k in ipairs(SETTING_KEYS) do
    if settings[k] ~= nil then full[k] = settings[k] else full[k] = vim.NIL end
  end
  client.config.settings = { dsh = settings }
  client_notify(client, 'workspace/didChangeConfiguration', { settings = { dsh = full } })
end

local function filetypes(opts)
  local cfg = native_config()
  if cfg and type(cfg.filetypes) == 'table' then return vim.deepcopy(cfg.filetypes) end
  local fts = {}
  for _, ft in ipairs(opts.filetypes or {}) do table.insert(fts, ft) end
  for _, ft in ipairs(opts.extra_filetypes or {}) do table.insert(fts, ft) end
  return fts
end

-- Neovim 0.11+: writes the client options of setup() into the vim.lsp.config entry, so that
-- vim.lsp.enable('dsh_lsp') and setup() start the same client with the same settings. Only
-- the options the user gave are written (a setup({}) keeps what vim.lsp.config set); a
-- settings key an earlier setup() wrote and this one leaves out is cleared.
local function write_native_config(user_opts, opts)
  if not (has('nvim-0.11') and vim.lsp.config) then return end
  local given = function(k) return user_opts[k] ~= nil end
  local entry = {}
  if given('cmd') or given('log_level') or given('log_file') then
    local base = vim.deepcopy(opts)
    if not given('cmd') then
      local cur = native_config()
      base.cmd = (cur and type(cur.cmd) == 'table') and { cur.cmd[1] } or base.cmd
    end
    entry.cmd = server_cmd(base)
  end
  if given('cmd_env') then entry.cmd_env = opts.cmd_env end
  if given('capabilities') then entry.capabilities = opts.capabilities end
  if given('filetypes') or given('extra_filetypes') then
    entry.filetypes = vim.list_extend(vim.deepcopy(opts.filetypes or {}), opts.extra_filetypes or {})
  end
  local s = settings_of_options(opts)
  local keys, settings = {}, {}
  for _, k in ipairs(SETTING_KEYS) do
    if s[k] ~= nil then
      settings[k], keys[k] = s[k], true
    elseif state.setup_keys[k] then
      settings[k] = vim.NIL -- written by an earlier setup(), not by this one
    end
  end
  state.setup_keys = keys
  if next(settings) ~= nil then
    entry.init_options = settings
    entry.settings = { dsh = vim.deepcopy(settings) }
  end
  if next(entry) ~= nil then vim.lsp.config(M.client_name, entry) end
end

--- Configures the plugin. Calling it again updates the settings of a running server.
function M.setup(user_opts)
  user_opts = user_opts or {}
  local opts = vim.tbl_extend('force', vim.deepcopy(M.defaults), user_opts)
  if type(opts.cmd) == 'string' then opts.cmd = { opts.cmd } end
  state.config = opts
  write_native_config(user_opts, opts)
  M.create_commands()
  state.augroup = api.nvim_create_augroup('dsh_lsp', { clear = true })
  local fts = filetypes(opts)
  if #fts > 0 then
    api.nvim_create_autocmd('FileType', {
      group = state.augroup,
      pattern = fts,
      desc = 'dsh-lsp: attach prompt buffers',
      callback = function(ev) M.attach(ev.buf) end,
    })
  end
  push_settings()
  -- Buffers that already have one of the filetypes (setup() called late, or called again).
  local wanted = {}
  for _, ft in ipairs(fts) do wanted[ft] = true end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and wanted[vim.bo[b].filetype] then M.attach(b) end
  end
  return opts
end

-- Calls cb(client) once the client attached to bufnr has initialized (attaching if needed).
local function with_client(bufnr, cb)
  local id = M.get_client() and M.get_client().id
  local attached = false
  for _, c in ipairs(list_clients({ bufnr = bufnr })) do
    if c.name == M.client_name then attached, id = true, c.id end
  end
  if not attached then id = M.attach(bufnr) end
  if not id then return cb(nil, { message = 'dsh-lsp is not running' }) end
  local deadline = uv.hrtime() + M.get_config().timeout_ms * 1e6
  local function poll()
    local c = vim.lsp.get_client_by_id(id)
    if not c then return cb(nil, { message = 'dsh-lsp exited' }) end
    if c.initialized then return cb(c) end
    if uv.hrtime() > deadline then return cb(nil, { message = 'dsh-lsp did not initialize' }) end
    vim.defer_fn(poll, 10)
  end
  poll()
end

-- JSON-RPC error → {code, message, data} (data.code is the SESSION_REFERENCE_… code).
local function rpc_error(err)
  if type(err) ~= 'table' then return { message = tostring(err) } end
  return { code = err.code, message = err.message or vim.inspect(err), data = err.data }
end

--- Prepares bufnr (default: current) for sending: callback(err, result) with result
--- {content, references, contextMessage?} from dsh/prepare; err {code, message, data} on failure.
function M.prepare(bufnr, callback)
  bufnr = resolve_bufnr(bufnr)
  callback = callback or function() end
  with_client(bufnr, function(client, err)
    if not client then return callback(err, nil) end
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
    local target = M.buffer_target(bufnr)
    if target then params.target = target end
    -- Passing bufnr makes Neovim flush pending didChange notifications first.
    client_request(client, 'dsh/prepare', params, function(e, result)
      if e then return callback(rpc_error(e), nil) end
      callback(nil, result)
    end, bufnr)
  end)
end

--- Synchronous prepare: returns result, err (waits up to timeout_ms).
function M.prepare_sync(bufnr, timeout_ms)
  local done, res, err = false, nil, nil
  M.prepare(bufnr, function(e, r) done, res, err = true, r, e end)
  if not vim.wait(timeout_ms or M.get_config().timeout_ms, function() return done end, 10) then
    return nil, { message = 'dsh/prepare timed out' }
  end
  return res, err
end

-- CLI flags equivalent to the settings (for the command-line fallback of prepare_text).
local function cli_flags(opts, target)
  local flags = {}
  local s = M.settings()
  if s.sessionsDir then vim.list_extend(flags, { '--sessions', s.sessionsDir }) end
  target = target or (type(opts.target) == 'table' and opts.target) or s.target
  if target and target.sessionId then vim.list_extend(flags, { '--target-id', target.sessionId }) end
  if target and target.cwd then vim.list_extend(flags, { '--target-cwd', target.cwd }) end
  if s.maxReferences then vim.list_extend(flags, { '--max-references', tostring(s.maxReferences) }) end
  if s.candidateLimit then vim.list_extend(flags, { '--candidate-limit', tostring(s.candidateLimit) }) end
  if s.maxReferenceBytes then vim.list_extend(flags, { '--max-reference-bytes', tostring(s.maxReferenceBytes) }) end
  return flags
end

--- Prepares a text that is not in a buffer (e.g. the message a chat plugin is about to send):
--- callback(err, result). Uses the running server, else `dsh-lsp prepare` (same result).
--- target: optional {sessionId?, cwd?}, default the table target of setup().
function M.prepare_text(text, callback, target)
  local opts = M.get_config()
  target = target or (type(opts.target) == 'table' and opts.target) or nil
  local client = M.get_client()
  if client and client.initialized then
    local params = { text = text }
    if target then params.target = target end
    client_request(client, 'dsh/prepare', params, function(e, result)
      if e then return callback(rpc_error(e), nil) end
      callback(nil, result)
    end)
    return
  end
  local cfg = M.client_config()
  local argv = { M.server_path(cfg), 'prepare' }
  vim.list_extend(argv, cli_flags(opts, target))
  table.insert(argv, '-')
  local stdout = {}
  local job = vim.fn.jobstart(argv, {
    stdout_buffered = true,
    env = cfg.cmd_env,
    on_stdout = function(_, data) stdout = data end,
    on_exit = function(_, code)
      local ok, decoded = pcall(vim.json.decode, table.concat(stdout, '\n'))
      if not ok or type(decoded) ~= 'table' then
        return callback({ message = 'dsh-lsp prepare: unreadable output' }, nil)
      end
      if code ~= 0 or decoded.error then
        local e = decoded.error or {}
        return callback({ message = e.message or ('exit ' .. code), data = { code = e.code } }, nil)
      end
      callback(nil, decoded)
    end,
  })
  if job <= 0 then return callback({ message = 'cannot run ' .. argv[1] }, nil) end
  vim.fn.chansend(job, text)
  vim.fn.chanclose(job, 'stdin')
end

--- Synchronous prepare_text: returns result, err.
function M.prepare_text_sync(text, target, timeout_ms)
  local done, res, err = false, nil, nil
  M.prepare_text(text, function(e, r) done, res, err = true, r, e end, target)
  if not vim.wait(timeout_ms or M.get_config().timeout_ms, function() return done end, 10) then
    return nil, { message = 'dsh prepare timed out' }
  end
  return res, err
end

--- The text a chat plugin should send for a prepare result: the readable text, followed by
--- the context message when the text cites sessions (for plugins that take one string).
function M.message_text(result)
  local ctx = M.context_text(result)
  if ctx == '' then return result.content end
  -- a buffer's text ends with its final newline: one blank line before the context
  return (result.content:gsub('\n+$', '')) .. '\n\n' .. ctx
end

--- Rewrites bufnr (a prompt input buffer) into message_text() of its prepare result, so that
--- whatever the chat plugin sends next carries the context: callback(err, result).
function M.inline(bufnr, callback)
  bufnr = resolve_bufnr(bufnr)
  M.prepare(bufnr, function(err, result)
    vim.schedule(function()
      if not err and result.contextMessage then
        api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(M.message_text(result), '\n', { plain = true }))
      end
      if err then notify('prepare failed: ' .. err.message, vim.log.levels.ERROR) end
      if callback then callback(err, result) end
    end)
  end)
end

--- Text of the context message of a prepare result ('' when the text cites no session).
function M.context_text(result)
  local msg = result and result.contextMessage
  if type(msg) ~= 'table' or type(msg.content) ~= 'table' then return '' end
  local parts = {}
  for _, block in ipairs(msg.content) do
    if type(block) == 'table' and block.type == 'text' then table.insert(parts, block.text) end
  end
  return table.concat(parts, '\n')
end

local function split_lines(text) return vim.split(text, '\n', { plain = true }) end

local function show_prepared(result)
  local lines = { '# Readable text', '' }
  vim.list_extend(lines, split_lines(result.content or ''))
  vim.list_extend(lines, { '', '# Context message', '' })
  local ctx = M.context_text(result)
  vim.list_extend(lines, ctx == '' and { '(no referenced sessions)' } or split_lines(ctx))
  vim.cmd('botright new')
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'markdown'
  pcall(api.nvim_buf_set_name, buf, ('dsh-prepared://%d'):format(buf))
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, nowait = true })
  return buf
end

--- :DshPrepare [register] — prepare the current buffer, put the context message text in the
--- register (default from setup, "d") and show readable text + context in a scratch split.
function M.prepare_command(register, bufnr, on_done)
  bufnr = resolve_bufnr(bufnr)
  register = (register and register ~= '') and register or M.get_config().register
  M.prepare(bufnr, function(err, result)
    vim.schedule(function()
      if err then
        local code = type(err.data) == 'table' and err.data.code or nil
        notify('prepare failed: ' .. err.message .. (code and (' [' .. code .. ']') or ''), vim.log.levels.ERROR)
      else
        vim.fn.setreg(register, M.context_text(result))
        show_prepared(result)
        local n = #(result.references or {})
        notify(('%d referenced session(s); context message in register "%s'):format(n, register))
      end
      if on_done then on_done(err, result) end
    end)
  end)
end

--- Requests dsh/candidates for bufnr: callback(err, candidates).
function M.candidates(bufnr, query, callback)
  bufnr = resolve_bufnr(bufnr)
  with_client(bufnr, function(client, err)
    if not client then return callback(err, nil) end
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
    if query and query ~= '' then params.query = query end
    local target = M.buffer_target(bufnr)
    if target then params.target = target end
    client_request(client, 'dsh/candidates', params, function(e, result)
      if e then return callback(rpc_error(e), nil) end
      callback(nil, result or {})
    end, bufnr)
  end)
end

--- Requests dsh/search (sessions by what was said in them) for bufnr: callback(err, hits).
function M.search(bufnr, query, callback)
  bufnr = resolve_bufnr(bufnr)
  with_client(bufnr, function(client, err)
    if not client then return callback(err, nil) end
    client_request(client, 'dsh/search', { query = query, limit = 50 }, function(e, result)
      if e then return callback(rpc_error(e), nil) end
      callback(nil, result or {})
    end, bufnr)
  end)
end

local function insert_at(win, pos, insert_mode, text)
  local buf = api.nvim_win_get_buf(win)
  local row, col = pos[1] - 1, pos[2]
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  -- In normal mode the cursor sits ON a character: insert after it, like `p`.
  if not insert_mode and #line > 0 then
    col = col + #(vim.fn.matchstr(line:sub(col + 1), '^.'))
  end
  api.nvim_buf_set_text(buf, row, col, row, col, { text })
  if api.nvim_win_is_valid(win) then api.nvim_win_set_cursor(win, { row + 1, col + #text }) end
end

-- Runs fetch(bufnr, query, cb) (M.candidates or M.search), lets the user pick one of the sessions it
-- gives with vim.ui.select (label shown by format_item) and inserts its mention where the cursor was.
local function pick_and_insert(bufnr, query, fetch, what, none, format_item)
  local win = api.nvim_get_current_win()
  local pos = api.nvim_win_get_cursor(win)
  local insert_mode = vim.fn.mode():sub(1, 1) == 'i'
  fetch(bufnr, query, function(err, items)
    vim.schedule(function()
      if err then return notify(what .. ' failed: ' .. err.message, vim.log.levels.ERROR) end
      if #items == 0 then return notify(none, vim.log.levels.WARN) end
      vim.ui.select(items, { prompt = 'Cite dsh session', kind = 'dsh_session', format_item = format_item },
        function(choice)
          if choice then insert_at(win, pos, insert_mode, choice.mention) end
        end)
    end)
  end)
end

--- :DshMention [query] — pick a session with vim.ui.select and insert its mention at the cursor.
function M.mention_command(query, bufnr)
  pick_and_insert(resolve_bufnr(bufnr), query, M.candidates, 'candidates', 'no matching sessions', function(c)
    return ('%s  (%s)'):format(c.label, c.cwd or 'no cwd')
  end)
end

--- :DshSearch {words} — find sessions by what was said in them, pick one with vim.ui.select
--- and insert its mention at the cursor.
function M.search_command(query, bufnr)
  if not query or vim.trim(query) == '' then
    return notify('DshSearch needs words to search for', vim.log.levels.WARN)
  end
  pick_and_insert(resolve_bufnr(bufnr), query, M.search, 'search', 'no session says that', function(h)
    return ('%s  (%s)  %s'):format(h.label, h.cwd or 'no cwd', (h.snippet or ''):gsub('%*%*', ''))
  end)
end

--- Defines :DshPrepare, :DshMention and :DshSearch (also done by plugin/dsh_lsp.lua).
function M.create_commands()
  api.nvim_create_user_command('DshPrepare', function(a) M.prepare_command(a.args) end, {
    nargs = '?',
    desc = 'dsh-lsp: prepare the buffer; context message into a register',
  })
  api.nvim_create_user_command('DshMention', function(a) M.mention_command(a.args) end, {
    nargs = '?',
    desc = 'dsh-lsp: pick a dsh session and insert its mention',
  })
  api.nvim_create_user_command('DshSearch', function(a) M.search_command(a.args) end, {
    nargs = '+',
    desc = 'dsh-lsp: find a dsh session by what was said in it and insert its mention',
  })
end

return M
