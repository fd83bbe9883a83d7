#!/usr/bin/env bash
# Install a newer Neovim on Debian 12 WITHOUT touching the system: download the .debs of a
# newer Debian suite (trixie: 0.10.x, sid: 0.12.x) with a private apt state, unpack them into
# PREFIX, and point the nvim binary at the suite's own glibc loader with patchelf.
# Usage: install-nvim-from-debian-suite.sh SUITE PREFIX      e.g.  sid /opt/nvim-sid
# Result: PREFIX/usr/bin/nvim (finds its runtime by itself; no VIMRUNTIME needed).
# The Debian mirror is the one this machine's apt already uses (the source serving its own
# release, from /etc/apt/sources.list.d/*.sources `URIs:` or a one-line sources.list);
# DSH_DEBIAN_MIRROR overrides it. No mirror URL is written here.
set -euo pipefail
suite=${1:?suite (trixie|sid)}; prefix=${2:?prefix}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=apt-mirror.sh
. "$here/apt-mirror.sh"
mirror=${DSH_DEBIAN_MIRROR:-$(debian_mirror)} ||
  { echo "install-nvim: no Debian mirror in /etc/apt/sources.list{,.d/*} (set DSH_DEBIAN_MIRROR)" >&2; exit 1; }
echo "install-nvim: Debian $suite from $mirror" >&2
command -v patchelf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends patchelf >/dev/null
st=$(mktemp -d); mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$prefix/debs"
trap 'rm -rf "$st"' EXIT
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$st/sources.list"
apto=(-o Dir::Etc::sourcelist="$st/sources.list" -o Dir::Etc::sourceparts=/nonexistent
      -o Dir::State::Lists="$st/lists" -o Dir::Cache="$st/cache" -o Dir::Etc::preferencesparts=/nonexistent
      -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1)
apt-get "${apto[@]}" update -qq
# neovim + its direct Depends (first alternative) + glibc/libgcc of that suite
deps=$(apt-cache "${apto[@]}" show neovim | sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g')
pkgs="neovim $deps libc6 libgcc-s1 libluajit-5.1-common"
# shellcheck disable=SC2086 # word splitting of the package list is intended
(cd "$prefix/debs" && chmod 777 . && apt-get "${apto[@]}" download $pkgs >/dev/null 2>&1)
for d in "$prefix"/debs/*.deb; do dpkg-deb -x "$d" "$prefix"; done
R=$(cd "$prefix" && pwd)
patchelf --set-interpreter "$R/usr/lib64/ld-linux-x86-64.so.2" \
         --force-rpath --set-rpath "$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/lua/5.1" "$R/usr/bin/nvim"
rm -rf "$prefix/debs"
if LD_TRACE_LOADED_OBJECTS=1 "$R/usr/bin/nvim" | grep -q 'not found'; then
  LD_TRACE_LOADED_OBJECTS=1 "$R/usr/bin/nvim" | grep 'not found'; exit 1; fi
"$R/usr/bin/nvim" --version | head -1
