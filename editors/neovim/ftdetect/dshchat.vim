" *.dshchat prompt files are dsh chats: filetype dsh-chat (attached by dsh_lsp).
autocmd BufRead,BufNewFile *.dshchat setfiletype dsh-chat
