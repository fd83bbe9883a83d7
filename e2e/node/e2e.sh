#!/usr/bin/env bash
# End-to-end test of the real dsh-lsp binary over stdio, driven by Microsoft's LSP client
# library (vscode-languageserver-protocol 3.18.5, pinned in package-lock.json) against a copy of
# testdata/fixtures/store-raw. Idempotent; installs what is missing (`npm ci` into
# e2e/node/node_modules when package-lock.json changed; nodejs/npm from apt if absent).
# Prints one line per check and 'N passed, M failed'; exits non-zero on any failure.
# Env: DSH_LSP_BIN (use this binary, skip the build), DSH_E2E_VERBOSE=1 (print wire values).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"

say() { printf '[node-e2e] %s\n' "$*" >&2; }
fail() { say "$*"; echo "0 passed, 1 failed"; exit 1; }

apt_install() {
  local tries
  for tries in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
         --no-install-recommends "$@" >&2; then return 0; fi
    say "apt-get install $* failed (try $tries); updating package lists"
    apt-get -o DPkg::Lock::Timeout=600 update -q >&2 || sleep 5
  done
  return 1
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "node/npm not found; installing Debian's nodejs and npm"
  apt_install nodejs npm || fail "could not install nodejs/npm"
fi

# npm ci only when the lock file (or the Node version) changed since the last install.
stamp="$here/node_modules/.dsh-e2e-stamp"
want="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1) $(node --version)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "npm ci in $here"
  ok=
  for tries in 1 2; do
    if (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2); then ok=1; break; fi
    say "npm ci failed (try $tries)"
    sleep 2
  done
  [ -n "$ok" ] || fail "npm ci failed"
  echo "$want" >"$stamp"
fi

work=$(mktemp -d /tmp/dsh-node-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT

bin=${DSH_LSP_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/dsh-lsp
  say "building dsh-lsp"
  (cd "$repo" && go build -o "$bin" ./cmd/dsh-lsp) || fail "go build ./cmd/dsh-lsp failed"
fi
[ -x "$bin" ] || fail "dsh-lsp binary $bin is not executable"

# The server must not write under the store root; the copy keeps testdata safe anyway.
cp -r "$repo/testdata/fixtures/store-raw" "$work/store" || fail "cannot copy the fixture store"
mkdir -p "$work/cache" "$work/logs"

# XDG_CACHE_HOME: the server's metadata index goes to a fresh cache, not the user's.
XDG_CACHE_HOME=$work/cache DSH_E2E_LOGDIR=$work/logs env -u DSH_HOME \
  node "$here/client.js" --bin "$bin" --sessions "$work/store" \
  --expected "$repo/testdata/fixtures/expected/store-raw.expected.json"
rc=$?
if [ $rc -ne 0 ]; then
  for f in "$work"/logs/*.log; do
    [ -s "$f" ] || continue
    say "last lines of $(basename "$f"):"
    tail -n 30 "$f" >&2
  done
fi
exit $rc
