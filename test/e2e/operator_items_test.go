package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/connectcmd"
	"github.com/ovnk/ovnk/pkg/cli/statuscmd"
	"github.com/ovnk/ovnk/pkg/cli/topologycmd"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/testenv"
)

// Names long enough that a table fitted to a terminal would have split them.
const (
	longNetwork = "items-a-network-name-long-enough-to-wrap"
	longConnect = "items-a-connect-name-long-enough-to-wrap"
)

// TestOperatorItemsThroughKubectl runs, through the real kubectl on one sandbox with
// its agents, the parts of issue #19's items that need the leader, the agents and the
// zones (pkg/cli/kubectl_test.go has those the API server alone answers):
//   - 6: piped, `routes --policies` keeps every port name and match whole, so grep counts
//     them; `connections` and `status` keep one row per line;
//   - 10: `topology NAME` finds a network as `network describe NAME` does, and fails as
//     it does; `connections describe` of a connect the leader refused shows the refusal;
//   - 3: `network create --wait` exits 1 with the leader's condition when the leader
//     refuses a network the plugin let through (its ranges came from another
//     configuration);
//   - 4: `status` and `network list` show that network's reason; a node whose NB is
//     gone is not ready in `status`, saying why and naming the endpoint once;
//   - 10: with the network CRDs gone, `status` still shows every agent.
func TestOperatorItemsThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	n1, n3 := ec.nodes[0], ec.nodes[2]
	ec.create(ctx,
		namespace("items-long", nil), namespace("items-green", nil), namespace("items-red", nil),
		namespace("items-red2", nil), namespace("items-refused", nil),
	)
	ec.must(ctx, "network", "create", longNetwork, "--cluster", "--namespaces", "items-long", "--topology", "layer2", "--subnet", "10.150.0.0/16")
	ec.must(ctx, "network", "create", "items-green", "--cluster", "--namespaces", "items-green", "--topology", "layer3", "--subnet", "10.151.0.0/16")
	ec.must(ctx, "network", "create", "red", "-n", "items-red", "--topology", "layer3", "--subnet", "10.152.0.0/16")
	ec.must(ctx, "connect", longNetwork, "items-green", "--name", longConnect)
	ec.must(ctx, "status", "--wait", "--timeout", "2m")

	t.Run("6: routes piped keep names whole", func(t *testing.T) {
		ec.requireRoutesWhole(ctx, t, n1, longNetwork, cluster.CUDNNetworkName(longNetwork))
	})

	t.Run("6: connections piped, one row per line", func(t *testing.T) {
		out := ec.must(ctx, "connections")
		lines := clitest.Lines(out)
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME ") {
			t.Fatalf("connections printed %d lines, want a header and the one connect:\n%s", len(lines), out)
		}
		if f := strings.Fields(lines[1]); len(f) < 2 || f[0] != longConnect || f[1] != longNetwork+",items-green" {
			t.Errorf("connections row %q: want %s, then its networks %s,items-green", lines[1], longConnect, longNetwork)
		}
	})

	t.Run("10: topology NAME finds networks as network describe does", func(t *testing.T) {
		topologyOf := func(args ...string) string {
			t.Helper()
			var v topologycmd.View
			out := ec.must(ctx, append(append([]string{"topology"}, args...), "--node", n1.name, "-o", "json")...)
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("topology %v -o json: %v\n%s", args, err, out)
			}
			return v.Network.Name
		}
		// The bare name of a UserDefinedNetwork of another namespace than the
		// kubeconfig's, which topology once looked up in the kubeconfig's alone.
		for _, args := range [][]string{{"red"}, {"items-red/red"}, {"red", "-n", "items-red"}} {
			if out := ec.must(ctx, append([]string{"network", "describe"}, args...)...); !strings.Contains(out, "items-red") {
				t.Errorf("network describe %v does not describe items-red/red:\n%s", args, out)
			}
			if got := topologyOf(args...); got != "items-red/red" {
				t.Errorf("topology %v shows network %q, want items-red/red as network describe finds", args, got)
			}
		}
		// A cluster network of the same name makes the bare name ambiguous to both.
		ec.must(ctx, "network", "create", "red", "--cluster", "--namespaces", "items-red2", "--topology", "layer3", "--subnet", "10.153.0.0/16")
		describe := ec.ovnk(ctx, nil, "network", "describe", "red")
		topology := ec.ovnk(ctx, nil, "topology", "red", "--node", n1.name)
		var exit *exec.ExitError
		if !errors.As(topology.err, &exit) || exit.ExitCode() != 1 || describe.err == nil || topology.stderr != describe.stderr || !strings.Contains(topology.stderr, `network "red" is ambiguous`) {
			t.Errorf("an ambiguous name: network describe red printed %q (%v), topology red %q (%v); want both refused alike", describe.stderr, describe.err, topology.stderr, topology.err)
		}
		if got := topologyOf("red", "-n", "items-red"); got != "items-red/red" {
			t.Errorf("topology red -n items-red shows network %q, want items-red/red", got)
		}
	})

	t.Run("10: connections describe shows the leader's refusal", func(t *testing.T) {
		// As kubectl apply would create it: connect itself refuses the subnet.
		cnc := &ovnkv1.ClusterNetworkConnect{
			ObjectMeta: metav1.ObjectMeta{Name: "items-refused-connect"},
			Spec: ovnkv1.ClusterNetworkConnectSpec{
				NetworkSelectors: ovnkv1.NetworkSelectors{{
					NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks,
					ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{NetworkSelector: metav1.LabelSelector{
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: connectcmd.NetworkNameLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{longNetwork, "items-green"}}},
					}},
				}},
				ConnectSubnets: []ovnkv1.ConnectSubnet{{CIDR: "10.96.0.0/16", NetworkPrefix: 24}},
				Connectivity:   []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
			},
		}
		ec.create(ctx, cnc)
		var out string
		err := testenv.Eventually(ctx, 60*time.Second, "connections describe to show the refusal", func(ctx context.Context) error {
			out = ec.must(ctx, "connections", "describe", cnc.Name)
			if !strings.Contains(out, "Refused:") {
				return errors.New("no refusal shown yet")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		flat := strings.Join(strings.Fields(out), " ")
		if !strings.Contains(flat, "Refused: ConnectSubnetOverlap:") || !strings.Contains(flat, "10.96.0.0/16") {
			t.Errorf("describe of the refused connect lacks its reason and subnet:\n%s", out)
		}
		if strings.Contains(out, "waiting for the leader") {
			t.Errorf("describe of a refused connect says it waits for the leader:\n%s", out)
		}
		if err := ec.c.Delete(ctx, cnc); err != nil {
			t.Fatal(err)
		}
	})

	ec.must(ctx, "status", "--wait", "--timeout", "2m") // the cluster network red too

	// A network the plugin lets through, as its ranges come from a configuration whose
	// service subnet is not the agents': the leader refuses it.
	ec.create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "items-config"}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "items-config", Name: manifests.DefaultConfigMapName},
			Data: map[string]string{manifests.AgentConfigKey: fmt.Sprintf("[default]\ncluster-subnets = %s/%d\nservice-subnets = 10.97.0.0/16\nhost-service-ips = 10.97.0.1,10.97.0.10\n",
				ec.cfg.DefaultNetwork().Subnets[0].CIDR, ec.cfg.DefaultNetwork().Subnets[0].HostSubnet)},
		})
	const refused = "items-refused"
	t.Run("3: create --wait exits 1 with the leader's refusal", func(t *testing.T) {
		start := time.Now()
		r := ec.ovnk(ctx, nil, "network", "create", refused, "--cluster", "--namespaces", "items-refused", "--topology", "layer2",
			"--subnet", "10.96.0.0/24", "--agent-namespace", "items-config", "--wait", "--timeout", "90s")
		var exit *exec.ExitError
		lines := clitest.Lines(r.stderr)
		want := "error: ClusterUserDefinedNetwork " + refused + " was created, but the leader refuses it: NetworkCreated False (SubnetOverlap): "
		if !errors.As(r.err, &exit) || exit.ExitCode() != 1 || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], want) ||
			!strings.Contains(lines[len(lines)-1], "10.96.0.0/24 overlaps service subnet 10.96.0.0/16") {
			t.Errorf("create --wait of a network the leader refuses: %v; want exit status 1 and a last line beginning %q and naming the overlap\nstdout:\n%sstderr:\n%s",
				r.err, want, r.stdout, r.stderr)
		}
		if d := time.Since(start); d > 60*time.Second {
			t.Errorf("the refusal took %s: create waited for its timeout instead of reading the condition", d)
		}
	})

	t.Run("4 and 6: status and network list show the refusal, one row per line", func(t *testing.T) {
		var c ovnkv1.ClusterUserDefinedNetwork
		if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Name: refused}, &c); err != nil {
			t.Fatal(err)
		}
		created := meta.FindStatusCondition(c.Status.Conditions, ovnkv1.ConditionNetworkCreated)
		if created == nil || created.Reason != "SubnetOverlap" {
			t.Fatalf("%s: NetworkCreated %+v, want SubnetOverlap", refused, created)
		}
		networks := []string{longNetwork, "items-green", "items-red/red", "red", refused}
		nodes, nets := statusTables(t, ec.must(ctx, "status"))
		if len(nodes) != 1+len(ec.nodes) {
			t.Errorf("status's node table has %d lines, want a header and %d nodes: %q", len(nodes), len(ec.nodes), nodes)
		}
		for _, n := range ec.nodes {
			if f := strings.Fields(requireRow(t, "status", nodes, n.name)); len(f) < 2 || f[1] != "ready" {
				t.Errorf("status: %s's agent is not ready: %q", n.name, f)
			}
		}
		if len(nets) != 1+len(networks) {
			t.Errorf("status's network table has %d lines, want a header and %d networks: %q", len(nets), len(networks), nets)
		}
		for _, name := range networks {
			if name != refused {
				requireRow(t, "status", nets, name, "Ready")
			}
		}
		requireRow(t, "status", nets, refused, "SubnetOverlap", created.Message)

		list := clitest.Lines(ec.must(ctx, "network", "list"))
		if len(list) != 1+len(networks) || !slices.Contains(strings.Fields(list[0]), "STATUS") {
			t.Errorf("network list: %d lines, want a header with STATUS and %d networks: %q", len(list), len(networks), list)
		}
		requireRow(t, "network list", list, refused, "SubnetOverlap")
		requireRow(t, "network list", list, "items-green", "Ready")
	})

	t.Run("4: a node whose NB is gone", func(t *testing.T) {
		if _, err := ec.onNode(ctx, n3, "ovs-appctl", "-t", filepath.Join(ec.s.Dir, n3.host.Dir, "nb.ctl"), "exit"); err != nil {
			t.Fatal(err)
		}
		endpoint := ec.cfg.NBEndpoints[0]
		var s statuscmd.NodeStatus
		err := testenv.Eventually(ctx, 60*time.Second, n3.name+" not ready without its NB", func(ctx context.Context) error {
			var err error
			if s, err = ec.statusOf(ctx, n3.name); err != nil {
				return err
			}
			if s.Ready || s.NBConnected || !strings.Contains(s.NotReadyReason, "northbound database") || s.LastError == "" {
				return fmt.Errorf("ready %t, NB connected %t, reason %q, last error %q", s.Ready, s.NBConnected, s.NotReadyReason, s.LastError)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, ec.agentLog(n3))
		}
		if c := strings.Count(s.LastError, endpoint); c != 1 {
			t.Errorf("%s's last error names %s %d times, want once: %q", n3.name, endpoint, c, s.LastError)
		}
		nodes, _ := statusTables(t, ec.must(ctx, "status"))
		requireRow(t, "status", nodes, n3.name, "not ready", s.NotReadyReason)
		if log, err := ec.s.AgentLog(ctx, n3.name, 200); err != nil || !strings.Contains(log, "lost the connection to the OVN northbound database") || !strings.Contains(log, endpoint) {
			t.Errorf("%s's agent did not log the lost NB, naming %s (%v):\n%s", n3.name, endpoint, err, log)
		}
	})

	t.Run("10: status without the network CRDs", func(t *testing.T) {
		ec.runKubectl(ctx, "delete", "crd", "clusteruserdefinednetworks."+ovnkv1.GroupName, "userdefinednetworks."+ovnkv1.GroupName, "--timeout=2m")
		out := ec.must(ctx, "status")
		nodes, _ := statusTables(t, out)
		for _, n := range ec.nodes {
			requireRow(t, "status", nodes, n.name)
		}
		if !strings.Contains(out, "Networks unknown: the cluster does not serve k8s.ovn.org networks") {
			t.Errorf("status without the network CRDs does not say the networks are unknown:\n%s", out)
		}
		var rep statuscmd.Report
		if err := json.Unmarshal([]byte(ec.must(ctx, "status", "-o", "json")), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Nodes) != len(ec.nodes) || rep.NetworksError == "" || rep.Ready {
			t.Errorf("status -o json without the network CRDs: %d nodes, networks error %q, ready %t; want every node, the error, not ready", len(rep.Nodes), rep.NetworksError, rep.Ready)
		}
	})
}

// statusTables splits status's plain output into its node table and its network
// table (each with its header), the blocks that begin with NODE and NETWORK.
func statusTables(t *testing.T, out string) (nodes, networks []string) {
	t.Helper()
	for _, block := range strings.Split(out, "\n\n") {
		lines := clitest.Lines(block)
		switch {
		case len(lines) == 0:
		case strings.HasPrefix(lines[0], "NODE "):
			nodes = lines
		case strings.HasPrefix(lines[0], "NETWORK "):
			networks = lines
		}
	}
	if nodes == nil {
		t.Fatalf("status has no node table:\n%s", out)
	}
	return nodes, networks
}

// requireRow requires exactly one line of a table to begin with the cell name, and
// that line to hold each of cells whole: a row split over lines fails. It returns
// the row.
func requireRow(t *testing.T, what string, lines []string, name string, cells ...string) string {
	t.Helper()
	var rows []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			rows = append(rows, l)
		}
	}
	if len(rows) != 1 {
		t.Errorf("%s has %d rows of %s, want one:\n%s", what, len(rows), name, strings.Join(lines, "\n"))
		return ""
	}
	for _, c := range cells {
		if !strings.Contains(rows[0], c) {
			t.Errorf("%s's row of %s lacks %q: %q", what, name, c, rows[0])
		}
	}
	return rows[0]
}

// requireRoutesWhole runs `routes NETWORK --node N --policies` piped and, against
// node n's NB, requires every policy's match to be whole on a line, and each port
// of the network's routers to be on exactly as many lines as grep would count in
// ovn-nbctl's lists: a route through it, or a policy naming it, each one.
func (ec *e2eCluster) requireRoutesWhole(ctx context.Context, t *testing.T, n *node, network, ovnName string) {
	t.Helper()
	snap, err := ovn.OwnedSnapshot(ctx, n.nbClient)
	if err != nil {
		t.Fatal(err)
	}
	out := ec.must(ctx, "routes", network, "--node", n.name, "--policies")
	lines := strings.Split(out, "\n")
	// A port's name as a whole word: rtos-X is inside trtos-X.
	names := func(text, port string) bool {
		return regexp.MustCompile(`(^|[^\w.-])` + regexp.QuoteMeta(port) + `($|[^\w.-])`).MatchString(text)
	}
	ix := rows.NewIndex(snap)
	counted, policies := 0, 0
	for _, r := range networkRouters(snap, ovnName) {
		for _, key := range r.Policies {
			policies++
			// A match holds no newline: found in the output, it is whole on a line.
			if m := ix.Policies[key].Match; !strings.Contains(out, m) {
				t.Errorf("routes piped: no line holds router %s's policy match %q whole", r.Name, m)
			}
		}
		for _, pk := range r.Ports {
			port := ix.RouterPorts[pk].Name
			want := 0
			for _, key := range r.StaticRoutes {
				if op := ix.Routes[key].OutputPort; op != nil && *op == port {
					want++
				}
			}
			for _, key := range r.Policies {
				if names(ix.Policies[key].Match, port) {
					want++
				}
			}
			got := 0
			for _, l := range lines {
				if names(l, port) {
					got++
				}
			}
			if got != want {
				t.Errorf("routes piped: %d lines hold port %s, want %d (its routes and policies)", got, port, want)
			}
			counted += want
		}
	}
	if policies == 0 || counted == 0 {
		t.Errorf("network %s's routers in %s's zone have %d policies and %d rows naming their ports: the check above tested nothing\n%s", ovnName, n.name, policies, counted, out)
	}
}
