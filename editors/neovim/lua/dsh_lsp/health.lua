-- :checkhealth dsh_lsp — binary, version, session store root, session count, running client.
local M = {}

-- The health API moved twice: require('health') (0.7), vim.health.report_* (0.8/0.9),
-- vim.health.start/ok/... (0.10+, report_* removed later).
local function reporter()
  local h = vim.health
  if h and h.start then return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info } end
  if not (h and h.report_start) then h = require('health') end
  return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
end

--- Store root the server will read, in the contract's order: the sessionsDir setting
--- (setup()'s sessions_dir, or vim.lsp.config init_options/settings), $DSH_HOME/sessions
--- (DSH_HOME set and not blank), ~/.dsh/sessions. cmd_env: the client's environment.
function M.store_root(settings, cmd_env)
  if type(settings.sessionsDir) == 'string' and settings.sessionsDir ~= '' then
    return require('dsh_lsp').normalize_dir(settings.sessionsDir), 'sessionsDir setting'
  end
  local home = (cmd_env and cmd_env.DSH_HOME) or vim.env.DSH_HOME
  if home and vim.trim(home) ~= '' then return home .. '/sessions', '$DSH_HOME' end
  return vim.fn.expand('~') .. '/.dsh/sessions', 'default'
end

local function run(argv)
  local out = vim.fn.system(argv)
  return vim.v.shell_error, out
end

function M.check()
  local r = reporter()
  local dsh = require('dsh_lsp')
  r.start('dsh-lsp')

  if vim.fn.has('nvim-0.7') == 1 then
    r.ok('Neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor))
  else
    r.error('Neovim 0.7 or later is required')
  end

  local cfg = dsh.client_config()
  local exe = dsh.server_path(cfg)
  local path = vim.fn.exepath(exe)
  if path == '' then
    r.error(('server binary %q not found'):format(exe), {
      'Install it with: go install github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp@latest',
      'or set cmd = { "/path/to/dsh-lsp" } in require("dsh_lsp").setup() or vim.lsp.config("dsh_lsp", {...})',
    })
    return
  end
  r.ok('server binary: ' .. path)

  local code, out = run({ path, 'version' })
  if code == 0 then
    local ok, v = pcall(vim.json.decode, out)
    r.ok('version: ' .. ((ok and type(v) == 'table' and v.version) and (tostring(v.name or 'dsh-lsp') .. ' ' .. v.version) or vim.trim(out)))
  else
    r.error('`dsh-lsp version` failed: ' .. vim.trim(out))
  end

  local root, origin = M.store_root(dsh.settings(), cfg.cmd_env)
  if vim.fn.isdirectory(root) == 0 then
    r.warn(('session store %s (%s) does not exist yet'):format(root, origin),
      { 'dsh creates it on its first session; or set sessions_dir in setup() (sessionsDir in vim.lsp.config)' })
  elseif not (vim.uv or vim.loop).fs_access(root, 'RX') then
    r.error(('session store %s (%s) is not readable'):format(root, origin))
  else
    r.ok(('session store: %s (%s)'):format(root, origin))
    local ccode, cout = run({ path, 'candidates', '--sessions', root, '--limit', '1000000' })
    local ok, list = pcall(vim.json.decode, cout)
    if ccode == 0 and ok and type(list) == 'table' then
      r.ok(('%d session(s) in the store'):format(#list))
    else
      r.error('`dsh-lsp candidates` failed: ' .. vim.trim(cout))
    end
  end

  local client = dsh.get_client()
  if client then
    local bufs = vim.tbl_count(client.attached_buffers or {})
    r.ok(('client running (id %d), attached to %d buffer(s)'):format(client.id, bufs))
  else
    r.info('no dsh-lsp client running (it starts with the first prompt buffer)')
  end
  r.info('prompt filetypes: ' .. table.concat(cfg.filetypes or {}, ', '))
end

return M
