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
e2e_tag=node-e2e
# shellcheck source=../lib.sh
. "$repo/e2e/lib.sh"

need_node
npm_ci_cached "$here" "$here"
make_work node-e2e
build_bin

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
