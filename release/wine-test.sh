#!/usr/bin/env bash
# Runs the Go unit tests compiled for windows/amd64 under Wine (Debian's
# wine64), one test binary per package, each from its package directory as
# `go test` would. Prints "N passed, M failed" (packages) and exits non-zero
# if any package fails.
#
# Fresh Debian 12 as root: installs wine64 and the MinGW C compiler with apt
# (the compiler builds one test fixture, see below). The Wine prefix is
# cached in $DSH_CI_DIR/wine (default /opt/dsh-ci/wine).
#
# Two Wine 8 gaps are bridged for the test run only (the release binaries
# are built without either):
#   - Go >= 1.24 needs bcryptprimitives.dll (ProcessPrng) at start-up, which
#     Wine gained in 9.x: release/wine/bcryptprimitives.c is a stand-in that
#     forwards to RtlGenRandom, installed into the prefix's system32.
#   - Go 1.26's os.RemoveAll deletes with FileDispositionInformationEx; Wine
#     8 answers STATUS_NOT_IMPLEMENTED, which Go does not treat as "fall back
#     to the old call" (it does for the statuses Windows itself returns), so
#     every t.TempDir cleanup would fail. A `go test -overlay` copy of the
#     toolchain's internal/syscall/windows/at_windows.go adds the two Wine
#     statuses to that fallback list; the script stops if the toolchain's
#     code no longer has the line it patches.
#
# Usage: release/wine-test.sh [package pattern...]   (default ./...)
# Tests that run the dsh-lsp binary get a windows/amd64 build of it through
# DSH_LSP_TEST_BIN (there is no go command inside Wine to build one).
#
# Environment: DSH_CI_DIR, DSH_WINE_TIMEOUT (per package, default 900 s),
# DSH_WINE_RUN (a -test.run filter).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/release
ci=${DSH_CI_DIR:-/opt/dsh-ci}
timeout_s=${DSH_WINE_TIMEOUT:-900}
wine=/usr/lib/wine/wine64
export WINEPREFIX=$ci/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
cd "$root"

need=()
[ -x "$wine" ] || need+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-win32)
if [ ${#need[@]} -gt 0 ]; then
	echo "wine-test: installing ${need[*]} (apt)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need[@]}" >/tmp/dsh-wine-apt.log 2>&1; then
		apt-get -o DPkg::Lock::Timeout=600 update -q >>/tmp/dsh-wine-apt.log 2>&1
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need[@]}" >>/tmp/dsh-wine-apt.log 2>&1 || {
			tail -20 /tmp/dsh-wine-apt.log
			echo "wine-test: cannot install ${need[*]}"
			exit 1
		}
	fi
fi

work=$(mktemp -d /tmp/dsh-wine-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

mkdir -p "$WINEPREFIX"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "wine-test: creating the Wine prefix $WINEPREFIX"
	"$wine" wineboot --init >"$work/wineboot.log" 2>&1
	/usr/lib/wine/wineserver -w
fi
sys32=$WINEPREFIX/drive_c/windows/system32
if [ ! -d "$sys32" ]; then
	cat "$work/wineboot.log" 2>/dev/null | tail -20
	echo "wine-test: the Wine prefix has no system32"
	exit 1
fi
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" \
	"$here/wine/bcryptprimitives.c" "$here/wine/bcryptprimitives.def" -ladvapi32 || exit 1
cp "$work/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll"

orig=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
line='		STATUS_NOT_SUPPORTED:     // the file system doesn'"'"'t support FILE_DISPOSITION_INFORMATION_EX or one of the flags'
if ! grep -qxF "$line" "$orig"; then
	echo "wine-test: $orig no longer has the fallback line this script patches; update release/wine-test.sh"
	exit 1
fi
awk -v line="$line" '$0 == line { print "\t\tSTATUS_NOT_SUPPORTED, NTStatus(0xC0000002), NTStatus(0xC0000010): // + Wine 8: STATUS_NOT_IMPLEMENTED, STATUS_INVALID_DEVICE_REQUEST"; next } { print }' "$orig" >"$work/at_windows.go"
printf '{"Replace":{"%s":"%s"}}\n' "$orig" "$work/at_windows.go" >"$work/overlay.json"

CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -o "$work/dsh-lsp.exe" ./cmd/dsh-lsp || exit 1
# Wine maps the Unix root to drive Z:.
export DSH_LSP_TEST_BIN="Z:$work/dsh-lsp.exe"

patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || patterns=(./...)
mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${patterns[@]}")
# -short: the long randomized variants run natively in `go test ./...`.
runflags=(-test.count=1 -test.short)
[ -n "${DSH_WINE_RUN:-}" ] && runflags+=("-test.run=$DSH_WINE_RUN")

# Tests left out under Wine, each with why (everything else runs):
#   lsp FuzzProtocol: ~1000 seed streams, each starting a server, take over
#     15 minutes under Wine on a busy 2-core machine; it runs natively in
#     `go test ./...`.
#   lsp TestHoverCachedPerSessionVersion, TestResolveCachedPerSessionVersion,
#     TestQueuedReadsCancelled, TestPrepareReadsUnchangedSessionsOnce: they
#     pass, then t.TempDir's cleanup fails with "directory is not empty":
#     Wine 8 has no POSIX delete semantics, so a file deleted while a
#     cancelled background read still holds it stays in its directory until
#     that handle closes (Windows 10 1607+ removes the name at once).
#   internal/archtest TestImportRules: runs `go list`; there is no go
#     command inside Wine (the import rules are checked natively).
#   cmd/dsh-lsp TestCLIWritesJSStringsInICUOrder/mentions_invalid_UTF-8:
#     Windows command lines are UTF-16, so invalid UTF-8 bytes in an
#     argument cannot reach the process as bytes (invalid UTF-8 handling
#     itself runs in-process in the reference tests, which pass under
#     Wine).
#   sessionstore TestFilesChangingUnderTheReader: KNOWN BUG, not a Wine
#     limitation: with files replaced in a tight loop, the index's watcher
#     (sessionstore/watch.go) blocks forever in fsnotify's Windows
#     Watcher.Add and Indexed.Close then waits for it ("all goroutines are
#     asleep - deadlock"). The test skips itself on Windows with that
#     reason (store_hardening_test.go); remove the skip once it is fixed.
#   sessionstore TestVersionNamesTheTranscriptAReadLoads/replaced: the
#     case renames a byte-identical copy with the same modification time
#     over the transcript; under Wine files have no identity (creation time
#     is the Unix ctime, fileid_windows.go), so nothing tells the copy from
#     the original, and keeping the version is right for identical bytes.
#     On Windows the creation time differs and the case runs.
declare -A wine_skip=(
	[github.com/dsh-lsp/dsh-lsp/internal/archtest]='^TestImportRules$'
	[github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp]='^TestCLIWritesJSStringsInICUOrder$/^mentions_invalid_UTF-8$'
	[github.com/dsh-lsp/dsh-lsp/sessionstore]='^TestVersionNamesTheTranscriptAReadLoads$/^replaced$'
	[github.com/dsh-lsp/dsh-lsp/lsp]='^(FuzzProtocol|TestHoverCachedPerSessionVersion|TestResolveCachedPerSessionVersion|TestQueuedReadsCancelled|TestPrepareReadsUnchangedSessionsOnce)$'
)

passed=0 failed=0 failures=()
for entry in "${pkgs[@]}"; do
	pkg=${entry%% *} dir=${entry#* }
	exe="$work/$(echo "${pkg#github.com/dsh-lsp/dsh-lsp/}" | tr / _).test.exe"
	start=$SECONDS
	if ! GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -overlay "$work/overlay.json" -o "$exe" "$pkg" >"$work/build.log" 2>&1; then
		cat "$work/build.log"
		echo "FAIL $pkg (build)"
		failed=$((failed + 1)) failures+=("$pkg")
		continue
	fi
	log="$work/test.log"
	flags=("${runflags[@]}")
	if [ -n "${wine_skip[$pkg]:-}" ]; then
		flags+=("-test.skip=${wine_skip[$pkg]}")
		echo "     (not run under Wine, see the list above: ${wine_skip[$pkg]})"
	fi
	(cd "$dir" && timeout -k 10 "$timeout_s" "$wine" "$exe" "${flags[@]}" -test.v) >"$log" 2>&1
	rc=$?
	# Three failures of Wine itself say nothing about the tests: its
	# connection to the wineserver broke ("wine client error: recvmsg:
	# Connection reset by peer"), its CreateProcess failed with
	# ERROR_INTERNAL_ERROR while a test started the server binary ("fork/exec
	# ...: Internal error."), or it could not start the test binary at all
	# ("wine: failed to open ...: c0000135", a binary that runs when started
	# again). Each was seen once on a loaded machine; restart the wineserver
	# and run the package again, once. So too when the test binary ended
	# with exit 1 in the middle of a test and without a word of Go's (a
	# failing Go test binary always prints a FAIL, panic or fatal error
	# line): seen once, in the sessionstore package, which passed on the
	# next three runs.
	wine_failed='^wine client error:.*|fork/exec .*: Internal error\.|^wine: failed to open .*'
	go_failed='^\s*--- FAIL|^panic|^fatal error|^FAIL'
	why=
	if [ $rc -ne 0 ] && grep -qE "$wine_failed" "$log"; then
		why="Wine failed, not a test: $(grep -m1 -oE "$wine_failed" "$log")"
	elif [ $rc -eq 1 ] && ! grep -qE -- "$go_failed" "$log"; then
		why="the test binary ended with exit 1 and no failure reported by Go"
	fi
	if [ -n "$why" ]; then
		echo "     ($why; running $pkg again)"
		/usr/lib/wine/wineserver -k 2>/dev/null || true
		(cd "$dir" && timeout -k 10 "$timeout_s" "$wine" "$exe" "${flags[@]}" -test.v) >"$log" 2>&1
		rc=$?
	fi
	skips=$(grep -c -- '^\s*--- SKIP' "$log")
	if [ $rc -eq 0 ] && grep -qx PASS "$log"; then
		echo "ok   $pkg ($((SECONDS - start)) s, $(grep -c -- '^\s*--- PASS' "$log") passed, $skips skipped)"
		passed=$((passed + 1))
	else
		grep -E -- '^\s*--- FAIL|^panic|^fatal error|^FAIL' "$log" | head -40
		# What the failing tests said (t.Errorf/t.Fatalf lines name their
		# _test.go line): in parallel runs they are far from the tail.
		echo "---- failure messages:"
		grep -E -A3 -- '^\s+[a-z_0-9]+_test\.go:[0-9]+: ' "$log" | grep -v -- '^--$' | head -60
		echo "---- last lines of the test output:"
		tail -40 "$log"
		echo "----"
		if [ -n "${DSH_WINE_LOGS:-}" ]; then
			mkdir -p "$DSH_WINE_LOGS" && cp "$log" "$DSH_WINE_LOGS/$(echo "$pkg" | tr / _).log"
		fi
		[ $rc -eq 124 ] && echo "(timed out after ${timeout_s}s)"
		echo "FAIL $pkg (exit $rc, $((SECONDS - start)) s)"
		failed=$((failed + 1)) failures+=("$pkg")
	fi
	grep -E -A1 -- '^\s*--- SKIP' "$log" | grep -v -- '^--$' | sed 's/^/     /'
done
# Stop this prefix's wineserver (it would linger a few seconds otherwise).
/usr/lib/wine/wineserver -k 2>/dev/null || true
echo "windows/amd64 under $("$wine" --version 2>/dev/null):"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
