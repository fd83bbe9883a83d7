#!/usr/bin/env bash
# End-to-end test of editors/neovim against the real dsh-lsp binary in Neovim 0.7 (Debian 12
# apt), 0.10 (Debian trixie debs) and 0.12 (Debian sid debs, both unpacked into private
# prefixes under $DSH_CI_DIR, default /opt/dsh-ci). Idempotent; installs what is missing
# (run as root on Debian 12). Prints 'N passed, M failed'; exits non-zero on any failure.
# Env: DSH_CI_DIR, NVIM_VERSIONS (subset of "0.7 0.10 0.12"), DSH_LSP_BIN (skip the build).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
repo=$(cd "$here/../../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
versions=${NVIM_VERSIONS:-0.7 0.10 0.12}
mkdir -p "$ci"

say() { printf '[nvim-e2e] %s\n' "$*" >&2; }

apt_install() {
  local tries
  for tries in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
         --no-install-recommends "$@" >"$ci/apt.log" 2>&1; then return 0; fi
    say "apt-get install $* failed (try $tries); updating package lists"
    apt-get -o DPkg::Lock::Timeout=600 update -q >>"$ci/apt.log" 2>&1 || sleep 5
  done
  cat "$ci/apt.log" >&2
  return 1
}

nvim_version() { "$1" --version 2>/dev/null | head -1 | sed -n 's/^NVIM v\([0-9]*\.[0-9]*\).*/\1/p'; }

# install_suite SUITE WANT: Neovim from a newer Debian suite into $ci/nvim-SUITE (atomic rename)
install_suite() {
  local suite=$1 want=$2 prefix=$ci/nvim-$1
  if [ "$(nvim_version "$prefix/usr/bin/nvim")" = "$want" ]; then echo "$prefix/usr/bin/nvim"; return 0; fi
  command -v patchelf >/dev/null || apt_install patchelf || return 1
  rm -rf "$prefix.tmp" "$prefix"
  say "installing Neovim $want from Debian $suite into $prefix"
  bash "$here/install-nvim-from-debian-suite.sh" "$suite" "$prefix.tmp" >&2 || return 1
  # patchelf wrote absolute paths of the .tmp prefix: redo them for the final place
  mv "$prefix.tmp" "$prefix"
  patchelf --set-interpreter "$prefix/usr/lib64/ld-linux-x86-64.so.2" --force-rpath \
    --set-rpath "$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/lua/5.1" \
    "$prefix/usr/bin/nvim" || return 1
  [ "$(nvim_version "$prefix/usr/bin/nvim")" = "$want" ] || { say "nvim in $prefix is not $want"; return 1; }
  echo "$prefix/usr/bin/nvim"
}

nvim_for() {
  case $1 in
    0.7)
      if [ "$(nvim_version /usr/bin/nvim)" != 0.7 ]; then apt_install neovim || return 1; fi
      [ "$(nvim_version /usr/bin/nvim)" = 0.7 ] && echo /usr/bin/nvim ;;
    0.10) install_suite trixie 0.10 ;;
    0.12) install_suite sid 0.12 ;;
    *) say "unknown Neovim version $1"; return 1 ;;
  esac
}

total_pass=0
total_fail=0

work=$(mktemp -d /tmp/dsh-nvim-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT

bin=${DSH_LSP_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/dsh-lsp
  say "building dsh-lsp"
  if ! (cd "$repo" && go build -o "$bin" ./cmd/dsh-lsp); then
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

for v in $versions; do
  if ! nvim=$(nvim_for "$v") || [ -z "$nvim" ]; then
    say "FAIL: could not install Neovim $v"
    total_fail=$((total_fail + 1))
    continue
  fi
  say "Neovim $v: $nvim ($("$nvim" --version | head -1))"
  run=$work/$v
  mkdir -p "$run"
  cp -r "$repo/testdata/fixtures/store-raw" "$run/store"
  # nothing of the user's config: no init, no shada, no swap; XDG dirs private to this run
  log=$run/out.txt
  XDG_CONFIG_HOME=$run/xdg/config XDG_DATA_HOME=$run/xdg/data XDG_STATE_HOME=$run/xdg/state \
  XDG_CACHE_HOME=$run/xdg/cache HOME=$run/home \
  DSH_LSP_BIN=$bin DSH_STORE=$run/store DSH_PLUGIN=$plugin DSH_WORK=$run \
  DSH_EXPECTED=$repo/testdata/fixtures/expected/store-raw.expected.json \
    timeout 180 "$nvim" --headless -u NONE -i NONE -n -c "luafile $here/e2e.lua" >"$log" 2>&1 </dev/null
  rc=$?
  cat "$log"
  line=$(grep -E '^nvim-[0-9.]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  p=$(sed -n 's/.*: \([0-9]*\) passed.*/\1/p' <<<"$line")
  f=$(sed -n 's/.* \([0-9]*\) failed$/\1/p' <<<"$line")
  if [ -z "$line" ]; then
    say "Neovim $v: no result line (exit $rc)"
    p=0; f=1
  elif [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
    f=1
  fi
  if [ "${f:-0}" -ne 0 ] && [ -s "$run/dsh-lsp.log" ]; then
    say "server log (last 40 lines):"; tail -40 "$run/dsh-lsp.log" >&2
  fi
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
