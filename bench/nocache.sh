#!/bin/sh
# nocache.sh BINARY STORE: the CLI's one-shot reads of a store, whole
# process (spawn to exit), wall and cpu (user+system) per run:
#   indexed  candidates with an empty cache directory (the first indexing
#            pass, cache written);
#   no-cache candidates --no-cache (an in-memory index, nothing persisted);
#   prepare  prepare citing 3 sessions (a lazy index: only those parsed).
# The answers of indexed and no-cache are compared byte for byte.
# Make a store like the measured one with:
#   go run ./bench/gen -out STORE -sessions 10000 -messages 1 -size 2KB -cwds 10000
set -eu
bin=$1 store=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { name=$1; shift; /usr/bin/time -o "$tmp/t" -f "%e s wall, %U+%S s cpu, %M KB max RSS" "$@"; echo "$name: $(cat "$tmp/t")" >&2; }
run indexed env XDG_CACHE_HOME="$tmp/c1" "$bin" candidates --sessions "$store" --limit 5 proj >"$tmp/a"
run no-cache env XDG_CACHE_HOME="$tmp/c2" "$bin" candidates --no-cache --sessions "$store" --limit 5 proj >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && echo "indexed and no-cache answers identical" >&2
ids=$(env XDG_CACHE_HOME="$tmp/c1" "$bin" candidates --sessions "$store" --limit 3 | tr ',' '\n' | sed -n 's/.*"mention":"\(.*\)")*/\1/p' | tr -d '\\' | tr '\n' ' ')
run prepare "$bin" prepare --sessions "$store" "$ids" >/dev/null
