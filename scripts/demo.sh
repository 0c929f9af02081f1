#!/usr/bin/env bash
# What `make demo` runs once the binaries are built: starts (or reuses) the local
# cluster (kubelets, containerd, the agent installed as a DaemonSet), creates a Layer3
# and a Layer2 network with two pods each through kubectl ovnk, shows what the nodes'
# OVN databases hold, and sends real packets with kubectl exec. Objects that already
# exist are left alone, so running it again only shows the views. docs/demo.md explains
# it.
#
# Needs OVNK_KUBE_BIN (make demo exports what scripts/deps.sh prints) and bin/ built.
# SANDBOX_DIR chooses the sandbox directory (default .sandbox).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
dir="${SANDBOX_DIR:-.sandbox}"
: "${OVNK_KUBE_BIN:?is not set: run make demo, or eval \"\$(scripts/deps.sh)\" first}"
for b in ovnk-sandbox ovnk-agent ovnk-cni ovnk-pause ovnk-testapp kubectl-ovnk; do
  [ -x "bin/$b" ] || { echo "demo: bin/$b is missing: run make build" >&2; exit 1; }
done

# bin/ first, so `kubectl ovnk` finds the plugin through kubectl's discovery; then the
# kubectl built for the tests, which matches the API server's version.
export PATH="$root/bin:$OVNK_KUBE_BIN:$PATH"

# run prints a command as the user would type it, then runs it.
run() {
  printf '\n$ %s\n' "$*"
  "$@"
}

# run_when_ready runs a command like run, retrying once a second while it fails, until
# it succeeds or SECONDS seconds have passed; then its last error is shown.
run_when_ready() {
  local deadline=$((SECONDS + $1)) out
  shift
  printf '\n$ %s\n' "$*"
  until out="$("$@" 2>&1)"; do
    if ((SECONDS >= deadline)); then
      printf '%s\n' "$out" >&2
      return 1
    fi
    sleep 1
  done
  printf '%s\n' "$out"
}

# create_once runs the command after `--` unless the object that `kubectl get ARGS…`
# names exists.
create_once() {
  local get=()
  while [ "$1" != "--" ]; do get+=("$1"); shift; done
  shift
  if kubectl get "${get[@]}" >/dev/null 2>&1; then
    echo "demo: ${get[*]} exists"
  else
    "$@"
  fi
}

# Pods of a namespace with a primary user-defined network may only start once it
# exists: the label says so, and it must be there when the namespace is created.
namespace() {
  kubectl create -f - <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $1
  labels:
    k8s.ovn.org/primary-user-defined-network: ""
EOF
}

# A pod of the test application (it answers "who are you" on TCP and UDP 8080, and
# has busybox's ping), which the scheduler places on node $3. Its image was built
# locally and imported into every node's containerd: nothing is pulled.
pod() {
  kubectl create -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
spec:
  nodeSelector:
    kubernetes.io/hostname: $3
  containers:
  - name: app
    image: ovnk.local/ovnk-testapp:dev
    imagePullPolicy: Never
EOF
}

bin/ovnk-sandbox up --dir "$dir"
eval "$(bin/ovnk-sandbox env --dir "$dir")"

for ns in blue green; do
  create_once namespace "$ns" -- namespace "$ns"
done
create_once userdefinednetworks.k8s.ovn.org blue -n blue -- \
  run kubectl-ovnk network create blue -n blue --topology layer3 --subnet 10.128.0.0/16
create_once clusteruserdefinednetworks.k8s.ovn.org green -- \
  run kubectl-ovnk network create green --cluster --namespaces green --topology layer2 --subnet 10.200.0.0/16
create_once pod blue-a -n blue -- pod blue blue-a ovnk-node-1
create_once pod blue-b -n blue -- pod blue blue-b ovnk-node-2
create_once pod green-a -n green -- pod green green-a ovnk-node-1
create_once pod green-b -n green -- pod green green-b ovnk-node-3
create_once pod intruder -n default -- pod default intruder ovnk-node-2

# in_pod runs a command in pod $1 (namespace/name) with kubectl exec.
in_pod() {
  local ref="$1"
  shift
  kubectl exec -n "${ref%%/*}" "${ref#*/}" -- "$@"
}

# udn_ip prints a pod's IPv4 address on its primary user-defined network (ovn-udn1).
udn_ip() {
  in_pod "$1" ip -4 addr show ovn-udn1 | awk '$1 == "inet" { split($2, a, "/"); print a[1] }'
}

# ping_pods shows, as the user would type it, a ping from pod $1 to pod $2's address on
# their user-defined network, with ping's own summary lines, once a first ping answers.
ping_pods() {
  local deadline=$((SECONDS + 60)) dst=""
  until dst="$(udn_ip "$2" 2>/dev/null)" && [ -n "$dst" ] &&
    in_pod "$1" ping -c 1 -W 1 "$dst" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "demo: $1 cannot reach $2 (${dst:-no address yet}) after a minute" >&2
      return 1
    fi
    sleep 1
  done
  printf '\n$ kubectl exec -n %s %s -- ping -c 3 -i 0.2 %s\n' "${1%%/*}" "${1#*/}" "$dst"
  in_pod "$1" ping -c 3 -i 0.2 "$dst" | tail -n 2
}

run kubectl get nodes -o wide
run kubectl get pods -n ovnk-system -o wide
run kubectl wait --for=condition=Ready --timeout=2m -n blue pod/blue-a pod/blue-b
run kubectl wait --for=condition=Ready --timeout=2m -n green pod/green-a pod/green-b
run kubectl wait --for=condition=Ready --timeout=2m -n default pod/intruder
run kubectl-ovnk status --wait --timeout 2m
# The same plugin, found by kubectl on PATH.
run kubectl ovnk network list
run kubectl-ovnk topology blue/blue --node ovnk-node-1
run kubectl-ovnk routes blue/blue --node ovnk-node-1
# A packet from blue-a on node 1 to blue-b on node 2, hop by hop across both zones.
# The networks are ready; the pods' addresses and ports follow within a reconcile, so
# the trace is retried until both ends are programmed, for a minute at most.
run_when_ready 60 kubectl ovnk trace blue/blue-a blue/blue-b --no-reply
# blue-a also has a port on the default network, for the kubelet's probes alone: a
# default-network pod's connection to it is dropped by the isolation ACL on blue-a's node.
run_when_ready 60 kubectl ovnk trace default/intruder blue/blue-a --proto tcp --port 8080 --no-reply
# Real packets through the same pairs: the pods run on the nodes' kubelets, wired into
# each node's br-int by ovnk-cni; each node runs its own OVS (userspace datapath) and
# ovn-controller, and the zones reach each other over Geneve on the underlay.
echo
echo "Real packets between real pods (kubectl exec):"
# blue-a (ovnk-node-1) to blue-b (ovnk-node-2): across zones on the Layer3 network.
ping_pods blue/blue-a blue/blue-b
# green-a (ovnk-node-1) to green-b (ovnk-node-3): through the Layer2 transit router.
run_when_ready 60 kubectl ovnk trace green/green-a green/green-b --no-reply
ping_pods green/green-a green/green-b
# blue-a to the outside world (192.0.2.10, beyond the nodes' router): the who-am-i
# server answers with the source address it saw, the node's — blue-a's traffic left
# through ovnk-node-1's gateway router and br-ex.
# (busybox 1.35's wget -T crashes; timeout bounds it instead.)
run_when_ready 60 kubectl exec -n blue blue-a -- timeout 5 wget -q -O - http://192.0.2.10:8080/

# Every agent built the Layer2 network green with OKEP-5094's transit router from the
# start (new nodes need no upgrade); on a cluster coming from the legacy topology this
# view follows the rolling upgrade node by node (docs/upgrade.md).
run kubectl ovnk upgrade-status

cat <<EOF

The sandbox keeps running. To use it from your shell:
  $(bin/ovnk-sandbox env --dir "$dir")
  export PATH="$root/bin:\$PATH"
  kubectl ovnk network list
Remove it with: make demo-down
EOF
