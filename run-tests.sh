#!/usr/bin/env bash
# The whole test suite: Go unit/conformance/integration tests, then the
# end-to-end suites in real editors (VS Code via code-server + Chromium,
# Neovim 0.7/0.10/0.12, Emacs Eglot, Vim ALE). Each editor suite installs
# what it needs (apt/npm, cached under /opt/dsh-ci) on a fresh Debian 12
# machine, so this one command is all the set-up a new machine needs.
#
# DSH_SKIP_E2E=1 runs only the Go tests.
set -uo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
# The randomised and race tests run their full rounds here (a plain
# `go test ./...` runs fewer, to stay quick): see sessionstore.LongTests.
export DSH_LONG_TESTS=1

failed=()
step() {
	local name=$1
	shift
	echo
	echo "==> $name"
	local start=$SECONDS
	if "$@"; then
		echo "==> $name: ok ($((SECONDS - start)) s)"
	else
		echo "==> $name: FAILED ($((SECONDS - start)) s)"
		failed+=("$name")
	fi
}

# gofmt: every tracked Go file is formatted (the list names the ones that are not).
step "gofmt" bash -c 'out=$(git ls-files -z "*.go" | xargs -0 gofmt -l) && [ -z "$out" ] || { echo "gofmt would change:"; echo "$out"; exit 1; }'
step "go vet" go vet ./...
# staticcheck at a pinned version (the module proxy serves it): dead code
# and needless complexity fail the suite like a vet finding.
step "staticcheck" bash -c 'go install honnef.co/go/tools/cmd/staticcheck@v0.8.2 && staticcheck ./...'
step "go test" go test -count=1 ./...
step "go test -race (server, core)" go test -count=1 -race ./lsp/... ./reference/... ./sessionstore/... ./mcpserver/...
# jsonrpc2 lends a request's method and params from its frame until the
# handler returns; built with jsonrpc2poison it scribbles over recycled
# requests, so a handler that keeps them longer fails its test.
step "go test -tags jsonrpc2poison (server, CLI)" go test -count=1 -tags jsonrpc2poison ./lsp/... ./cmd/...
# Every platform: the six release targets (linux, darwin, windows x amd64,
# arm64) build and vet; the unit tests run as windows/amd64 under Wine
# (installs wine64 with apt); go install works as the README says.
step "cross-compile + go vet (6 targets)" release/cross-check.sh
step "go test windows/amd64 under Wine" env DSH_WINE_LOGS="${DSH_WINE_LOGS:-/tmp/dsh-wine-logs}" release/wine-test.sh
step "go install (@latest, version stamp)" release/check-go-install.sh

if [ "${DSH_SKIP_E2E:-}" != 1 ]; then
	# One build of the server, shared by every suite below.
	bindir=$(mktemp -d)
	trap 'rm -rf "$bindir"' EXIT
	step "go build dsh-lsp" go build -o "$bindir/dsh-lsp" ./cmd/dsh-lsp
	export DSH_LSP_BIN=$bindir/dsh-lsp
	# Six archives, SHA256SUMS and six platform .vsix, each binary checked.
	step "release build + verify" release/build.sh "$bindir/release"
	for suite in stress/run.sh e2e/node/e2e.sh e2e/mcp/e2e.sh editors/vscode/test/e2e.sh editors/neovim/test/e2e.sh editors/emacs/test/e2e.sh editors/vim/test/e2e.sh; do
		if [ -x "$suite" ]; then
			step "$suite" "$suite"
		else
			echo "==> $suite: missing"
			failed+=("$suite (missing)")
		fi
	done
fi

echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
echo "all test suites passed"
