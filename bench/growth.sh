#!/bin/sh
# bench/growth.sh BIN DIR [N...]: how the cost grows with the store, the
# figures of bench/README.md's "How the cost grows" table, through the
# binary BIN. For each size N (default: 1000 10000 100000 sessions) it
# makes the store DIR/sN once:
#
#   go run ./bench/gen -out DIR/sN -sessions N -cwds N/50 -messages 4   (zstd, seed 1; at least 1 cwd)
#
# and measures, one after another on the same host:
#   firstpass  the server without a cache, to its first complete answer,
#              each start between two runs of the floor (bench/run -firstpass,
#              2 starts): wall and CPU against the floors', peak RSS;
#   restart    start 0 on an empty cache home (the first pass, then the
#              content index), start 1 a restart on both caches: first
#              answer after spawn, 1,000 new queries (p50/p99), peak RSS,
#              10 s idle (bench/run -restart);
#   cli        candidates --no-cache, the one-goroutine json.Valid floor
#              (bench/floor -mode valid), candidates twice on the restart's
#              cache (wall, CPU, peak RSS; the answers must be --no-cache's).
#
# Run it on an idle host: the figures are what the host gives at that hour.
set -eu
[ $# -ge 2 ] || { echo "usage: bench/growth.sh BIN DIR [N...]" >&2; exit 2; }
bin=$(realpath "$1") dir=$2
shift 2
[ $# -gt 0 ] || set -- 1000 10000 100000
cd "$(dirname "$0")/.."
mkdir -p "$dir"
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
go build -o "$tools/run" ./bench/run
go build -o "$tools/floor" ./bench/floor
timed() { # timed LABEL CMD...: CMD's wall, CPU and peak RSS on stderr
	label=$1
	shift
	/usr/bin/time -o "$tools/t" -f "%e s wall, %U+%S s CPU, %M KB peak RSS" "$@"
	echo "cli $label: $(cat "$tools/t")" >&2
}
for n in "$@"; do
	store=$dir/s$n
	[ -d "$store" ] || go run ./bench/gen -q -out "$store" -sessions "$n" -cwds $((n < 50 ? 1 : n / 50)) -messages 4
	store=$(realpath "$store")
	echo "== $n sessions: $store ($(du -sh "$store" | cut -f1) on disk)" >&2
	"$tools/run" -firstpass "$store" -nocache 2 -bin "$bin" -work "$tools/work"
	xdg=$tools/xdg-$n
	mkdir -p "$xdg"
	"$tools/run" -restart "$store" -restart-xdg "$xdg" -restarts 2 -warm 1000 -idle 10s -bin "$bin" -work "$tools/work"
	timed "candidates --no-cache" env XDG_CACHE_HOME="$tools/xdg-none" "$bin" candidates --no-cache --sessions "$store" proj >"$tools/nocache"
	timed "floor (json.Valid, one goroutine)" "$tools/floor" -mode valid -repeat 1 "$store" >/dev/null
	for k in 1 2; do
		timed "candidates on the cache ($k)" env XDG_CACHE_HOME="$xdg" "$bin" candidates --sessions "$store" proj >"$tools/cached"
		cmp -s "$tools/nocache" "$tools/cached" || { echo "growth: the cached answer differs from --no-cache's at $n sessions" >&2; exit 1; }
	done
done
