-- CodeCompanion extension "dsh": a chat message that cites dsh sessions reaches the model as
-- dsh's context message ("## Referenced sessions", byte-identical to `dsh-lsp prepare`)
-- followed by the readable text, like the VS Code @dsh participant. A message dsh refuses
-- (unknown session, too many references, self reference, ...) is not sent: the error and
-- its dsh code are shown and the chat buffer stays editable.
--
--   require('codecompanion').setup({ extensions = { dsh = { opts = {} } } })
--
-- It needs editors/neovim on the runtimepath (this file is found as
-- codecompanion._extensions.dsh) and CodeCompanion with chat callbacks (on_before_submit,
-- on_submitted); tested with olimorris/codecompanion.nvim f1afd025 (2026-08-08).
local M = {}

local api = vim.api

local defaults = {
  -- Show "dsh: N referenced session(s) sent as context" after each such message.
  notify_references = true,
}

local config = vim.deepcopy(defaults)

-- Chat objects with callbacks registered (weak keys: chats are garbage collected).
local registered = setmetatable({}, { __mode = 'k' })
-- The prepare result of a chat's message being submitted (on_before_submit to on_submitted).
local pending = setmetatable({}, { __mode = 'k' })

local function notify(msg, level)
  vim.notify('dsh: ' .. msg, level or vim.log.levels.INFO, { title = 'CodeCompanion' })
end

-- "message [SESSION_REFERENCE_…]" for an error of dsh_lsp.prepare_text.
local function error_text(err)
  local code = type(err) == 'table' and type(err.data) == 'table' and err.data.code or nil
  local msg = type(err) == 'table' and err.message or tostring(err)
  return msg .. (code and (' [' .. code .. ']') or '')
end

-- The text of the user message about to be submitted (what CodeCompanion will send).
local function pending_text(chat)
  -- `interactions` was called `strategies` in CodeCompanion releases before 2026
  local ok, parser = pcall(require, 'codecompanion.interactions.chat.parser')
  if not ok then ok, parser = pcall(require, 'codecompanion.strategies.chat.parser') end
  if not ok then return nil end
  local ok2, msg = pcall(parser.messages, chat, chat.header_line)
  return ok2 and type(msg) == 'table' and msg.content or nil
end

-- Cheap test before asking the server: text without a dsh-session URI cites nothing.
local function cites_sessions(text) return type(text) == 'string' and text:find('dsh-session:', 1, true) ~= nil end

local function prepare(chat, text)
  local dsh = require('dsh_lsp')
  return dsh.prepare_text_sync(text, dsh.buffer_target(chat.bufnr))
end

-- The context messages this extension added to a chat's history.
local function is_context(m) return type(m) == 'table' and type(m._meta) == 'table' and m._meta.tag == 'dsh_context' end

-- on_before_submit: prepare the message; refuse the submission when dsh refuses the message,
-- else add dsh's context message (hidden in the buffer) so the model reads it first.
local function before_submit(chat)
  -- A context message left last by a submission that another callback cancelled after ours.
  if is_context(chat.messages[#chat.messages]) then table.remove(chat.messages) end
  pending[chat] = nil
  local text = pending_text(chat)
  if not cites_sessions(text) then return end
  local res, err = prepare(chat, text)
  if err or type(res) ~= 'table' then
    notify('message not sent: ' .. error_text(err or { message = 'no prepare result' }), vim.log.levels.ERROR)
    return false -- CodeCompanion cancels the submission and restores the buffer
  end
  local ctx = require('dsh_lsp').context_text(res)
  if ctx == '' then return end
  chat:add_message({ role = 'user', content = ctx }, { visible = false, _meta = { tag = 'dsh_context' } })
  pending[chat] = { text = text, result = res }
end

-- on_submitted: the user message CodeCompanion just added (the last user message) carries the
-- raw mentions; the model gets dsh's readable text instead, in the history and in the request.
local function submitted(chat, data)
  local p = pending[chat]
  pending[chat] = nil
  if not p then return end
  local idx
  for i = #chat.messages, 1, -1 do
    local m = chat.messages[i]
    if m.role == 'user' and not is_context(m) then
      idx = i
      break
    end
  end
  if not idx then return end
  local msg = chat.messages[idx]
  local readable = p.result.content
  if msg.content ~= p.text then
    -- CodeCompanion rewrote the text (tools, editor context, a prompt_decorator): prepare
    -- what it will send; the references are the same mentions.
    local res = prepare(chat, msg.content)
    readable = res and res.content or msg.content
  end
  msg.content = readable
  local payload = type(data) == 'table' and data.payload
  if payload and type(payload.messages) == 'table' and type(payload.messages[idx]) == 'table' then
    payload.messages[idx].content = readable
  end
  if config.notify_references then
    notify(('%d referenced session(s) sent as context'):format(#(p.result.references or {})))
  end
end

--- Registers the dsh callbacks on a CodeCompanion chat (done for every new chat by setup()).
function M.register(chat)
  if type(chat) ~= 'table' or registered[chat] then return end
  registered[chat] = true
  chat:add_callback('on_before_submit', before_submit)
  chat:add_callback('on_submitted', submitted)
end

--- Called by CodeCompanion for `extensions = { dsh = { opts = {...} } }`.
function M.setup(opts)
  config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  local group = api.nvim_create_augroup('dsh_lsp_codecompanion', { clear = true })
  api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'CodeCompanionChatCreated',
    desc = 'dsh: send the referenced sessions with chat messages',
    callback = function(ev)
      local bufnr = ev.data and ev.data.bufnr
      local ok, chat = pcall(function() return require('codecompanion').buf_get_chat(bufnr) end)
      if ok and chat then M.register(chat) end
    end,
  })
  -- Chats opened before the extension loaded.
  local ok, cc = pcall(require, 'codecompanion')
  if ok then
    for _, b in ipairs(_G.codecompanion_buffers or {}) do
      local ok2, chat = pcall(cc.buf_get_chat, b)
      if ok2 and chat then M.register(chat) end
    end
  end
end

--- Functions available as require('codecompanion').extensions.dsh.
M.exports = {
  register = M.register,
}

return M
