#!/usr/bin/env bash
# Makes sure the real servers the tests and the demo use are installed:
#   - OVN 25.03 and OVS 3.5 from Debian trixie, unpacked into a cached root that never
#     touches the host (scripts/ovn-root.sh; no root privileges needed);
#   - Debian packages of the host (etcd, FRR, nftables, iproute2, and ping, curl and
#     python3 for the real-packet tests, tcpdump for their captures; containerd, runc, the
#     CNI loopback plugin and a static busybox for the sandbox's kubelets and images),
#     installed with apt-get when running as root, otherwise listed with the exact
#     command to run;
#   - the Kubernetes binaries and etcd, built from the Go module proxy and cached
#     (scripts/kube-binaries.sh).
# Prints `export OVNK_OVN_ROOT=…` and `export OVNK_KUBE_BIN=…` so the Makefile finds them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# program -> Debian package that ships it
declare -A package_of=(
  [apt-get]=apt
  [dpkg-deb]=dpkg
  [etcd]=etcd-server
  [/usr/lib/frr/bgpd]=frr
  [/usr/lib/frr/zebra]=frr
  [vtysh]=frr
  [nft]=nftables
  [ip]=iproute2
  [unshare]=util-linux
  [ping]=iputils-ping
  [tcpdump]=tcpdump
  [curl]=curl
  [python3]=python3-minimal
  [containerd]=containerd
  [ctr]=containerd
  [runc]=runc
  [/usr/lib/cni/loopback]=containernetworking-plugins
  [/bin/busybox]=busybox-static
)

missing=()
for prog in "${!package_of[@]}"; do
  if [[ $prog == /* ]]; then
    [ -x "$prog" ] && continue
  else
    command -v "$prog" >/dev/null 2>&1 && continue
  fi
  missing+=("${package_of[$prog]}")
done
# One line per package, sorted, without repeats.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sed '/^$/d' | sort -u)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "deps: missing Debian packages; as root run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    echo "deps: tests that need them will skip (or fail under OVNK_REQUIRE_ALL=1)" >&2
  fi
fi

# FRR daemons drop privileges to the frr user and talk through frrvty-owned sockets; a
# root user outside those groups cannot start them inside a network namespace.
if [ "$(id -u)" -eq 0 ] && getent group frr >/dev/null; then
  for g in frr frrvty; do
    if getent group "$g" >/dev/null && ! id -nG root | tr ' ' '\n' | grep -qx "$g"; then
      usermod -aG "$g" root
    fi
  done
fi

ovn_root="$("$here/ovn-root.sh")"
kube_bin="$("$here/kube-binaries.sh")"
echo "export OVNK_OVN_ROOT=$ovn_root"
echo "export OVNK_KUBE_BIN=$kube_bin"
