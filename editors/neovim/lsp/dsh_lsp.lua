-- vim.lsp.config entry for Neovim 0.11+:  vim.lsp.enable('dsh_lsp')
-- Override with vim.lsp.config('dsh_lsp', { cmd = {...}, init_options = {...} }).
-- vim.lsp.enable() only attaches to buffers that are files (e.g. *.dshchat); chat plugins'
-- scratch buffers (buftype=nofile) need require('dsh_lsp').setup(), which reuses this client.
return {
  cmd = { 'dsh-lsp' },
  filetypes = { 'dsh-chat', 'codecompanion', 'AvanteInput', 'copilot-chat' },
  root_dir = function(bufnr, on_dir)
    on_dir(vim.fs.root(bufnr, { '.git' }) or (vim.uv or vim.loop).cwd())
  end,
  -- Same object as settings.dsh: sessionsDir, target, maxReferences, candidateLimit, maxReferenceBytes.
  init_options = vim.empty_dict(),
  settings = { dsh = vim.empty_dict() },
  -- one client for every prompt buffer, whatever its root (setup() adopts it too)
  reuse_client = function(client, config) return client.name == config.name end,
  on_attach = function(client, bufnr)
    local ok, dsh = pcall(require, 'dsh_lsp')
    if ok then dsh._on_attach(client, bufnr) end
  end,
}
