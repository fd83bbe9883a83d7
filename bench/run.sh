#!/bin/sh
# bench/run.sh — build dsh-lsp and run the issue-7 benchmarks.
#
#   bench/run.sh quick          1k sessions; 4 MB and 20 MB sources (minutes)
#   bench/run.sh full           1k and 10k sessions; 4 MB, 20 MB, 200 MB, 2 GB sources
#   bench/run.sh go             the in-process Go benchmarks of the index
#
# Extra arguments go to `go run ./bench/run` (e.g. -compression none).
# Stores are generated once under bench/out/stores (gitignored); stores of
# 1 GB and more are deleted after use. Results: bench/out/results-*.json
# and a Markdown table on stdout.
set -eu
cd "$(dirname "$0")/.."
mode=${1:-quick}
[ $# -gt 0 ] && shift
mkdir -p bench/out
go build -o bench/out/dsh-lsp ./cmd/dsh-lsp
case $mode in
quick) exec go run ./bench/run -bin bench/out/dsh-lsp -sessions 1000 -sizes 4MB,20MB -restarts 3 -warm 500 "$@" ;;
full) exec go run ./bench/run -bin bench/out/dsh-lsp -sessions 1000,10000 -sizes 4MB,20MB,200MB,2GB "$@" ;;
go) exec go test ./sessionstore -run '^$' -bench Indexed -benchtime 300x "$@" ;;
*) echo "usage: bench/run.sh quick|full|go [flags]" >&2; exit 2 ;;
esac
