// Package e2e runs ovnk end to end on one machine: a real kube-apiserver, and for each
// simulated node a real host — a network namespace with its own OVS, its own OVN zone
// (NB, SB, northd, ovn-controller), exactly as each node of an OVN-Kubernetes
// interconnect cluster is its own zone — and an ovnk-agent running inside it, which
// programs the node and publishes the node's annotations itself.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// leaseNamespace holds the agents' Lease.
const leaseNamespace = "ovnk-system"

// agentBinary is cmd/ovnk-agent, built once per test binary.
func agentBinary(t *testing.T) string { return testenv.Command(t, "ovnk-agent") }

// node is a simulated node: its Node object, its host (namespace, OVS, zone) and its
// agent.
type node struct {
	name      string
	hostOctet int
	ns        *testenv.Netns
	ovs       *testenv.OVS
	nb        *testenv.NB
	northd    *testenv.Northd
	nbClient  client.Client
	agent     *testenv.Process
	// http is the agent's HTTP endpoint as the host reaches it, through the forwarder.
	http string
	// forwarder receives an error if the node's forwarder stops before the test ends.
	forwarder chan error
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
	// router is the underlay joining the nodes (underlay makes it).
	router *testenv.Netns
	// kubeconfig is the agents' kubeconfig (nodeKubeconfig writes it).
	kubeconfig string
}

func newCluster(t *testing.T, names ...string) *e2eCluster {
	t.Helper()
	return newClusterWith(t, func(*e2eCluster) {}, names...)
}

// newClusterWith is newCluster with setup run before the nodes are added (to set
// extraFlags).
func newClusterWith(t *testing.T, setup func(*e2eCluster), names ...string) *e2eCluster {
	t.Helper()
	testenv.NeedRoot(t, "every node is a network namespace with its own OVS")
	testenv.NeedBinaries(t, "go", "ip")
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
	if err := fs.Parse(ec.flags("unused", "unix:/unused", "unix:/unused", "unix:/unused")); err != nil {
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

// flags are the agent's command line inside its node; every agent shares all but
// node and endpoints.
func (ec *e2eCluster) flags(nodeName, nb, sb, ovs string) []string {
	return []string{
		"--config=", // no file: everything is on the command line
		"--kubeconfig", ec.nodeKubeconfig(),
		"--node-name", nodeName,
		"--nb-address", nb,
		"--sb-address", sb,
		"--ovs-address", ovs,
		"--gateway-bridge", gatewayBridge,
		"--datapath-type", "netdev",
		"--http-address", sandbox.NodeAgentHTTP,
		// These nodes share the host's files (no kubelet, no mount namespace): the
		// agent installs no CNI plugin on them, and serves its plans on a socket of its
		// own.
		"--cni-plugin=",
		"--cni-socket", filepath.Join(filepath.Dir(ec.nodeKubeconfig()), "cni-"+nodeName+".sock"),
		"--cluster-subnets", "10.244.0.0/16/24",
		"--leader-election-namespace", leaseNamespace,
		"--min-reconcile-interval", "50ms",
		// A crashed leader's Lease expires in 10 s rather than the default 15 s; the
		// leader still has 8 s to renew, since the API server answers slowly while other
		// test packages start hundreds of pods beside these tests (a leader that misses
		// its renewal exits, and nothing restarts it here).
		"--leader-election-lease-duration", "10s",
		"--leader-election-renew-deadline", "8s",
		"--leader-election-retry-period", "1s",
	}
}

// addNode creates the bare Node object, makes the node's host (startHost) and starts
// its agent, which publishes the node's chassis, gateway and interface addresses.
func (ec *e2eCluster) addNode(name string, hostOctet int) *node {
	t := ec.t
	n := &node{name: name, hostOctet: hostOctet}
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := ec.c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ec.c.Delete(context.Background(), obj) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ec.startHost(ctx, n)
	var err error
	if n.nbClient, err = ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{n.nb.Endpoint}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.nbClient.Close)
	ec.nodes = append(ec.nodes, n)
	ec.startAgent(n)
	return n
}

// startAgent starts n's agent inside the node's namespace with the cluster's flags and
// extraFlags; restarts keep the node's host and its HTTP address.
func (ec *e2eCluster) startAgent(n *node) {
	n.restarts++
	argv := append([]string{"ip", "netns", "exec", n.ns.Name, agentBinary(ec.t), "run"},
		ec.flags(n.name, n.nb.Endpoint, n.northd.SB.Endpoint, n.ovs.DB.Endpoint)...)
	n.agent = testenv.StartProcess(ec.t, ec.t.TempDir(), fmt.Sprintf("agent-%s-%d", n.name, n.restarts), agentEnv(ec.t, n),
		append(argv, ec.extraFlags...)...)
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

// waitReady waits until every agent answers /readyz and has published its node's
// annotations as the test made the host.
func (ec *e2eCluster) waitReady(ctx context.Context) {
	ec.t.Helper()
	for _, n := range ec.nodes {
		err := testenv.Eventually(ctx, 60*time.Second, "agent "+n.name+" ready", func(ctx context.Context) error {
			if done, err := n.agent.Exited(); done {
				return fmt.Errorf("agent exited: %v\n%s", err, n.agent.LogTail(30))
			}
			select {
			case err := <-n.forwarder:
				n.forwarder <- err // for the next poll
				return poll.Stop(err)
			default:
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
		ec.requirePublished(ctx, n)
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
