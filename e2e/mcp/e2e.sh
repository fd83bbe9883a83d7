#!/usr/bin/env bash
# End-to-end test of `dsh-lsp mcp` through the official TypeScript MCP client
# (@modelcontextprotocol/sdk, pinned in package-lock.json): the client spawns the server over
# stdio on a copy of testdata/fixtures/store-raw, lists and calls every tool, reads resources,
# sends bad input and watches notifications/resources/list_changed; answers are compared with
# the dsh-lsp command line. Idempotent: nodejs/npm come from apt when absent, the npm packages
# are installed once per lock file into $DSH_CI_DIR/mcp-e2e (default /opt/dsh-ci).
# Prints one line per check and 'N passed, M failed'; exits non-zero on any failure.
# Env: DSH_LSP_BIN (use this binary, skip the build), DSH_CI_DIR.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
deps=$ci/mcp-e2e
export PATH="$PATH:/usr/local/go/bin"

say() { printf '[mcp-e2e] %s\n' "$*" >&2; }
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

# npm ci into the cache only when the lock file (or the Node version) changed.
want="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1) $(node --version)"
if [ "$(cat "$deps/.dsh-stamp" 2>/dev/null)" != "$want" ]; then
  say "npm ci in $deps"
  rm -rf "$deps" && mkdir -p "$deps" || fail "cannot create $deps"
  cp "$here/package.json" "$here/package-lock.json" "$deps/"
  ok=
  for tries in 1 2; do
    if (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error >&2); then ok=1; break; fi
    say "npm ci failed (try $tries)"
    sleep 2
  done
  [ -n "$ok" ] || fail "npm ci failed"
  echo "$want" >"$deps/.dsh-stamp"
fi

work=$(mktemp -d /tmp/dsh-mcp-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT

bin=${DSH_LSP_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/dsh-lsp
  say "building dsh-lsp"
  (cd "$repo" && go build -o "$bin" ./cmd/dsh-lsp) || fail "go build ./cmd/dsh-lsp failed"
fi
[ -x "$bin" ] || fail "dsh-lsp binary $bin is not executable"

# A copy of the store (the list_changed check moves a session out and back).
cp -r "$repo/testdata/fixtures/store-raw" "$work/store" || fail "cannot copy the fixture store"
store_sum() { (cd "$work/store" && find . -type f -print0 | sort -z | xargs -0 sha256sum; find . | sort) | sha256sum; }
before=$(store_sum)

# XDG_CACHE_HOME: the index cache of the server (and the CLI) goes to a fresh directory.
XDG_CACHE_HOME=$work/cache NODE_PATH=$deps/node_modules env -u DSH_HOME \
  node "$here/client.js" --bin "$bin" --sessions "$work/store" | tee "$work/client.log"
rc=${PIPESTATUS[0]}
if [ "$before" != "$(store_sum)" ]; then
  echo "FAIL the store copy changed: dsh-lsp mcp must never write it"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "PASS the store copy is unchanged"
exit $rc
