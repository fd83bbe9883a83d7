#!/bin/sh
# Build dsh-lsp for this machine into bin/<platform>-<arch>/dsh-lsp, where the extension
# looks for a bundled server (names as Node's process.platform and process.arch).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
target=$(node -p 'process.platform + "-" + process.arch')
case "$target" in
  linux-x64) goos=linux goarch=amd64 ;;
  linux-arm64) goos=linux goarch=arm64 ;;
  darwin-x64) goos=darwin goarch=amd64 ;;
  darwin-arm64) goos=darwin goarch=arm64 ;;
  *) echo "build-server: no Go target for $target" >&2; exit 1 ;;
esac
mkdir -p "$here/bin/$target"
cd "$root"
CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "editors/vscode/bin/$target/dsh-lsp" ./cmd/dsh-lsp
echo "built editors/vscode/bin/$target/dsh-lsp"
