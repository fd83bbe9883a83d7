#!/usr/bin/env bash
# End-to-end test of dsh-lsp in Emacs 30 + built-in Eglot (batch), with the shipped
# editors/emacs/dsh-lsp.el. Installs emacs-nox from bookworm-backports if needed, using a
# private apt source list under $DSH_CI_DIR (the system's apt sources stay untouched).
# Prints 'N passed, M failed'; exits non-zero on failure. Env: DSH_CI_DIR, DSH_LSP_BIN.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
mkdir -p "$ci"
e2e_tag=emacs-e2e
# shellcheck source=../../../e2e/lib.sh
. "$repo/e2e/lib.sh"

emacs_major() { emacs --version 2>/dev/null | sed -n '1s/^GNU Emacs \([0-9]*\).*/\1/p'; }

# apt_uri SUITE: the machine's own apt source for SUITE (shared with the Neovim installer).
# shellcheck source=../../neovim/test/apt-mirror.sh
. "$here/../../neovim/test/apt-mirror.sh"

install_emacs() {
  # A private apt state: the machine's own sources (whatever mirror they name), plus
  # bookworm-backports from the mirror that serves bookworm; /etc/apt stays untouched.
  local st=$ci/apt-bookworm-backports mirror f
  mirror=$(apt_uri bookworm) || { say "no apt source for Debian bookworm in /etc/apt/sources.list{,.d}"; return 1; }
  rm -rf "$st/parts" && mkdir -p "$st/lists/partial" "$st/parts"
  : >"$st/sources.list"
  [ -r /etc/apt/sources.list ] && cp /etc/apt/sources.list "$st/sources.list"
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] && cp "$f" "$st/parts/"
  done
  if ! apt_uri bookworm-backports >/dev/null; then
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-backports main" \
      >"$st/parts/zz-dsh-backports.list"
  fi
  say "bookworm-backports from $mirror"
  local apto=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts="$st/parts"
              -o Dir::State::Lists="$st/lists" -o DPkg::Lock::Timeout=600)
  say "installing emacs-nox from bookworm-backports"
  local try
  for try in 1 2 3; do   # retried: other jobs may hold apt's cache lock for a moment
    if apt-get "${apto[@]}" update -q >"$ci/apt-emacs.log" 2>&1 &&
       DEBIAN_FRONTEND=noninteractive apt-get "${apto[@]}" install -y -q --no-install-recommends \
         -t bookworm-backports emacs-nox >>"$ci/apt-emacs.log" 2>&1; then
      return 0
    fi
    say "apt failed (try $try)"; sleep 10
  done
  cat "$ci/apt-emacs.log" >&2
  return 1
}

if [ "$(emacs_major)" != 30 ]; then install_emacs || fail "could not install Emacs 30"; fi
[ "$(emacs_major)" = 30 ] || fail "Emacs 30 not available: $(emacs --version 2>&1 | head -1)"
say "$(emacs --version | head -1)"

make_work emacs-e2e
build_bin
cp -r "$repo/testdata/fixtures/store-raw" "$work/store"
mkdir -p "$work/run" "$work/home"

HOME=$work/home DSH_LSP_BIN=$bin DSH_STORE=$work/store DSH_WORK=$work/run DSH_EL_DIR=$repo/editors/emacs \
DSH_EXPECTED=$repo/testdata/fixtures/expected/store-raw.expected.json \
  timeout 180 emacs -Q --batch -l "$here/e2e.el" >"$work/out.txt" 2>"$work/err.txt" </dev/null
rc=$?
cat "$work/out.txt"
if ! read_result "$work/out.txt" emacs "$rc"; then
  say "no result line (exit $rc); stderr:"; tail -30 "$work/err.txt" >&2
  echo "0 passed, 1 failed"; exit 1
fi
[ "$f" -eq 0 ] || { say "stderr (last 30 lines):"; tail -30 "$work/err.txt" >&2; }
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
