#!/usr/bin/env bash
# End-to-end test of dsh-lsp in Vim 9 + ALE (Debian vim-ale) with the shipped
# editors/vim/dsh_lsp.vim. Vim runs in a private tmux server (ALE completes only in Insert
# mode, which needs a terminal); e2e.vim types and checks from timers, no human involved.
# Installs vim, vim-ale and tmux if missing. Prints 'N passed, M failed'; exits non-zero on
# failure. Env: DSH_CI_DIR, DSH_LSP_BIN.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
mkdir -p "$ci"
e2e_tag=vim-e2e
e2e_apt_log=$ci/apt-vim.log
# shellcheck source=../../../e2e/lib.sh
. "$repo/e2e/lib.sh"

need=()
vim --version 2>/dev/null | head -1 | grep -q 'Vi IMproved 9' || need+=(vim)
[ -f /usr/share/vim-ale/plugin/ale.vim ] || need+=(vim-ale)
command -v tmux >/dev/null || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}" || fail "could not install ${need[*]}"; fi
say "$(vim --version | head -1); ALE $(dpkg-query -W -f='${Version}' vim-ale 2>/dev/null)"

make_work vim-e2e
sock=dsh-vim-e2e-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT
build_bin
cp -r "$repo/testdata/fixtures/store-raw" "$work/store"
mkdir -p "$work/run" "$work/home"
out=$work/out.txt

cat >"$work/run.sh" <<EOF
#!/bin/sh
export HOME='$work/home' TERM=xterm-256color
export DSH_LSP_BIN='$bin' DSH_STORE='$work/store' DSH_WORK='$work/run' DSH_OUT='$out'
export DSH_VIM_DIR='$repo/editors/vim' DSH_EXPECTED='$repo/testdata/fixtures/expected/store-raw.expected.json'
cd '$work/run'
vim -N -u NONE -i NONE -n -S '$here/e2e.vim'
echo "exit \$?" > '$work/vim-exit.tmp' && mv '$work/vim-exit.tmp' '$work/vim-exit'   # atomic: polled below
EOF
chmod +x "$work/run.sh"
tmux -L "$sock" -f /dev/null new-session -d -s e2e -x 160 -y 40 "$work/run.sh" || fail "tmux could not start"

for _ in $(seq 1 1800); do   # 180 s
  [ -f "$work/vim-exit" ] && break
  sleep 0.1
done
if [ ! -f "$work/vim-exit" ]; then
  say "Vim did not finish in 180 s; screen:"
  tmux -L "$sock" capture-pane -p -t e2e >&2 || true
  [ -f "$out.partial" ] && cat "$out.partial"
  echo "0 passed, 1 failed"; exit 1
fi
rc=$(sed -n 's/^exit //p' "$work/vim-exit")
[ -f "$out" ] || { [ -f "$out.partial" ] && cat "$out.partial"; fail "no report from Vim (exit $rc)"; }
cat "$out"
read_result "$out" vim "$rc" || fail "no result line (exit $rc)"
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
