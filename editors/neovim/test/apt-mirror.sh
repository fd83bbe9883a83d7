# Sourced by the install scripts: where this machine's apt gets Debian from.
#
# apt_uri SUITE prints the URI of the first enabled `deb` source that serves SUITE, read from
# the machine's own apt configuration: deb822 /etc/apt/sources.list.d/*.sources (`URIs:`,
# `Suites:`, `Types:`, `Enabled:`) first, then one-line /etc/apt/sources.list{,.d/*.list}.
# Fails (status 1, nothing printed) when no source serves SUITE.
apt_uri() {
  local want=$1 f uri
  uri=$(
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -r "$f" ] || continue
      awk -v want="$want" '
        function flush() { if (uri != "" && hit && deb && on) print uri; uri = ""; hit = 0; deb = 0; on = 1 }
        BEGIN { on = 1 }
        /^[[:space:]]*$/ { flush(); next }
        /^[[:space:]]*#/ { next }
        tolower($1) == "uris:"    { uri = $2 }
        tolower($1) == "suites:"  { for (i = 2; i <= NF; i++) if ($i == want) hit = 1 }
        tolower($1) == "types:"   { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
        tolower($1) == "enabled:" { on = (tolower($2) != "no") }
        END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -r "$f" ] || continue
      sed -n -E "s/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+$want([[:space:]].*)?$/\2/p" "$f"
    done | head -1
  )
  uri=$(printf '%s\n' "$uri" | head -1)
  [ -n "$uri" ] || return 1
  printf '%s\n' "${uri%/}"
}

# debian_mirror prints the URI of the Debian archive this machine installs its own release
# from (the source serving VERSION_CODENAME of /etc/os-release); newer suites live there too.
debian_mirror() {
  local codename
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  apt_uri "$codename"
}
