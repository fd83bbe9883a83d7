#!/usr/bin/env bash
# Builds a dsh-lsp release into OUT (default ./dist):
#   dsh-lsp_<version>_<goos>_<goarch>.tar.gz   linux and darwin, amd64 and arm64
#   dsh-lsp_<version>_windows_<goarch>.zip     windows amd64 and arm64
#   dsh-lsp-<vscode target>-<ext version>.vsix six platform VS Code packages
#                                              (vsce package --target …), each
#                                              carrying only its own binary
#   SHA256SUMS                                 `sha256sum -c SHA256SUMS` format
# then checks every artifact (release/pack verify: archive contents, checksums,
# the binary header of each archive and .vsix: ELF / Mach-O / PE machine).
#
# Usage: release/build.sh [OUT]
# Environment: DSH_RELEASE_VERSION (default: the v* tag at HEAD, else
# v<extension version>-dev.<commit>), DSH_CI_DIR (npm cache, default
# /opt/dsh-ci). Needs go, node and npm (Debian 12: apt-get install nodejs npm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-$root/dist}
ci=${DSH_CI_DIR:-/opt/dsh-ci}
ext_dir=$root/editors/vscode
ext_version=$(node -p 'require(process.argv[1]).version' "$ext_dir/package.json")

version=${DSH_RELEASE_VERSION:-}
if [ -z "$version" ]; then
	version=$(git describe --tags --exact-match --match 'v*' 2>/dev/null || true)
fi
if [ -z "$version" ]; then
	version=v$ext_version-dev
	if sha=$(git rev-parse --short=12 HEAD 2>/dev/null); then
		version=$version.$sha
	fi
fi
case "$version" in
v[0-9]*) ;;
*) echo "build.sh: version $version does not start with v<digit>" >&2; exit 1 ;;
esac

work=$(mktemp -d /tmp/dsh-release.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/dsh-lsp_* "$out"/dsh-lsp-*.vsix "$out/SHA256SUMS"

# go:vscode target pairs.
targets="linux/amd64:linux-x64 linux/arm64:linux-arm64 darwin/amd64:darwin-x64 darwin/arm64:darwin-arm64 windows/amd64:win32-x64 windows/arm64:win32-arm64"

echo "build.sh: dsh-lsp $version (extension $ext_version) -> $out"
for pair in $targets; do
	goos=${pair%%/*} rest=${pair#*/} goarch=${rest%%:*}
	exe=dsh-lsp
	[ "$goos" = windows ] && exe=dsh-lsp.exe
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
		-ldflags "-s -w -X main.version=$version" \
		-o "$work/bin/$goos-$goarch/$exe" ./cmd/dsh-lsp
done
go build -o "$work/pack" ./release/pack
"$work/pack" archive -version "$version" -bin "$work/bin" -out "$out" -license LICENSE -readme README.md

# The extension is packaged from a copy, so the working tree's bin/ (used by
# the VS Code e2e) and node_modules stay as they are.
stage=$work/vscode
mkdir -p "$stage"
tar -C "$ext_dir" --exclude=./node_modules --exclude=./bin --exclude=./out \
	--exclude=./test/artifacts --exclude='*.vsix' -cf - . | tar -C "$stage" -xf -
cp LICENSE "$stage/LICENSE"
(cd "$stage" && npm ci --no-audit --no-fund --prefer-offline --cache "$ci/npm-cache" >"$work/npm.log" 2>&1) || {
	tail -30 "$work/npm.log"
	echo "build.sh: npm ci for the extension failed" >&2
	exit 1
}
for pair in $targets; do
	goos=${pair%%/*} rest=${pair#*/} goarch=${rest%%:*} vt=${pair#*:}
	exe=dsh-lsp
	[ "$goos" = windows ] && exe=dsh-lsp.exe
	rm -rf "$stage/bin"
	mkdir -p "$stage/bin/$vt"
	cp "$work/bin/$goos-$goarch/$exe" "$stage/bin/$vt/$exe"
	(cd "$stage" && ./node_modules/.bin/vsce package --target "$vt" \
		-o "$out/dsh-lsp-$vt-$ext_version.vsix" </dev/null >"$work/vsce.log" 2>&1) || {
		tail -30 "$work/vsce.log"
		echo "build.sh: vsce package --target $vt failed" >&2
		exit 1
	}
done

"$work/pack" sums -dir "$out"
"$work/pack" verify -version "$version" -ext-version "$ext_version" -dir "$out"
(cd "$out" && sha256sum -c --quiet SHA256SUMS)
# The README's Linux install path, on a linux/amd64 machine: unpack with tar
# and run the binary, which must report this version.
if [ "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" = linux/amd64 ]; then
	mkdir -p "$work/try"
	tar -C "$work/try" -xzf "$out/dsh-lsp_${version}_linux_amd64.tar.gz"
	got=$("$work/try/dsh-lsp_${version}_linux_amd64/dsh-lsp" version)
	case "$got" in
	*"\"version\":\"$version\""*) echo "ok   the unpacked linux/amd64 binary reports $got" ;;
	*) echo "build.sh: the unpacked linux/amd64 binary reports $got, want version $version" >&2; exit 1 ;;
	esac
fi
echo "build.sh: $(ls "$out" | wc -l) files in $out"
ls -l "$out"
