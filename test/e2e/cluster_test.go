// Package e2e runs ovnk end to end on the real cluster of pkg/sandbox, one cluster per
// test: etcd, kube-apiserver, the controller manager and the scheduler, and three nodes,
// each a network namespace with its own OVS, its own OVN zone (NB, SB, northd,
// ovn-controller) — as each node of an OVN-Kubernetes interconnect cluster is its own
// zone — containerd and kubelet. The agents run as the DaemonSet's pods that `kubectl
// ovnk install` created, publish their nodes' annotations themselves and wire the pods
// the scheduler places with their CNI plugin.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent"
	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/agent/zone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/sandboxtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }

// leaseNamespace holds the agents' Leases: the namespace they are installed in.
const leaseNamespace = manifests.DefaultNamespace

// node is a node of the test's cluster: its host in the sandbox, and its zone.
type node struct {
	name string
	host sandbox.Node
	// nb and northd are the zone's NB and the ovn-northd compiling it into the zone's
	// SB, for ovn-nbctl and ovn-trace.
	nb       *testenv.NB
	northd   *testenv.Northd
	nbClient client.Client
	// stopped is set once stopNode has stopped the node.
	stopped bool
}

// e2eCluster is the test's sandbox, an admin client of its API server, its nodes and
// the configuration every agent runs with.
type e2eCluster struct {
	t       *testing.T
	s       *sandbox.Sandbox
	c       ctrlclient.Client
	nodes   []*node
	kubectl string
	// cfg is the agents' configuration (but the node name), read from the config file
	// the sandbox installed them with.
	cfg *config.Config
	// pluginEnv overrides the plugin's environment in every run, before the caller's:
	// e.g. no settings file, on a cluster without the agent.
	pluginEnv []string
}

// newCluster starts a sandbox for the test; agentArgs are agent settings beyond the
// sandbox's, as --key=value. It returns once every node runs a ready agent pod and has
// published what the test's expectations are compiled from.
func newCluster(t *testing.T, agentArgs ...string) *e2eCluster {
	t.Helper()
	testenv.NeedOVN(t)
	ec := &e2eCluster{t: t, kubectl: testenv.KubeBinary(t, "kubectl")}
	ec.s = sandboxtest.Start(t, agentArgs...)
	rc, err := clientcmd.BuildConfigFromFlags("", ec.s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := agent.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if ec.c, err = ctrlclient.New(rc, ctrlclient.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	ec.loadConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, h := range ec.s.Nodes {
		zone := testenv.ZoneAt(t, h.NBEndpoint, h.SBEndpoint)
		n := &node{name: h.Name, host: h, nb: zone.NB, northd: zone}
		if n.nbClient, err = ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{h.NBEndpoint}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.nbClient.Close)
		ec.nodes = append(ec.nodes, n)
		ec.requirePublished(ctx, n)
	}
	return ec
}

// loadConfig reads the agents' configuration from the sandbox's config file, as the
// agents do, so the expectations are compiled with exactly their settings.
func (ec *e2eCluster) loadConfig() {
	fs := pflag.NewFlagSet("e2e", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse([]string{"--config", ec.s.AgentConfigFile(), "--node-name", "unused"}); err != nil {
		ec.t.Fatal(err)
	}
	var err error
	if ec.cfg, err = config.Load(fs, func(string) string { return "" }); err != nil {
		ec.t.Fatal(err)
	}
}

// agentLog is the tail of n's agent log, for failure messages.
func (ec *e2eCluster) agentLog(n *node) string {
	if n.stopped {
		return "(node " + n.name + " is stopped)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := ec.s.AgentLog(ctx, n.name, 30)
	if err != nil {
		return fmt.Sprintf("(no agent log of %s: %v)", n.name, err)
	}
	return "--- agent log of " + n.name + ":\n" + out
}

// rollOut restarts n's agent with settings args added to the installed ones, as
// docs/upgrade.md rolls a change out node by node; the other agents keep theirs.
func (ec *e2eCluster) rollOut(ctx context.Context, n *node, args ...string) {
	ec.t.Helper()
	if err := ec.s.RollOutAgent(ctx, n.name, args...); err != nil {
		ec.t.Fatalf("roll out %v to %s: %v\n%s", args, n.name, err, ec.agentLog(n))
	}
}

// crashAgent kills n's agent with SIGKILL, as a crash would, and waits for kubelet to
// have restarted it and for it to be ready.
func (ec *e2eCluster) crashAgent(ctx context.Context, n *node) {
	ec.t.Helper()
	if err := ec.s.RestartAgent(ctx, n.name, syscall.SIGKILL); err != nil {
		ec.t.Fatalf("crash the agent of %s: %v\n%s", n.name, err, ec.agentLog(n))
	}
}

// stopNode stops n as a machine that fails: kubelet, its pods (its agent among them),
// containerd, OVS and its zone. Its Node object stays.
func (ec *e2eCluster) stopNode(ctx context.Context, n *node) {
	ec.t.Helper()
	if err := ec.s.StopNode(ctx, n.name); err != nil {
		ec.t.Fatal(err)
	}
	n.stopped = true
}

// onNode runs argv on node n (sandbox.Sandbox.Command: OVS's and OVN's tools find the
// node's servers) and returns its output.
func (ec *e2eCluster) onNode(ctx context.Context, n *node, argv ...string) (string, error) {
	cmd, err := ec.s.Command(ctx, sandbox.Target{Node: n.name}, argv...)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("on %s: %s: %w\n%s", n.name, strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// expected compiles, from the objects in the API server, what each zone must hold.
func (ec *e2eCluster) expected(ctx context.Context, nodeName string) (string, *topology.Result, error) {
	in, err := zone.ListInputs(ctx, ec.c)
	if err != nil {
		return "", nil, err
	}
	in.Config, in.DefaultNetwork = ec.cfg.ClusterConfig(), ec.cfg.DefaultNetwork()
	st, _ := cluster.Build(in)
	res, err := topology.Compile(st, nodeName)
	if err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, res.Rows); err != nil {
		return "", nil, err
	}
	return b.String(), res, nil
}

// actual prints, whole, every row ovnk owns in a node's NB, keyed like the compiler's.
func (n *node) actual(ctx context.Context) (string, error) {
	s, err := ovn.OwnedSnapshot(ctx, n.nbClient)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = ovn.WriteRows(&b, s)
	return b.String(), err
}

// live are the nodes that have not been stopped.
func (ec *e2eCluster) live() []*node {
	var out []*node
	for _, n := range ec.nodes {
		if !n.stopped {
			out = append(out, n)
		}
	}
	return out
}

// requireZonesMatch waits until the zone of every node still running holds exactly
// what the compiler says for it, given the objects in the API server; check, when not
// nil, must hold too.
func (ec *e2eCluster) requireZonesMatch(ctx context.Context, check func(node string, res *topology.Result) error) {
	ec.t.Helper()
	for _, n := range ec.live() {
		var want, got string
		err := testenv.Eventually(ctx, 60*time.Second, "zone "+n.name+" as compiled", func(ctx context.Context) error {
			var res *topology.Result
			var err error
			if want, res, err = ec.expected(ctx, n.name); err != nil {
				return err
			}
			if check != nil {
				if err := check(n.name, res); err != nil {
					return err
				}
			}
			if got, err = n.actual(ctx); err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("zone differs")
			}
			return nil
		})
		if err != nil {
			ec.t.Fatalf("%v\n--- NB of %s:\n%s\n--- compiled:\n%s\n%s", err, n.name, got, want, ec.agentLog(n))
		}
	}
}

// requirePublished waits until n's agent has published its chassis, gateway and
// primary addresses, and fails unless they are what the sandbox's installer made the
// host: the values the zones' expectations are compiled from.
func (ec *e2eCluster) requirePublished(ctx context.Context, n *node) {
	ec.t.Helper()
	addr := netip.MustParsePrefix(n.host.Address)
	want := cluster.Gateway{
		Mode: cluster.GatewayModeShared, InterfaceID: sandbox.GatewayBridge + "_" + n.name,
		MAC: n.host.MAC, IPs: []netip.Prefix{addr}, NextHops: []netip.Addr{netip.MustParseAddr(sandbox.UnderlayGateway)},
		BridgeID: sandbox.GatewayBridge, NodePortEnable: true,
	}
	out, err := ec.onNode(ctx, n, "ovs-vsctl", "get", "Open_vSwitch", ".", "external_ids:system-id")
	if err != nil {
		ec.t.Fatal(err)
	}
	chassis := strings.Trim(strings.TrimSpace(out), `"`)
	ref := cluster.ObjectRef{Kind: "Node", Name: n.name}
	var last string
	err = testenv.Eventually(ctx, 60*time.Second, "node "+n.name+"'s annotations", func(ctx context.Context) error {
		var obj corev1.Node
		if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, &obj); err != nil {
			return err
		}
		a := obj.Annotations
		last = fmt.Sprint(a)
		for _, k := range []string{cluster.AnnotationNodeChassisID, cluster.AnnotationL3GatewayConfig, cluster.AnnotationNodePrimaryIfAddr} {
			if a[k] == "" {
				return fmt.Errorf("no %s yet", k)
			}
		}
		var problems []string
		if got := a[cluster.AnnotationNodeChassisID]; got != chassis {
			problems = append(problems, fmt.Sprintf("chassis %q, want OVS's system-id %q", got, chassis))
		}
		gw, err := cluster.L3GatewayConfigCodec.Parse(ref, a[cluster.AnnotationL3GatewayConfig])
		if err != nil {
			problems = append(problems, err.Error())
		} else if !reflect.DeepEqual(gw, want) {
			problems = append(problems, fmt.Sprintf("gateway %+v, want %+v", gw, want))
		}
		primary, err := cluster.PrimaryIfAddrCodec.Parse(ref, a[cluster.AnnotationNodePrimaryIfAddr])
		if err != nil {
			problems = append(problems, err.Error())
		} else if !reflect.DeepEqual(primary, want.IPs) {
			problems = append(problems, fmt.Sprintf("primary addresses %v, want %v", primary, want.IPs))
		}
		if len(problems) > 0 {
			// Published, and wrong: waiting will not fix it.
			return poll.Stop(errors.New(strings.Join(problems, "; ")))
		}
		return nil
	})
	if err != nil {
		ec.t.Fatalf("%v\nannotations: %s\n%s", err, last, ec.agentLog(n))
	}
}
