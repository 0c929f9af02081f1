#!/usr/bin/env bash
# Builds kube-apiserver and kubectl from the Go module proxy into a cache directory
# outside the repository, and prints the directory holding them.
#
# k8s.io/kubernetes is not meant to be consumed as a module: its go.mod points every
# k8s.io staging module at ./staging. We build it from a throwaway module that requires
# k8s.io/kubernetes and replaces each staging module with its published v0.x twin.
# The staging list is read from the release's own go.mod, so a version bump needs no edit.
set -euo pipefail

# Keep in step with k8s.io/client-go in go.mod (v0.X.Y <-> v1.X.Y).
KUBE_VERSION="${OVNK_KUBE_VERSION:-1.37.1}"
cache_root="${OVNK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ovnk}"
out="$cache_root/kube-v$KUBE_VERSION"
binaries=(kube-apiserver kubectl)

have_all() {
  local b
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

echo "kube-binaries: building kube-apiserver and kubectl v$KUBE_VERSION from the module proxy into $out" >&2
echo "kube-binaries: a cold build takes about 7 minutes on 2 cores; later runs reuse the cache" >&2

gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$gomod" ] || { echo "kube-binaries: could not download k8s.io/kubernetes@v$KUBE_VERSION" >&2; exit 1; }

staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
[ -n "$staging" ] || { echo "kube-binaries: found no staging replacements in $gomod" >&2; exit 1; }

go mod init ovnk.local/kubebuild >/dev/null 2>&1
go mod edit -go="$(sed -n 's/^go \(.*\)/\1/p' "$gomod")"
go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
for m in $staging; do
  go mod edit -replace="$m=$m@v0.${KUBE_VERSION#1.}"
done

start=$(date +%s)
for b in "${binaries[@]}"; do
  # Build beside the cache and rename, so an interrupted build never leaves a
  # truncated binary that a later run would take for a finished one.
  GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$work/$b" "k8s.io/kubernetes/cmd/$b"
  mv "$work/$b" "$out/bin/$b"
done
echo "kube-binaries: built in $(( $(date +%s) - start ))s" >&2
rm -rf "$work"
echo "$out/bin"
