-- Commands are available before setup(); they start the server on first use.
if vim.g.loaded_dsh_lsp then return end
vim.g.loaded_dsh_lsp = 1
vim.api.nvim_create_user_command('DshPrepare', function(a) require('dsh_lsp').prepare_command(a.args) end,
  { nargs = '?', desc = 'dsh-lsp: prepare the buffer; context message into a register' })
vim.api.nvim_create_user_command('DshMention', function(a) require('dsh_lsp').mention_command(a.args) end,
  { nargs = '?', desc = 'dsh-lsp: pick a dsh session and insert its mention' })
