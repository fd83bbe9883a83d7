" dsh_lsp.vim — dsh-lsp (mentions of dsh chat sessions) in Vim 9 through ALE.
"
" Install: ALE (Debian: apt install vim-ale), then source this file from your vimrc AFTER
" ALE is on 'runtimepath', or copy it to ~/.vim/plugin/.  Options (set before sourcing):
"   g:dsh_lsp_executable  server binary (default 'dsh-lsp')
"   g:dsh_lsp_settings    settings object: {'sessionsDir': …, 'target': {'cwd': …},
"                         'maxReferences': 3, 'candidateLimit': 50, 'maxReferenceBytes': 65536}
"   g:dsh_lsp_filetypes   filetypes that get the server (default ['dsh-chat'])
"   g:dsh_lsp_register    register filled by :DshPrepare (default 'd')
" *.dshchat files get filetype dsh-chat.  Complete a mention with @ then <C-x><C-o>
" (ALE does not auto-trigger on '@').  Commands:
"   :DshPrepare [reg]     context message into a register, readable text + context in a split
"   :DshMention [query]   pick a session (inputlist) and insert its mention after the cursor
"   :DshTarget {id} [cwd] this buffer is the chat of session {id} (dsh/setTarget)
if exists('g:loaded_dsh_lsp')
  finish
endif
let g:loaded_dsh_lsp = 1

let g:dsh_lsp_executable = get(g:, 'dsh_lsp_executable', 'dsh-lsp')
let g:dsh_lsp_settings = get(g:, 'dsh_lsp_settings', {})
let g:dsh_lsp_filetypes = get(g:, 'dsh_lsp_filetypes', ['dsh-chat'])
let g:dsh_lsp_register = get(g:, 'dsh_lsp_register', 'd')

augroup dsh_lsp
  autocmd!
  autocmd BufRead,BufNewFile *.dshchat setfiletype dsh-chat
  execute 'autocmd FileType ' . join(g:dsh_lsp_filetypes, ',') . ' setlocal omnifunc=ale#completion#OmniFunc'
augroup END

for s:ft in g:dsh_lsp_filetypes
  call ale#linter#Define(s:ft, {
  \   'name': 'dsh_lsp',
  \   'lsp': 'stdio',
  \   'language': 'dsh-chat',
  \   'executable': {buffer -> g:dsh_lsp_executable},
  \   'command': '%e',
  \   'project_root': {buffer -> getcwd()},
  \   'initialization_options': {buffer -> g:dsh_lsp_settings},
  \   'lsp_config': {buffer -> {'dsh': g:dsh_lsp_settings}},
  \   'completion_filter': 'DshLspCompletionFilter',
  \})
endfor

" ALE inserts only the text before the first '(' of a completion item (it drops function
" signatures that way), which would cut a mention `[label](dsh-session:…)` after `[label]`.
" ALE hands every LSP item to the linter's completion_filter first: remember the cut tail,
" keyed by the word and menu ALE will show, and append it when the item is accepted.
let s:tails = {}
function! DshLspCompletionFilter(buffer, item) abort
  if get(a:item, 'insertTextFormat', 1) == 1 && type(get(a:item, 'textEdit')) is v:t_dict
    let l:text = a:item.textEdit.newText
  elseif type(get(a:item, 'insertText')) is v:t_string
    let l:text = a:item.insertText
  else
    let l:text = a:item.label
  endif
  let l:word = matchstr(l:text, '\v^[^(]+')
  if !empty(l:word) && l:word isnot# l:text
    if len(s:tails) > 2000 | let s:tails = {} | endif
    let l:menu = substitute(get(a:item, 'detail', ''), '\_s\+', ' ', 'g')
    let s:tails[l:word . "\x01" . l:menu] = strpart(l:text, len(l:word))
  endif
  return 1
endfunction

function! s:CompleteDone() abort
  let l:item = v:completed_item
  if type(l:item) isnot v:t_dict || empty(l:item)
    return
  endif
  let l:word = get(l:item, 'word', '')
  let l:tail = get(s:tails, l:word . "\x01" . get(l:item, 'menu', ''), '')
  if empty(l:tail)
    return
  endif
  let l:line = getline('.')
  let l:col = col('.') - 1
  if strpart(l:line, l:col - len(l:word), len(l:word)) isnot# l:word || strpart(l:line, l:col, len(l:tail)) is# l:tail
    return
  endif
  call setline('.', strpart(l:line, 0, l:col) . l:tail . strpart(l:line, l:col))
  call cursor(line('.'), l:col + len(l:tail) + 1)
endfunction

augroup dsh_lsp_complete
  autocmd!
  autocmd CompleteDone * if index(g:dsh_lsp_filetypes, &filetype) >= 0 | call s:CompleteDone() | endif
augroup END

function! s:Uri(buffer) abort
  return ale#util#ToURI(expand('#' . a:buffer . ':p'))
endfunction

" ALE's custom requests do not send pending edits first: flush them.
function! s:Sync(buffer) abort
  for l:conn_id in keys(ale#lsp#GetConnections())
    call ale#lsp#NotifyForChanges(l:conn_id, a:buffer)
  endfor
endfunction

" Sends request {method} {params} for {buffer}; {Handler} gets the whole JSON-RPC response.
function! DshLspRequest(buffer, method, params, Handler) abort
  call s:Sync(a:buffer)
  return ale#lsp_linter#SendRequest(a:buffer, 'dsh_lsp', [0, a:method, a:params], a:Handler)
endfunction

" Text of the context message of a dsh/prepare result ('' when nothing is cited).
function! DshLspContextText(result) abort
  let l:msg = get(a:result, 'contextMessage', {})
  if type(l:msg) isnot v:t_dict
    return ''
  endif
  return join(map(copy(get(l:msg, 'content', [])), {_, b -> get(b, 'text', '')}), "\n")
endfunction

function! s:ShowPrepared(result) abort
  let l:ctx = DshLspContextText(a:result)
  let l:lines = ['# Readable text', ''] + split(get(a:result, 'content', ''), "\n", 1)
  \ + ['', '# Context message', ''] + (empty(l:ctx) ? ['(no referenced sessions)'] : split(l:ctx, "\n", 1))
  botright new
  setlocal buftype=nofile bufhidden=wipe noswapfile
  call setline(1, l:lines)
  setlocal nomodifiable filetype=markdown
  nnoremap <buffer> <nowait> q <Cmd>close<CR>
endfunction

function! s:OnPrepared(register, response) abort
  if has_key(a:response, 'error')
    let l:e = a:response.error
    let l:code = type(get(l:e, 'data')) is v:t_dict ? get(l:e.data, 'code', '') : ''
    echohl ErrorMsg | echomsg 'dsh-lsp: prepare failed: ' . get(l:e, 'message', '') . (empty(l:code) ? '' : ' [' . l:code . ']') | echohl None
    return
  endif
  let l:result = get(a:response, 'result', {})
  call setreg(a:register, DshLspContextText(l:result))
  let g:dsh_lsp_last_prepared = l:result
  call s:ShowPrepared(l:result)
endfunction

" :DshPrepare [register]
function! DshLspPrepare(...) abort
  let l:register = a:0 && !empty(a:1) ? a:1 : g:dsh_lsp_register
  let l:buffer = bufnr('')
  return DshLspRequest(l:buffer, 'dsh/prepare', {'textDocument': {'uri': s:Uri(l:buffer)}},
  \ function('s:OnPrepared', [l:register]))
endfunction

function! s:OnCandidates(buffer, response) abort
  let l:list = get(a:response, 'result', [])
  if type(l:list) isnot v:t_list || empty(l:list)
    echomsg 'dsh-lsp: no matching sessions'
    return
  endif
  let l:menu = ['Cite dsh session:']
  let l:i = 0
  for l:c in l:list
    let l:i += 1
    call add(l:menu, printf('%d. %s  (%s)', l:i, l:c.label, get(l:c, 'cwd', 'no cwd')))
  endfor
  let l:pick = exists('*DshLspPick') ? DshLspPick(l:list) : inputlist(l:menu)
  if l:pick < 1 || l:pick > len(l:list) || bufnr('') != a:buffer
    return
  endif
  let l:mention = l:list[l:pick - 1].mention
  let l:line = getline('.')
  let l:col = empty(l:line) ? 0 : col('.') + len(matchstr(l:line[col('.') - 1 :], '^.')) - 1
  call setline('.', strpart(l:line, 0, l:col) . l:mention . strpart(l:line, l:col))
  call cursor(line('.'), l:col + len(l:mention))
endfunction

" :DshMention [query]
function! DshLspMention(...) abort
  let l:buffer = bufnr('')
  let l:params = {'textDocument': {'uri': s:Uri(l:buffer)}}
  if a:0 && !empty(a:1)
    let l:params.query = a:1
  endif
  return DshLspRequest(l:buffer, 'dsh/candidates', l:params, function('s:OnCandidates', [l:buffer]))
endfunction

" :DshTarget {sessionId} [cwd]
function! DshLspSetTarget(session_id, ...) abort
  let l:target = {'sessionId': a:session_id}
  if a:0 && !empty(a:1)
    let l:target.cwd = a:1
  endif
  let l:buffer = bufnr('')
  call s:Sync(l:buffer)
  return ale#lsp_linter#SendRequest(l:buffer, 'dsh_lsp',
  \ [1, 'dsh/setTarget', {'textDocument': {'uri': s:Uri(l:buffer)}, 'target': l:target}])
endfunction

command! -nargs=? DshPrepare call DshLspPrepare(<q-args>)
command! -nargs=? DshMention call DshLspMention(<q-args>)
command! -nargs=+ DshTarget call DshLspSetTarget(<f-args>)
