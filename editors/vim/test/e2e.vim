" End-to-end test of dsh-lsp in Vim 9 + ALE with the shipped editors/vim/dsh_lsp.vim.
" Runs in a real terminal (e2e.sh starts it in tmux: ALE completes only in Insert mode),
" typing like a user from timers. Env: DSH_LSP_BIN, DSH_STORE (a COPY of
" testdata/fixtures/store-raw), DSH_EXPECTED, DSH_VIM_DIR (editors/vim), DSH_WORK, DSH_OUT.
" Writes the report and 'vim: N passed, M failed' to $DSH_OUT, then quits.
set nocompatible
set noswapfile nobackup noshowmode shortmess+=c completeopt=menuone,noinsert hidden ttimeout ttimeoutlen=10
let s:t0 = reltime()
let s:lines = []
let s:passed = 0
let s:failed = 0
function! s:Log(msg) abort
  " one report line per text line (writefile() would turn a newline inside an item into NUL)
  let l:parts = split(a:msg, "\n", 1)
  call add(s:lines, printf('vim %6dms %s', float2nr(reltimefloat(reltime(s:t0)) * 1000), l:parts[0]))
  call extend(s:lines, l:parts[1:])
  call writefile(s:lines, $DSH_OUT . '.partial')
endfunction
function! s:Check(ok, what, ...) abort
  if a:ok | let s:passed += 1 | else | let s:failed += 1 | endif
  call s:Log((a:ok ? 'PASS ' : 'FAIL ') . a:what . (!a:ok && a:0 ? "\n      " . a:1 : ''))
  return a:ok
endfunction
function! s:Eq(got, want, what) abort
  return s:Check(a:got ==# a:want, a:what, 'got:  ' . string(a:got) . "\n      want: " . string(a:want))
endfunction
function! s:Finish() abort
  call add(s:lines, printf('vim: %d passed, %d failed', s:passed, s:failed))
  call writefile(s:lines, $DSH_OUT)
  execute s:failed ? 'cquit!' : 'qall!'
endfunction

let s:A = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001'
let s:E = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0005'
let s:proj = '/home/alice/proj'

function! s:Cli(args) abort
  let l:out = system(join(map([$DSH_LSP_BIN] + a:args, 'shellescape(v:val)')))
  if v:shell_error
    throw 'dsh-lsp ' . join(a:args) . ' failed: ' . l:out
  endif
  return json_decode(l:out)
endfunction
function! s:Find(list, id) abort
  for l:c in a:list
    if l:c.sessionId is# a:id | return l:c | endif
  endfor
  return {}
endfunction

" reference values: expected.json (byte-exact prompt) and the CLI (canonical mentions, order)
let s:expected_prompt = ''
for s:s in json_decode(join(readfile($DSH_EXPECTED), "\n")).sessions
  if s:s.header.id is# s:A
    for s:r in s:s.references
      if s:r.maxReferenceBytes == 65536 | let s:expected_prompt = s:r.prompt | endif
    endfor
  endif
endfor
let s:cands = s:Cli(['candidates', '--sessions', $DSH_STORE, '--target-cwd', s:proj])
let s:mention_a = s:Find(s:cands, s:A).mention
let s:mention_e = s:Find(s:cands, s:E).mention
let s:label_a = s:Find(s:cands, s:A).label

" ALE from Debian's vim-ale, then the shipped configuration
let &runtimepath = '/usr/share/vim-ale,' . &runtimepath . ',/usr/share/vim-ale/after'
filetype plugin on
let g:ale_lint_delay = 0
let g:ale_history_enabled = 0
let g:ale_echo_cursor = 0
let g:ale_set_signs = 0
let g:ale_virtualtext_cursor = 'disabled'
runtime plugin/ale.vim
let g:dsh_lsp_executable = $DSH_LSP_BIN
let g:dsh_lsp_settings = {'sessionsDir': $DSH_STORE, 'target': {'cwd': s:proj}}
execute 'source ' . fnameescape($DSH_VIM_DIR . '/dsh_lsp.vim')

call writefile(['see '], $DSH_WORK . '/prompt.dshchat')
execute 'edit ' . fnameescape($DSH_WORK . '/prompt.dshchat')

function! s:Conn() abort
  for l:c in values(ale#lsp#GetConnections())
    if get(l:c, 'initialized', 0) | return l:c | endif
  endfor
  return {}
endfunction
function! s:Loclist(code) abort
  let l:ll = get(get(g:ale_buffer_info, bufnr(''), {}), 'loclist', [])
  return empty(a:code) ? l:ll : filter(copy(l:ll), {_, v -> get(v, 'code', '') is# a:code})
endfunction
function! s:Relint() abort
  call ale#Queue(0)
endfunction

" ------------------------------------------------------------------ steps (polled by a timer)
" Each step: a function that returns 1 when done; 'timeout' fails it after N ms.
let s:steps = []
function! s:Step(name, fn, timeout) abort
  call add(s:steps, {'name': a:name, 'fn': a:fn, 'timeout': a:timeout})
endfunction

function! s:StartLinting() abort
  call s:Relint()
  return 1
endfunction
call s:Step('start', function('s:StartLinting'), 1000)

function! s:Connected() abort
  let l:c = s:Conn()
  if empty(l:c) | return 0 | endif
  call s:Check(1, 'filetype dsh-chat and ALE connected to dsh-lsp (' . &filetype . ')')
  call s:Check(index(get(l:c.capabilities, 'completion_trigger_characters', []), '@') >= 0,
  \ 'server triggerCharacters contain @', string(l:c.capabilities))
  return 1
endfunction
call s:Step('connect', function('s:Connected'), 10000)

function! s:TypeAt() abort
  call setline(1, 'see ')
  call feedkeys("A@\<C-x>\<C-o>", 't')
  return 1
endfunction
call s:Step('type @', function('s:TypeAt'), 1000)

let s:pick = -1
function! s:MenuOpen() abort
  let l:ci = complete_info(['items', 'selected'])
  if empty(l:ci.items) | return 0 | endif
  " ALE keeps no label: an item shows the label inside its word (text after '@') or info
  let l:ok = len(l:ci.items) == len(s:cands)
  let l:i = 0
  for l:it in l:ci.items
    let l:c = get(s:cands, l:i, {})
    if empty(l:c) || (stridx(l:it.word, l:c.label) < 0 && stridx(get(l:it, 'info', ''), l:c.sessionId) < 0)
      let l:ok = 0
    endif
    if stridx(l:it.word, s:label_a) >= 0 && s:pick < 0 | let s:pick = l:i | endif
    let l:i += 1
  endfor
  call s:Check(l:ok, '<C-x><C-o> menu lists the candidates in dsh order',
  \ string(map(copy(l:ci.items), 'v:val.word')) . ' vs ' . string(map(copy(s:cands), 'v:val.label')))
  if !s:Check(s:pick >= 0, 'menu has ' . s:label_a)
    call feedkeys("\<C-e>\<Esc>", 't')
    return 1
  endif
  call feedkeys(repeat("\<C-n>", s:pick - l:ci.selected) . "\<C-y>\<Esc>", 't')
  return 1
endfunction
call s:Step('menu', function('s:MenuOpen'), 8000)

function! s:Accepted() abort
  if mode() isnot# 'n' | return 0 | endif
  call s:Eq(getline(1, '$'), ['see ' . s:mention_a], 'accepting inserts exactly the canonical mention')
  return 1
endfunction
call s:Step('accepted', function('s:Accepted'), 3000)

" diagnostics: a malformed mention after multibyte text, then fixed
function! s:Broken() abort
  call setline(1, 'café 🙂 see @[x](dsh-session:not-canonical) ok')
  call s:Relint()
  return 1
endfunction
function! s:DiagShown(code, what) abort
  if empty(s:Loclist(a:code)) | return 0 | endif
  call s:Check(1, a:what . ': ' . a:code . ' diagnostic appears')
  return 1
endfunction
function! s:Fix(line) abort
  call setline(1, a:line)
  call s:Relint()
  return 1
endfunction
function! s:Cleared(what) abort
  if !empty(s:Loclist('')) | return 0 | endif
  call s:Check(1, a:what . ': diagnostics clear after the fix')
  return 1
endfunction
call s:Step('broken', function('s:Broken'), 1000)
call s:Step('invalid-uri', function('s:DiagShown', ['invalid-uri', 'ale']), 6000)
call s:Step('fix', function('s:Fix', ['café 🙂 see ' . s:mention_a . ' ok']), 1000)
call s:Step('cleared', function('s:Cleared', ['ale']), 6000)

" :DshTarget makes E this buffer's own session: mentioning it is a self reference
function! s:Target() abort
  execute 'DshTarget ' . s:E . ' ' . s:proj
  call setline(1, 'compare ' . s:mention_e)
  call s:Relint()
  return 1
endfunction
call s:Step('target', function('s:Target'), 1000)
call s:Step('self-reference', function('s:DiagShown', ['self-reference', 'ale :DshTarget']), 6000)
call s:Step('fix2', function('s:Fix', ['compare ' . s:mention_a]), 1000)
call s:Step('cleared2', function('s:Cleared', ['ale :DshTarget']), 6000)

" :DshPrepare → register d + split
function! s:Prepare() abort
  call setreg('d', 'old')
  unlet! g:dsh_lsp_last_prepared
  let s:prep_buf = bufnr('')
  DshPrepare
  return 1
endfunction
function! s:Prepared() abort
  if !exists('g:dsh_lsp_last_prepared') | return 0 | endif
  " ALE sends the buffer text with its final newline
  call s:Eq(get(g:dsh_lsp_last_prepared, 'content', ''), 'compare @' . s:label_a . "\n", ':DshPrepare readable text')
  call s:Check(getreg('d') ==# s:expected_prompt,
  \ ':DshPrepare register d holds the exact context message (expected.json, budget 65536)', getreg('d')[:200])
  call s:Check(stridx(join(getline(1, '$'), "\n"), s:expected_prompt) >= 0, ':DshPrepare split shows the context')
  close
  return 1
endfunction
call s:Step('prepare', function('s:Prepare'), 1000)
call s:Step('prepared', function('s:Prepared'), 8000)

" :DshMention with a picker that chooses A
function! DshLspPick(list) abort
  let l:i = 0
  for l:c in a:list
    let l:i += 1
    if l:c.sessionId is# s:A | return l:i | endif
  endfor
  return 0
endfunction
function! s:Mention() abort
  call setline(1, 'x')
  call cursor(1, 1)
  DshMention
  return 1
endfunction
function! s:Mentioned() abort
  if getline(1) is# 'x' | return 0 | endif
  call s:Eq(getline(1, '$'), ['x' . s:mention_a], ':DshMention inserts the mention after the cursor')
  return 1
endfunction
call s:Step('mention', function('s:Mention'), 1000)
call s:Step('mentioned', function('s:Mentioned'), 8000)

let s:cur = 0
let s:since = reltime()
function! s:Tick(timer) abort
  if s:cur >= len(s:steps)
    call timer_stop(a:timer)
    call s:Finish()
    return
  endif
  let l:st = s:steps[s:cur]
  try
    let l:done = l:st.fn()
  catch
    call s:Check(0, 'step ' . l:st.name . ' raised ' . v:exception . ' at ' . v:throwpoint)
    let l:done = 1
  endtry
  if !l:done && reltimefloat(reltime(s:since)) * 1000 > l:st.timeout
    call s:Check(0, 'step ' . l:st.name . ' timed out', 'line=' . string(getline(1, '$')) . ' mode=' . mode()
    \ . ' loclist=' . string(s:Loclist('')))
    if mode() isnot# 'n' | call feedkeys("\<C-e>\<Esc>", 't') | endif
    let l:done = 1
  endif
  if l:done
    let s:cur += 1
    let s:since = reltime()
  endif
endfunction
call timer_start(20, function('s:Tick'), {'repeat': -1})
