#!/usr/bin/env bash
# Builds the plugin's release archives, one per platform krew serves, named as
# deploy/krew/ovnk.yaml expects: kubectl-ovnk_<version>_<os>_<arch>.tar.gz, each holding
# the binary and kubectl_complete-ovnk. Usage: scripts/dist.sh VERSION [OUTDIR]
set -euo pipefail
version=${1:?usage: scripts/dist.sh VERSION [OUTDIR]}
out=${2:-dist}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  os=${platform%/*} arch=${platform#*/}
  stage=$(mktemp -d)
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -C "$root" -trimpath \
    -ldflags "-X github.com/ovnk/ovnk/pkg/version.Version=$version" \
    -o "$stage/kubectl-ovnk" ./cmd/kubectl-ovnk
  cp "$root/completions/kubectl_complete-ovnk" "$stage/"
  tar -C "$stage" -czf "$out/kubectl-ovnk_${version}_${os}_${arch}.tar.gz" kubectl-ovnk kubectl_complete-ovnk
  rm -rf "$stage"
  echo "$out/kubectl-ovnk_${version}_${os}_${arch}.tar.gz"
done
