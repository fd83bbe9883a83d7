#!/usr/bin/env bash
# End-to-end test of `dsh-lsp mcp` through the official TypeScript MCP client
# (@modelcontextprotocol/sdk, pinned in package-lock.json): the client spawns the server over
# stdio on a copy of testdata/fixtures/store-raw, lists and calls every tool, reads resources,
# sends bad input and watches notifications/resources/list_changed; answers are compared with
# the dsh-lsp command line. Then Claude Code (npm, pinned below) registers the server as the
# README says and its health check connects to it. Idempotent: nodejs/npm come from apt when
# absent, the npm packages are installed once into $DSH_CI_DIR/mcp-e2e (per lock file) and
# $DSH_CI_DIR/claude-code (default DSH_CI_DIR: /opt/dsh-ci).
# Prints one line per check and 'N passed, M failed'; exits non-zero on any failure.
# Env: DSH_LSP_BIN (use this binary, skip the build), DSH_CI_DIR, DSH_E2E_SKIP_CLAUDE=1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
deps=$ci/mcp-e2e
e2e_tag=mcp-e2e
# shellcheck source=../lib.sh
. "$repo/e2e/lib.sh"

need_node
npm_ci_cached "$here" "$deps"
make_work mcp-e2e
build_bin

# A copy of the store (the list_changed check moves a session out and back).
cp -r "$repo/testdata/fixtures/store-raw" "$work/store" || fail "cannot copy the fixture store"
store_sum() { (cd "$work/store" && find . -type f -print0 | sort -z | xargs -0 sha256sum; find . | sort) | sha256sum; }
before=$(store_sum)

# XDG_CACHE_HOME: the index cache of the server (and the CLI) goes to a fresh directory.
XDG_CACHE_HOME=$work/cache NODE_PATH=$deps/node_modules env -u DSH_HOME \
  node "$here/client.js" --bin "$bin" --sessions "$work/store" | tee "$work/client.log"
rc=${PIPESTATUS[0]}
# The client's own summary, plus the checks below: one total at the end.
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/client.log" | tail -1)
passed=${summary%% passed*} failed=${summary#*, }
passed=${passed:-0} failed=${failed%% failed}
[ -n "$summary" ] || failed=$((failed + 1))
pass() { echo "PASS $*"; passed=$((passed + 1)); }
flunk() { echo "FAIL $*"; failed=$((failed + 1)); rc=1; }
if [ "$before" != "$(store_sum)" ]; then
  flunk "the store copy changed: dsh-lsp mcp must never write it"
else
  pass "the store copy is unchanged"
fi

# The README's Claude Code recipe: `claude mcp add` registers the server and `claude mcp list`
# connects to it (its health check: the MCP handshake). The model's tool calls need an
# account and are not tested. Claude Code ships as a native binary inside its npm package;
# installed once into $DSH_CI_DIR/claude-code. DSH_E2E_SKIP_CLAUDE=1 skips this check.
claude_version=2.1.332
claude=$ci/claude-code/node_modules/.bin/claude
if [ "${DSH_E2E_SKIP_CLAUDE:-}" != 1 ]; then
  if [ "$("$claude" --version 2>/dev/null | cut -d' ' -f1)" != "$claude_version" ]; then
    say "npm install @anthropic-ai/claude-code@$claude_version into $ci/claude-code"
    mkdir -p "$ci/claude-code" &&
      npm install --prefix "$ci/claude-code" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$claude_version" >&2 || flunk "installing Claude Code $claude_version"
  fi
  mkdir -p "$work/claude-home" "$work/proj"
  claude_run() {
    (cd "$work/proj" && HOME=$work/claude-home XDG_CACHE_HOME=$work/cache DISABLE_TELEMETRY=1 \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 timeout 120 "$claude" "$@" </dev/null 2>&1)
  }
  claude_run mcp add dsh -- "$bin" mcp --sessions "$work/store" >"$work/claude.log" &&
    claude_run mcp list >>"$work/claude.log"
  if grep -Eq "^dsh: .*(✔|✓) Connected" "$work/claude.log"; then
    pass "Claude Code $claude_version: claude mcp add dsh -- dsh-lsp mcp; claude mcp list says Connected"
  else
    cat "$work/claude.log"
    flunk "Claude Code $claude_version did not connect to dsh-lsp mcp"
  fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] || rc=1
exit $rc
