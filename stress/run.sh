#!/usr/bin/env bash
# Hardening suite at CI sizes (about 2-3 minutes on 2 cores):
# protocol fuzzing, hostile text, prompt-envelope properties, hostile
# stores, load, faults and huge stores. Full-size runs are in
# stress/README.md; every size and duration is a flag or an environment
# variable here:
#
#   STRESS_FUZZTIME=30s STRESS_LOAD=10s STRESS_RATE=2000 STRESS_SOURCE=5MB \
#   STRESS_BIG=200MB STRESS_TINY=10000 STRESS_HOSTILE_SCALE=0.2 STRESS_BP=15s stress/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${STRESS_FUZZTIME:-30s}
load=${STRESS_LOAD:-10s}
rate=${STRESS_RATE:-2000}
source_size=${STRESS_SOURCE:-5MB}
big=${STRESS_BIG:-200MB}
tiny=${STRESS_TINY:-10000}
hostile_scale=${STRESS_HOSTILE_SCALE:-0.2}
bp=${STRESS_BP:-15s}

work=$(mktemp -d "${TMPDIR:-/tmp}/dsh-stress.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=()
step() {
	local name=$1
	shift
	echo "--> $name"
	local start=$SECONDS
	if "$@"; then
		echo "--> $name: ok ($((SECONDS - start)) s)"
	else
		echo "--> $name: FAILED ($((SECONDS - start)) s)"
		failed+=("$name")
	fi
}

step "build" go build -o "$work/dsh-lsp" ./cmd/dsh-lsp
step "build stress" go build -o "$work/stress" ./stress
step "protocol fuzzing ($fuzztime)" go test -run '^$' -fuzz '^FuzzProtocol$' -fuzztime "$fuzztime" -parallel 2 ./lsp
step "hostile text (scale $hostile_scale)" go test -count=1 -run 'TestHostileText' -v ./lsp -args -hostile-scale "$hostile_scale"
step "prompt envelope properties" go test -count=1 -run 'TestEnvelopeNeverBreaks' ./reference -args -envelope-rounds 5000
step "hostile stores" go test -count=1 -run 'TestHostile|TestFilesChangingUnderTheReader|TestSpecialFiles' ./sessionstore
step "load, faults, stores" "$work/stress" -work "$work/stores" -bin "$work/dsh-lsp" \
	-phases load,faults,stores -duration "$load" -rate "$rate" -source-size "$source_size" \
	-big-session "$big" -tiny-sessions "$tiny"

# Back-pressure: hovers at 20/s and a 200 req/s mix on 3 x 6 MB /
# 5,000-message sessions against the binary. Latencies are reported (CI
# machines are shared); errors and the 300 MB RSS bound fail the step.
step "back-pressure ($bp each)" "$work/stress" -work "$work/bp" -bin "$work/dsh-lsp" \
	-phases hover,mix -hover-duration "$bp" -mix-duration "$bp" -max-rss 300MB

if [ ${#failed[@]} -gt 0 ]; then
	echo "stress: FAILED: ${failed[*]}"
	exit 1
fi
echo "stress: all passed"
