#!/usr/bin/env bash
# Checks that dsh-lsp installs the two ways the README gives:
#   1. go install github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp@latest
#      Simulated without publishing: HEAD is served as version v0.1.0 of the
#      module from a local file:// module proxy placed before the real one
#      (dependencies come from the real proxy). This checks the module path,
#      the main package's import path, that go.mod has no replace directive
#      (go install pkg@version refuses one) and that `dsh-lsp version`
#      reports the installed module version (debug.ReadBuildInfo).
#   2. go install ./cmd/dsh-lsp in the checkout: the binary reports the
#      commit's pseudo-version (the go command stamps it from git).
# Prints "N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mod=$(go list -m)
work=$(mktemp -d /tmp/dsh-go-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}

ver=v0.1.0
vdir=$work/proxy/$mod/@v
mkdir -p "$vdir"
# The module zip is the committed tree (as a tag would publish it).
git archive --format=zip --prefix="$mod@$ver/" HEAD >"$vdir/$ver.zip"
git show HEAD:go.mod >"$vdir/$ver.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$ver" "$(git show -s --format=%cI HEAD)" >"$vdir/$ver.info"
echo "$ver" >"$vdir/list"

at_latest() {
	local out
	# GONOSUMDB: the local zip is not in the public checksum database.
	out=$(cd "$work" && GOBIN=$work/bin1 GOFLAGS=-mod=mod GONOSUMDB=$mod GOPROXY="file://$work/proxy,$(go env GOPROXY)" \
		go install "$mod/cmd/dsh-lsp@latest" 2>&1) || { echo "$out"; return 1; }
	out=$("$work/bin1/dsh-lsp" version) || return 1
	echo "     dsh-lsp version: $out"
	[[ $out == *"\"version\":\"$ver\""* ]]
}
check "go install $mod/cmd/dsh-lsp@latest reports $ver" at_latest

from_checkout() {
	local out
	# -buildvcs=true: this machine's go env turns VCS stamping off.
	GOFLAGS=-buildvcs=true GOBIN=$work/bin2 go install ./cmd/dsh-lsp || return 1
	out=$("$work/bin2/dsh-lsp" version) || return 1
	echo "     dsh-lsp version: $out"
	# A pseudo-version of the commit: v0.0.0-<UTC time>-<12 hex>[+dirty].
	[[ $out =~ \"version\":\"v0\.0\.0-[0-9]{14}-[0-9a-f]{12}(\+dirty)?\" ]]
}
if git rev-parse --git-dir >/dev/null 2>&1; then
	check "go install ./cmd/dsh-lsp reports the commit's pseudo-version" from_checkout
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
