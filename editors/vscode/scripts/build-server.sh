#!/bin/sh
# Build dsh-lsp for this machine into bin/<platform>-<arch>/dsh-lsp[.exe], where the extension
# looks for a bundled server (names as Node's process.platform and process.arch, which are
# also vsce's --target names). The six platform packages of a release are built by
# release/build.sh instead.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
target=$(node -p 'process.platform + "-" + process.arch')
case "$target" in
  linux-x64) goos=linux goarch=amd64 ;;
  linux-arm64) goos=linux goarch=arm64 ;;
  darwin-x64) goos=darwin goarch=amd64 ;;
  darwin-arm64) goos=darwin goarch=arm64 ;;
  win32-x64) goos=windows goarch=amd64 ;;
  win32-arm64) goos=windows goarch=arm64 ;;
  *) echo "build-server: no Go target for $target" >&2; exit 1 ;;
esac
exe=dsh-lsp
[ "$goos" = windows ] && exe=dsh-lsp.exe
mkdir -p "$here/bin/$target"
cd "$root"
CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "editors/vscode/bin/$target/$exe" ./cmd/dsh-lsp
echo "built editors/vscode/bin/$target/$exe"
