# Shared by the end-to-end suites (e2e/node, e2e/mcp, editors/{emacs,vim,neovim}/test):
# sourced, not run. Each suite sets e2e_tag (its log prefix, e.g. "vim-e2e") and, to keep
# apt's output out of the console, e2e_apt_log (a file; shown only when apt fails) first.
# What it gives: say, fail, apt_install, need_node, npm_ci_cached, make_work, build_bin and
# read_result. The suites print 'N passed, M failed' as their last line: fail does too.
# shellcheck shell=bash

export PATH="$PATH:/usr/local/go/bin"
e2e_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '[%s] %s\n' "$e2e_tag" "$*" >&2; }
fail() { say "$*"; echo "0 passed, 1 failed"; exit 1; }

# apt_install PKG...: apt-get install, retried with fresh package lists (other jobs may hold
# apt's lock or the lists may be stale). Output goes to $e2e_apt_log when set, else stderr.
apt_install() {
  local tries log=${e2e_apt_log:-/dev/stderr}
  [ -n "${e2e_apt_log:-}" ] && : >"$log"
  for tries in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
         --no-install-recommends "$@" >>"$log" 2>&1; then return 0; fi
    say "apt-get install $* failed (try $tries); updating package lists"
    apt-get -o DPkg::Lock::Timeout=600 update -q >>"$log" 2>&1 || sleep 5
  done
  [ -n "${e2e_apt_log:-}" ] && cat "$log" >&2
  return 1
}

# need_node: Debian's nodejs and npm unless node and npm are on PATH.
need_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    say "node/npm not found; installing Debian's nodejs and npm"
    apt_install nodejs npm || fail "could not install nodejs/npm"
  fi
}

# npm_ci_cached SRC DEST: `npm ci` of SRC's package.json and package-lock.json into DEST
# (SRC itself, or a cache directory they are copied to), only when the lock file or the Node
# version changed since the last install there.
npm_ci_cached() {
  local src=$1 dest=$2 want tries ok=
  want="$(sha256sum "$src/package-lock.json" | cut -d' ' -f1) $(node --version)"
  [ "$(cat "$dest/node_modules/.dsh-stamp" 2>/dev/null)" = "$want" ] && return 0
  say "npm ci in $dest"
  if [ "$dest" != "$src" ]; then
    rm -rf "$dest" && mkdir -p "$dest" || fail "cannot create $dest"
    cp "$src/package.json" "$src/package-lock.json" "$dest/"
  fi
  for tries in 1 2; do
    if (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2); then ok=1; break; fi
    say "npm ci failed (try $tries)"
    sleep 2
  done
  [ -n "$ok" ] || fail "npm ci failed"
  echo "$want" >"$dest/node_modules/.dsh-stamp"
}

# make_work NAME: a fresh temporary directory in $work, removed on exit.
make_work() {
  work=$(mktemp -d "/tmp/dsh-$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}

# build_bin: $bin is DSH_LSP_BIN (a binary built by the caller, say run-tests.sh), else
# dsh-lsp built from this checkout into $work.
build_bin() {
  bin=${DSH_LSP_BIN:-}
  if [ -z "$bin" ]; then
    bin=$work/dsh-lsp
    say "building dsh-lsp"
    (cd "$e2e_repo" && go build -o "$bin" ./cmd/dsh-lsp) || fail "go build ./cmd/dsh-lsp failed"
  fi
  [ -x "$bin" ] || fail "dsh-lsp binary $bin is not executable"
}

# read_result FILE PREFIX RC: sets p and f from FILE's last 'PREFIX: N passed, M failed' line
# (PREFIX an extended regular expression); a run that exited non-zero (RC) without a
# failure counts one. Returns 1 when there is no such line.
read_result() {
  local line
  line=$(grep -E "^$2: [0-9]+ passed, [0-9]+ failed\$" "$1" | tail -1)
  [ -n "$line" ] || return 1
  p=$(sed -n 's/.*: \([0-9]*\) passed.*/\1/p' <<<"$line")
  f=$(sed -n 's/.* \([0-9]*\) failed$/\1/p' <<<"$line")
  if [ "$3" != 0 ] && [ "$f" -eq 0 ]; then f=1; fi
}
