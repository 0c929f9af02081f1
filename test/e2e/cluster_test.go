// Package e2e runs ovnk end to end on one machine: a real kube-apiserver, and for each
// simulated node an ovnk-agent process with its own OVN Northbound database, exactly as
// each node of an OVN-Kubernetes interconnect cluster is its own zone.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent"
	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/agent/zone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// leaseNamespace holds the agents' Lease.
const leaseNamespace = "ovnk-system"

// agentBinary is cmd/ovnk-agent, built once per test binary.
func agentBinary(t *testing.T) string { return testenv.Command(t, "ovnk-agent") }

// node is a simulated node: its Node object, its NB and its agent.
type node struct {
	name      string
	hostOctet int
	nb        *testenv.NB
	nbClient  client.Client
	agent     *testenv.Process
	http      string
	restarts  int
}

// e2eCluster is the API server, the nodes and the agents' shared configuration.
type e2eCluster struct {
	t     *testing.T
	kube  *testenv.Kube
	c     ctrlclient.Client
	nodes []*node
	cfg   *config.Config // the configuration every agent runs with (but its node name)
	// extraFlags are appended to the command line of agents started from now on.
	extraFlags []string
}

func newCluster(t *testing.T, names ...string) *e2eCluster {
	t.Helper()
	return newClusterWith(t, func(*e2eCluster) {}, names...)
}

// newClusterWith is newCluster with setup run before the nodes are added (to set
// extraFlags).
func newClusterWith(t *testing.T, setup func(*e2eCluster), names ...string) *e2eCluster {
	t.Helper()
	testenv.NeedBinaries(t, "go")
	testenv.NeedOVN(t)
	k := testenv.SharedKube(t)
	scheme, err := agent.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctrlclient.New(k.RESTConfig, ctrlclient.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ec := &e2eCluster{t: t, kube: k, c: c}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); ctrlclient.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("e2e", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse(ec.flags("unused", "unix:/unused", "127.0.0.1:1")); err != nil {
		t.Fatal(err)
	}
	if ec.cfg, err = config.Load(fs, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	setup(ec)
	for i, name := range names {
		ec.addNode(name, 2+i)
	}
	return ec
}

// flags are the agent's command line; every agent shares all but node and endpoints.
func (ec *e2eCluster) flags(nodeName, nb, httpAddr string) []string {
	return []string{
		"--config=", // no file: everything is on the command line
		"--kubeconfig", ec.kube.Kubeconfig,
		"--node-name", nodeName,
		"--nb-address", nb,
		// These agents program their zones' NBs alone: the test publishes what a node
		// would (addNode) and no packet flows here (the sandbox's nodes are real hosts).
		"--node-dataplane=false",
		"--http-address", httpAddr,
		"--cluster-subnets", "10.244.0.0/16/24",
		"--leader-election-namespace", leaseNamespace,
		"--min-reconcile-interval", "50ms",
		// A crashed leader's Lease expires in seconds rather than the default 15 s.
		"--leader-election-lease-duration", "4s",
		"--leader-election-renew-deadline", "3s",
		"--leader-election-retry-period", "500ms",
	}
}

// addNode creates the Node object with what the node itself would publish (its chassis,
// gateway and interface addresses), starts an NB for it, and starts its agent.
func (ec *e2eCluster) addNode(name string, hostOctet int) *node {
	t := ec.t
	n := &node{name: name, hostOctet: hostOctet}
	ip := fmt.Sprintf("172.18.0.%d", hostOctet)
	gw, err := cluster.L3GatewayConfigCodec.Format(cluster.Gateway{
		Mode: cluster.GatewayModeShared, InterfaceID: "breth0_" + name,
		MAC: fmt.Sprintf("02:42:ac:12:00:%02x", hostOctet), IPs: prefixes(ip + "/16"), NextHops: addrs("172.18.0.1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	primary, err := cluster.PrimaryIfAddrCodec.Format(prefixes(ip + "/16"))
	if err != nil {
		t.Fatal(err)
	}
	// The node's agent adds k8s.ovn.org/layer2-topology-version itself.
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		cluster.AnnotationNodeChassisID:     "chassis-" + name,
		cluster.AnnotationL3GatewayConfig:   gw,
		cluster.AnnotationNodePrimaryIfAddr: primary,
	}}}
	if err := ec.c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ec.c.Delete(context.Background(), obj) })
	n.nb = testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if n.nbClient, err = ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{n.nb.Endpoint}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.nbClient.Close)
	ec.nodes = append(ec.nodes, n)
	ec.startAgent(n)
	return n
}

func (ec *e2eCluster) startAgent(n *node) {
	n.http = freeAddr(ec.t)
	n.restarts++
	n.agent = testenv.StartProcess(ec.t, ec.t.TempDir(), fmt.Sprintf("agent-%s-%d", n.name, n.restarts), nil,
		append(append([]string{agentBinary(ec.t), "run"}, ec.flags(n.name, n.nb.Endpoint, n.http)...), ec.extraFlags...)...)
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

// waitReady waits until every agent answers /readyz.
func (ec *e2eCluster) waitReady(ctx context.Context) {
	ec.t.Helper()
	for _, n := range ec.nodes {
		err := testenv.Eventually(ctx, 60*time.Second, "agent "+n.name+" ready", func(ctx context.Context) error {
			if done, err := n.agent.Exited(); done {
				return fmt.Errorf("agent exited: %v\n%s", err, n.agent.LogTail(30))
			}
			resp, err := http.Get("http://" + n.http + "/readyz")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				return fmt.Errorf("readyz: %s %s", resp.Status, b.String())
			}
			return nil
		})
		if err != nil {
			ec.t.Fatalf("%v\n%s", err, n.agent.LogTail(30))
		}
	}
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

// requireZonesMatch waits until every zone's NB holds exactly what the compiler says
// for it, given the objects in the API server; check, when not nil, must hold too.
func (ec *e2eCluster) requireZonesMatch(ctx context.Context, check func(node string, res *topology.Result) error) {
	ec.t.Helper()
	for _, n := range ec.nodes {
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
			ec.t.Fatalf("%v\n--- NB of %s:\n%s\n--- compiled:\n%s\n--- agent log:\n%s", err, n.name, got, want, n.agent.LogTail(30))
		}
	}
}
