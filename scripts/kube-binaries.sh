#!/usr/bin/env bash
# Builds the Kubernetes binaries of the local cluster (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl) and etcd from the Go module proxy into a cache directory
# outside the repository, and prints the directory holding them.
#
# k8s.io/kubernetes is not meant to be consumed as a module: its go.mod points every
# k8s.io staging module at ./staging. We build it from a throwaway module that requires
# k8s.io/kubernetes and replaces each staging module with its published v0.x twin.
# The staging list is read from the release's own go.mod, so a version bump needs no edit.
#
# etcd is built too, at the version the Kubernetes release pins (its build/dependencies.yaml):
# kube-apiserver 1.37 against Debian's etcd 3.4 starts, but its watches fail with "Too large
# resource version" (3.4 lacks the progress requests the watch cache relies on), which
# breaks every informer.
set -euo pipefail

# Keep in step with k8s.io/client-go in go.mod (v0.X.Y <-> v1.X.Y).
KUBE_VERSION="${OVNK_KUBE_VERSION:-1.37.1}"
cache_root="${OVNK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ovnk}"
out="$cache_root/kube-v$KUBE_VERSION"
kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
binaries=("${kube_binaries[@]}" etcd)
# Bump when the build below changes, so binaries cached by an older recipe are rebuilt.
# 2: stamp the release version into the binaries (without it they report
#    v0.0.0-master+$Format:%H$, and `kubectl version` exits 1 failing to parse it);
#    build etcd.
# 3: kubelet, kube-controller-manager and kube-scheduler, in the same go build.
RECIPE=3

have_all() {
  local b
  [ "$(cat "$out/bin/.recipe" 2>/dev/null)" = "$RECIPE" ] || return 1
  for b in "${binaries[@]}"; do [ -x "$out/bin/$b" ] || return 1; done
}

if have_all; then
  echo "$out/bin"
  exit 0
fi

command -v go >/dev/null || { echo "kube-binaries: go is not on PATH; install Go 1.26 or newer" >&2; exit 1; }

# Two test runs starting at once must not build into the same directory: the second
# waits for the first and then finds the binaries.
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if have_all; then
  echo "$out/bin"
  exit 0
fi

work="$out/build"
rm -rf "$work"
mkdir -p "$work" "$out/bin"
cd "$work"

echo "kube-binaries: building ${binaries[*]} for v$KUBE_VERSION from the module proxy into $out" >&2
echo "kube-binaries: a cold build takes about 15 minutes on 2 cores; later runs reuse the cache" >&2

download=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION")
gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\([^"]*\)".*/\1/p' <<<"$download")
srcdir=$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"$download")
[ -n "$gomod" ] || { echo "kube-binaries: could not download k8s.io/kubernetes@v$KUBE_VERSION" >&2; exit 1; }

staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
[ -n "$staging" ] || { echo "kube-binaries: found no staging replacements in $gomod" >&2; exit 1; }

go mod init ovnk.local/kubebuild >/dev/null 2>&1
go mod edit -go="$(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
for m in $staging; do
  go mod edit -replace="$m=$m@v0.${KUBE_VERSION#1.}"
done

# What Kubernetes' own build (hack/lib/version.sh) stamps in. A module download has no git
# commit, so gitCommit keeps its placeholder and the tree state says "archive".
minor=${KUBE_VERSION#*.}
minor=${minor%%.*}
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=${KUBE_VERSION%%.*} -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$build_date"
done

etcd_version="${OVNK_ETCD_VERSION:-$(sed -n '/name: "etcd"$/{n;s/^[[:space:]]*version:[[:space:]]*//p;}' \
  "$srcdir/build/dependencies.yaml")}"
[ -n "$etcd_version" ] || { echo "kube-binaries: no etcd version in k8s.io/kubernetes@v$KUBE_VERSION build/dependencies.yaml" >&2; exit 1; }

start=$(date +%s)
# One go build for all of them, so the packages they share compile once. Built beside
# the cache and renamed, so an interrupted build never leaves a truncated binary that a
# later run would take for a finished one.
mkdir -p "$work/out"
pkgs=()
for b in "${kube_binaries[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$work/out/" "${pkgs[@]}"
for b in "${kube_binaries[@]}"; do mv "$work/out/$b" "$out/bin/$b"; done

# etcd gets its own throwaway module: its dependency graph is not Kubernetes'. Its
# server module's go.mod replaces its sibling modules with ../ paths, which is why it
# cannot be `go install`ed; required from outside, the published versions are used.
mkdir -p "$work/etcd"
(
  cd "$work/etcd"
  go mod init ovnk.local/etcdbuild >/dev/null 2>&1
  go mod edit -require="go.etcd.io/etcd/server/v3@v$etcd_version"
  GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$work/etcd/etcd.bin" "go.etcd.io/etcd/server/v3"
)
mv "$work/etcd/etcd.bin" "$out/bin/etcd"
echo "$RECIPE" >"$out/bin/.recipe"
echo "kube-binaries: built in $(( $(date +%s) - start ))s" >&2
rm -rf "$work"
echo "$out/bin"
