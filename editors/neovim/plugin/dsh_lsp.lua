-- Commands are available before setup(); they start the server on first use.
if vim.g.loaded_dsh_lsp then return end
vim.g.loaded_dsh_lsp = 1
vim.api.nvim_create_user_command('DshPrepare', function(a) require('dsh_lsp').prepare_command(a.args) end,
  { nargs = '?', desc = 'dsh-lsp: prepare the buffer; context message into a register' })
vim.api.nvim_create_user_command('DshMention', function(a) require('dsh_lsp').mention_command(a.args) end,
  { nargs = '?', desc = 'dsh-lsp: pick a dsh session and insert its mention' })
vim.api.nvim_create_user_command('DshSearch', function(a) require('dsh_lsp').search_command(a.args) end,
  { nargs = '+', desc = 'dsh-lsp: find a dsh session by what was said in it and insert its mention' })
-- Whatever started the client (setup(), or vim.lsp.enable with an on_attach of the user's
-- own in vim.lsp.config), its buffers get completion and the omnifunc (0.8+: LspAttach).
if vim.fn.has('nvim-0.8') == 1 then
  vim.api.nvim_create_autocmd('LspAttach', {
    group = vim.api.nvim_create_augroup('dsh_lsp_attach', { clear = true }),
    desc = 'dsh-lsp: set up prompt buffers',
    callback = function(ev)
      local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == 'dsh_lsp' then require('dsh_lsp')._on_attach(client, ev.buf) end
    end,
  })
end
