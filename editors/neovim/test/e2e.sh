#!/usr/bin/env bash
# End-to-end test of editors/neovim against the real dsh-lsp binary in Neovim 0.7 (Debian 12
# apt), 0.10 (Debian trixie debs) and 0.12 (Debian sid debs, both unpacked into private
# prefixes under $DSH_CI_DIR, default /opt/dsh-ci). Idempotent; installs what is missing
# (run as root on Debian 12). Prints 'N passed, M failed'; exits non-zero on any failure.
# Per version: e2e.lua (the plugin's features), recipes.lua (every Lua recipe of the README
# as written; 0.10 and 0.12), and on 0.12 codecompanion.lua (the CodeCompanion extension in
# the real plugin, against a fake model server on 127.0.0.1).
# Env: DSH_CI_DIR, NVIM_VERSIONS (subset of "0.7 0.10 0.12"), DSH_LSP_BIN (skip the build),
# RECIPES (recipe scenarios of recipes.lua to run, default all),
# DSH_CODECOMPANION_DIR / DSH_PLENARY_DIR (checkouts of the pinned commits below; default
# $DSH_CI_DIR/nvim-plugins/NAME-COMMIT, filled from $DSH_MIRROR_DIR, default /work/.mirror,
# when that holds the repositories; the CodeCompanion test is skipped, saying so, without them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
repo=$(cd "$here/../../.." && pwd)
ci=${DSH_CI_DIR:-/opt/dsh-ci}
versions=${NVIM_VERSIONS:-0.7 0.10 0.12}
mkdir -p "$ci"

e2e_tag=nvim-e2e
e2e_apt_log=$ci/apt.log
# shellcheck source=../../../e2e/lib.sh
. "$repo/e2e/lib.sh"

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

# CodeCompanion and plenary: no package registry serves them. Pinned commits; their code is
# never part of this repository.
CODECOMPANION_REPO=olimorris/codecompanion.nvim
CODECOMPANION_COMMIT=f1afd02537c68b3dd6e0d41d4adda5ef538e0473 # 2026-08-08
PLENARY_REPO=nvim-lua/plenary.nvim
PLENARY_COMMIT=b9fd5226c2f76c951fc8ed5923d85e4de065e509 # 2025-07-26

# plugin_dir REPO COMMIT: a checkout of REPO at COMMIT under $ci/nvim-plugins, made from a bare
# mirror ($DSH_MIRROR_DIR/OWNER+NAME/repo, as the project's fetch tool leaves them) if needed.
plugin_dir() {
  local repo=$1 commit=$2 dir mirror
  dir=$ci/nvim-plugins/${repo#*/}-${commit:0:12}
  if [ -d "$dir/lua" ]; then echo "$dir"; return 0; fi
  mirror=${DSH_MIRROR_DIR:-/work/.mirror}/${repo/\//+}/repo
  if [ -d "$mirror" ] && git --git-dir="$mirror" cat-file -e "$commit^{commit}" 2>/dev/null; then
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    if git --git-dir="$mirror" archive "$commit" | tar -x -C "$dir.tmp"; then
      mv "$dir.tmp" "$dir" && { say "unpacked $repo $commit from $mirror into $dir"; echo "$dir"; return 0; }
    fi
    rm -rf "$dir.tmp"
  fi
  return 1
}

total_pass=0
total_fail=0
total_skip=0

# run_nvim NAME NVIM SCRIPT [ENV=VALUE...]: one headless Neovim running SCRIPT; adds its
# 'N passed, M failed' line to the totals.
run_nvim() {
  local name=$1 nvim=$2 script=$3; shift 3
  local dir=$run/$name
  mkdir -p "$dir/xdg" "$dir/home/.dsh" "$dir/cwd"
  cp -r "$repo/testdata/fixtures/store-raw" "$dir/home/.dsh/sessions"
  # nothing of the user's config: no init, no shada, no swap; XDG dirs and HOME private
  local log=$dir/out.txt rc
  (cd "$dir/cwd" && env -u DSH_HOME PATH="$work/bin:$PATH" \
    XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" XDG_STATE_HOME="$dir/xdg/state" \
    XDG_CACHE_HOME="$dir/xdg/cache" HOME="$dir/home" \
    DSH_LSP_BIN="$bin" DSH_STORE="$dir/home/.dsh/sessions" DSH_PLUGIN="$plugin" DSH_REPO="$repo" DSH_WORK="$dir" \
    DSH_TEST_DIR="$here" DSH_EXPECTED="$repo/testdata/fixtures/expected/store-raw.expected.json" "$@" \
    timeout 240 "$nvim" --headless -u NONE -i NONE -n \
      -c "lua local ok, e = pcall(dofile, '$here/$script') if not ok then io.stdout:write('load error: ' .. tostring(e) .. '\\n') vim.cmd('cq!') end" \
      >"$log" 2>&1 </dev/null)
  rc=$?
  cat "$log"
  tally "$log" 'nvim-[0-9.]+( [a-z-]+)?' "$rc" "$name"
}

# tally LOG PREFIX RC NAME: adds LOG's 'PREFIX: N passed, M failed' line to the totals (a
# missing line is one failure); sets f.
tally() {
  local p
  if ! read_result "$1" "$2" "$3"; then
    say "$4: no result line (exit $3)"
    p=0; f=1
  fi
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
}

make_work nvim-e2e
build_bin
# the recipes call `dsh-lsp` by name, as users do
mkdir -p "$work/bin" && ln -sf "$bin" "$work/bin/dsh-lsp"

cc_dir=${DSH_CODECOMPANION_DIR:-$(plugin_dir "$CODECOMPANION_REPO" "$CODECOMPANION_COMMIT")}
plenary_dir=${DSH_PLENARY_DIR:-$(plugin_dir "$PLENARY_REPO" "$PLENARY_COMMIT")}

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
  tally "$log" 'nvim-[0-9.]+' "$rc" "Neovim $v"
  if [ "$f" -ne 0 ] && [ -s "$run/dsh-lsp.log" ]; then
    say "server log (last 40 lines):"; tail -40 "$run/dsh-lsp.log" >&2
  fi

  if [ "$v" != 0.7 ]; then
    for sc in ${RECIPES:-setup lazy by-hand vim-lsp-config-file-first vim-lsp-config-chat-first}; do
      case $v:$sc in 0.10:vim-lsp-config-*) continue ;; esac   # the recipe says Neovim 0.11+
      run_nvim "recipe-$sc" "$nvim" recipes.lua DSH_SCENARIO="$sc"
    done
  fi
  if [ "$v" = 0.12 ]; then
    if [ -d "$cc_dir/lua/codecompanion" ] && [ -d "$plenary_dir/lua/plenary" ]; then
      # the fake model server is Python; CodeCompanion's HTTP client (plenary.curl) runs curl
      command -v python3 >/dev/null || apt_install python3 || say "could not install python3"
      command -v curl >/dev/null || apt_install curl || say "could not install curl"
      run_nvim codecompanion "$nvim" codecompanion.lua \
        DSH_CODECOMPANION_DIR="$cc_dir" DSH_PLENARY_DIR="$plenary_dir"
    else
      say "SKIP CodeCompanion e2e: no checkout of $CODECOMPANION_REPO $CODECOMPANION_COMMIT and $PLENARY_REPO $PLENARY_COMMIT"
      say "     (set DSH_CODECOMPANION_DIR and DSH_PLENARY_DIR, or put bare mirrors under \${DSH_MIRROR_DIR:-/work/.mirror})"
      total_skip=$((total_skip + 1))
    fi
  fi
done

[ "$total_skip" -eq 0 ] || say "$total_skip suite(s) skipped"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
