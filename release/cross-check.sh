#!/usr/bin/env bash
# Cross-compiles every package and runs go vet (which type-checks the tests
# too) for the six release targets: linux, darwin and windows on amd64 and
# arm64. Prints "N passed, M failed" (targets).
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
for t in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
	start=$SECONDS
	if out=$(CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go build ./... 2>&1) &&
		out=$(CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go vet ./... 2>&1); then
		echo "ok   $t: go build ./... and go vet ./... ($((SECONDS - start)) s)"
		passed=$((passed + 1))
	else
		echo "$out"
		echo "FAIL $t"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
