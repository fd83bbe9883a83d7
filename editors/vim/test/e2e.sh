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
say() { printf '[vim-e2e] %s\n' "$*" >&2; }
fail() { say "$*"; echo "0 passed, 1 failed"; exit 1; }

apt_install() {
  local tries
  for tries in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
         --no-install-recommends "$@" >"$ci/apt-vim.log" 2>&1; then return 0; fi
    say "apt-get install $* failed (try $tries); updating package lists"
    apt-get -o DPkg::Lock::Timeout=600 update -q >>"$ci/apt-vim.log" 2>&1 || sleep 5
  done
  cat "$ci/apt-vim.log" >&2
  return 1
}

need=()
vim --version 2>/dev/null | head -1 | grep -q 'Vi IMproved 9' || need+=(vim)
[ -f /usr/share/vim-ale/plugin/ale.vim ] || need+=(vim-ale)
command -v tmux >/dev/null || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}" || fail "could not install ${need[*]}"; fi
say "$(vim --version | head -1); ALE $(dpkg-query -W -f='${Version}' vim-ale 2>/dev/null)"

work=$(mktemp -d /tmp/dsh-vim-e2e.XXXXXX)
sock=dsh-vim-e2e-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT
bin=${DSH_LSP_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/dsh-lsp
  say "building dsh-lsp"
  (cd "$repo" && go build -o "$bin" ./cmd/dsh-lsp) || fail "go build ./cmd/dsh-lsp failed"
fi
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
line=$(grep -E '^vim: [0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
[ -n "$line" ] || fail "no result line (exit $rc)"
p=$(sed -n 's/^vim: \([0-9]*\) passed.*/\1/p' <<<"$line")
f=$(sed -n 's/.* \([0-9]*\) failed$/\1/p' <<<"$line")
if [ "$rc" != 0 ] && [ "$f" -eq 0 ]; then f=1; fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
