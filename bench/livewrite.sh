#!/bin/sh
# livewrite.sh BIN STORE XDG [SESSION_TRANSCRIPT]: what a live session's
# writes cost a server restarted on STORE's cache (XDG_CACHE_HOME XDG):
# bench/run restarts BIN once, asks 300 new queries, then leaves it idle
# 20 s while this script gives one session's transcript a new modification
# time every 500 ms for 15 s (to the index, a changed transcript). It
# prints bench/run's idle line: the server's CPU and peak RSS meanwhile.
# SESSION_TRANSCRIPT defaults to the store's newest transcript. The store
# is written to only by that touch.
set -eu
bin=$1 store=$2 xdg=$3
f=${4:-$(find "$store" -name 'session.jsonl*' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-)}
work=${TMPDIR:-/tmp}/dsh-livewrite
cd "$(dirname "$0")/.."
go build -o "$work/run" ./bench/run
"$work/run" -bin "$bin" -work "$work" -restarts 1 -warm 300 -idle 20s -restart "$store" -restart-xdg "$xdg" | grep idle &
run=$!
sleep 8
i=0
while [ $i -lt 30 ]; do
	touch -m "$f"
	sleep 0.5
	i=$((i + 1))
done
wait $run
