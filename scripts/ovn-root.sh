#!/usr/bin/env bash
# Provisions OVN 25.03 and OVS 3.5, the releases ovnk targets, from Debian trixie into a
# cached root outside the repository, and prints that root's directory on its last line.
#
# The host stays untouched: trixie's programs need a newer glibc than bookworm's, so
# they run through trixie's own dynamic loader with trixie's libraries (the launchers
# this script writes into ROOT/bin). The root is made the way apt would install the
# packages, without apt installing them: apt resolves and downloads the packages of
# trixie (with its own lists and an empty dpkg status, so nothing of the host's dpkg
# database is read or written), and each package is unpacked into the root. No
# maintainer script runs, nothing is mounted and nothing needs root; a cold run takes
# about half a minute, a warm one a few milliseconds.
#
# ROOT/bin/NAME runs NAME: ovsdb-server, ovs-vswitchd, ovn-northd, ovn-trace, … The
# schemas are ROOT/usr/share/ovn/ovn-{nb,sb}.ovsschema and
# ROOT/usr/share/openvswitch/vswitch.ovsschema. pkg/ovnroot finds the same files.
#
# A root is used only when complete: it is built in a temporary directory and renamed
# into place, and its stamp (written last) must name this recipe; a stamped root that
# lost a program or cannot run it is rebuilt.
set -euo pipefail

SUITE=trixie
PACKAGES=(ovn-central ovn-host openvswitch-switch)
# The programs the launchers run, with the directories searched for each, in order.
# ovs-vswitchd is in usr/lib/openvswitch-switch: usr/sbin/ovs-vswitchd is a link through
# /etc/alternatives, which would resolve to the host's.
PROGRAMS=(ovsdb-server ovsdb-tool ovsdb-client ovs-vswitchd ovs-vsctl ovs-ofctl ovs-appctl
  ovn-northd ovn-controller ovn-nbctl ovn-sbctl ovn-trace ovn-appctl)
SEARCH=(usr/lib/openvswitch-switch usr/sbin usr/bin)
# Bump when the recipe changes, so roots made by an older one are rebuilt.
# 2: .ovnk-programs lists what each launcher runs, so a lost binary is noticed.
RECIPE=2

cache_root="${OVNK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ovnk}"
root="$cache_root/ovn-$SUITE"
stamp="$root/.ovnk-root"

say() { echo "ovn-root: $*" >&2; }

complete() {
  [ "$(sed -n 1p "$stamp" 2>/dev/null)" = "recipe $RECIPE" ] || return 1
  local p target
  for p in "${PROGRAMS[@]}"; do
    [ -x "$root/bin/$p" ] || return 1
    # What the launcher runs must be there too.
    target=$(sed -n "s/^$p //p" "$root/.ovnk-programs" 2>/dev/null)
    [ -n "$target" ] && [ -f "$root/$target" ] || return 1
  done
  for p in usr/share/ovn/ovn-nb.ovsschema usr/share/ovn/ovn-sb.ovsschema usr/share/openvswitch/vswitch.ovsschema; do
    [ -s "$root/$p" ] || return 1
  done
  # Proves the loader, the libraries and a binary are all there and agree.
  "$root/bin/ovsdb-tool" --version >/dev/null 2>&1
}

if complete; then
  echo "$root"
  exit 0
fi

for tool in apt-get dpkg-deb flock; do
  command -v "$tool" >/dev/null || { say "$tool is not on PATH; this script needs a Debian host (apt, dpkg)"; exit 1; }
done

mkdir -p "$cache_root"
exec 9>"$cache_root/.ovn-root.lock"
flock 9
# Another run may have built it while this one waited for the lock.
if complete; then
  echo "$root"
  exit 0
fi
if [ -e "$root" ]; then
  say "$root is incomplete or from an older recipe; rebuilding it"
fi

# trixie from the Debian archive the host's apt already uses, with the host's keyring
# (bookworm's debian-archive-keyring carries trixie's keys).
# (|| true: with no such archive, grep fails the substitution, and the message below says so.)
mirror="${OVNK_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(SITE)' 'Created-By: Packages' 'Origin: Debian' 2>/dev/null | grep -v -- '-security' | head -n 1 || true)}"
[ -n "$mirror" ] || { say "no Debian archive in the host's apt lists (run apt-get update as root), or set OVNK_DEBIAN_MIRROR to one"; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -s "$keyring" ] || { say "$keyring is missing (Debian package debian-archive-keyring)"; exit 1; }

start=$(date +%s)
work="$root.building"
rm -rf "$work"
mkdir -p "$work/apt/etc/apt.conf.d" "$work/apt/etc/preferences.d" "$work/apt/etc/sources.list.d" \
  "$work/apt/state/lists/partial" "$work/apt/cache/archives/partial" "$work/root/bin"
: >"$work/apt/status"
echo "deb [signed-by=$keyring] $mirror $SUITE main" >"$work/apt/etc/sources.list"
apt=(apt-get -q -o "Dir::Etc=$work/apt/etc" -o "Dir::State=$work/apt/state"
  -o "Dir::State::status=$work/apt/status" -o "Dir::Cache=$work/apt/cache"
  -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o Debug::NoLocking=1
  -o APT::Sandbox::User="$(id -un)")

say "fetching OVN and OVS from Debian $SUITE into $root (about half a minute; later runs reuse it)"
"${apt[@]}" update >"$work/apt.log" 2>&1 || { say "apt-get update of $SUITE failed:"; tail -n 5 "$work/apt.log" >&2; exit 1; }
"${apt[@]}" install -y --download-only --no-install-recommends "${PACKAGES[@]}" >>"$work/apt.log" 2>&1 ||
  { say "downloading ${PACKAGES[*]} failed:"; tail -n 5 "$work/apt.log" >&2; exit 1; }
for deb in "$work"/apt/cache/archives/*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done

loader="/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
[ -f "$work/root$loader" ] || { say "trixie's libc6 brought no loader at $loader"; exit 1; }
libs="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu"
for p in "${PROGRAMS[@]}"; do
  target=""
  for d in "${SEARCH[@]}"; do
    if [ -f "$work/root/$d/$p" ] && [ ! -L "$work/root/$d/$p" ]; then target="$d/$p"; break; fi
  done
  [ -n "$target" ] || { say "no $p in ${PACKAGES[*]} of $SUITE"; exit 1; }
  # exec keeps the process id, so a program's --pidfile names the process itself.
  cat >"$work/root/bin/$p" <<EOF
#!/bin/sh
# $p from Debian $SUITE, through $SUITE's loader and libraries (scripts/ovn-root.sh).
exec "$root$loader" --library-path "$libs" --argv0 "$p" "$root/$target" "\$@"
EOF
  chmod 0755 "$work/root/bin/$p"
  echo "$p $target" >>"$work/root/.ovnk-programs"
done

versions=$(for deb in "$work"/apt/cache/archives/{ovn-central,openvswitch-switch}_*.deb; do dpkg-deb -W --showformat '${Package} ${Version}\n' "$deb"; done)
rm -rf "$root"
mv "$work/root" "$root"
rm -rf "$work"
printf 'recipe %s\n%s\n' "$RECIPE" "$versions" >"$stamp"
complete || { say "the new root at $root does not run ovsdb-tool; see the commands above"; exit 1; }
say "ready in $(( $(date +%s) - start ))s: $(tail -n +2 "$stamp" | paste -sd',' | sed 's/,/, /')"
echo "$root"
