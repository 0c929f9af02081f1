package networkcmd

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

func podInterface(t *testing.T, i int) cluster.PodInterface {
	t.Helper()
	ip := netip.MustParsePrefix(fmt.Sprintf("10.99.0.%d/24", 10+i))
	return cluster.PodInterface{IPs: []netip.Prefix{ip}, MAC: fmt.Sprintf("0a:58:0a:63:00:%02x", 10+i), Role: cluster.PodRoleSecondary}
}

// TestLifecycle creates every kind of network with the command, checks the object the
// API server holds, then finds it in list (table and -o json), describes it and
// deletes it.
func TestLifecycle(t *testing.T) {
	h := newHarness(t)
	// A dual-stack cluster, for the dual-stack networks.
	h.AgentConfig("[default]\ncluster-subnets = 10.244.0.0/16/24,fd00:10:244::/48/64\nservice-subnets = 10.96.0.0/16,fd00:10:96::/112\nhost-service-ips = 10.96.0.1,fd00:10:96::1\n")
	red := h.Namespace("", map[string]string{"tenant": "acme"})
	green := h.Namespace("", nil)
	for _, tc := range []struct {
		name string
		args []string
		// want is the object the API server must hold afterwards (its spec).
		want client.Object
		// row is the list table's row (NAME SCOPE TOPOLOGY ROLE SUBNETS TRANSPORT READY CONNECTED).
		row []string
		// describe are lines describe must print.
		describe []string
	}{{
		name: "layer3 namespaced dual-stack",
		args: []string{"create", "l3", "-n", red, "--subnet", "10.50.0.0/16/25", "--subnet", "fd00:10:50::/48", "--mtu", "1400", "--join-subnet", "100.66.0.0/16,fd9a::/64"},
		want: &ovnkv1.UserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: "l3", Namespace: red},
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
				Role: ovnkv1.NetworkRolePrimary, MTU: 1400,
				Subnets:     []ovnkv1.Layer3Subnet{{CIDR: "10.50.0.0/16", HostSubnet: 25}, {CIDR: "fd00:10:50::/48"}},
				JoinSubnets: ovnkv1.DualStackCIDRs{"100.66.0.0/16", "fd9a::/64"},
			}},
		},
		row:      []string{red + "/l3", "Layer3", "Primary", "10.50.0.0/16,fd00:10:50::/48", "0/0", "Pending", "<none>"},
		describe: []string{"Subnets: 10.50.0.0/16, a /25 per node", "fd00:10:50::/48, a /64 per node", "Join subnets: 100.66.0.0/16, fd9a::/64", "MTU: 1400"},
	}, {
		name: "layer2 namespaced with persistent addresses",
		args: []string{"create", "l2", "-n", green, "--topology", "layer2", "--subnet", "10.60.0.0/24", "--ipam", "persistent"},
		want: &ovnkv1.UserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: "l2", Namespace: green},
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{"10.60.0.0/24"},
				IPAM: &ovnkv1.IPAMConfig{Lifecycle: ovnkv1.IPAMLifecyclePersistent},
			}},
		},
		row:      []string{green + "/l2", "Layer2", "Primary", "10.60.0.0/24", "0/0", "Pending", "<none>"},
		describe: []string{"Topology: Layer2", "IPAM: Enabled, addresses Persistent", "Join subnets: default"},
	}, {
		name: "layer2 secondary without IPAM",
		args: []string{"create", "storage", "-n", green, "--topology", "Layer2", "--role", "secondary", "--ipam", "disabled", "--mtu", "9000"},
		want: &ovnkv1.UserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: "storage", Namespace: green},
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRoleSecondary, MTU: 9000, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled},
			}},
		},
		row:      []string{green + "/storage", "Layer2", "Secondary", "<none>", "0/0", "Pending", "<none>"},
		describe: []string{"Role: Secondary", "Subnets: <none>", "IPAM: Disabled"},
	}, {
		name: "cluster network for listed namespaces",
		args: []string{"create", "lc-listed", "--cluster", "--namespaces", red + "," + green, "--subnet", "10.70.0.0/16", "--role", "secondary", "--host-subnet", "26"},
		want: &ovnkv1.ClusterUserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: "lc-listed"},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{red, green}},
				}},
				Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
					Role: ovnkv1.NetworkRoleSecondary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.70.0.0/16", HostSubnet: 26}},
				}},
			},
		},
		row:      []string{"lc-listed", "Layer3", "Secondary", "10.70.0.0/16", "0/0", "Pending", "<none>"},
		describe: []string{"Kind: ClusterUserDefinedNetwork", "Namespaces: " + strings.Join(sorted(red, green), ", "), "OVN network: cluster_udn_lc-listed"},
	}, {
		name: "cluster network by selector, without overlay",
		args: []string{"create", "lc-selected", "--cluster", "--namespace-selector", "tenant=acme", "--subnet", "10.80.0.0/16",
			"--transport", "no-overlay", "--outbound-snat", "disabled", "--routing", "unmanaged"},
		want: &ovnkv1.ClusterUserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: "lc-selected"},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "acme"}},
				Network: ovnkv1.NetworkSpec{
					Topology:  ovnkv1.NetworkTopologyLayer3,
					Layer3:    &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.80.0.0/16"}}},
					Transport: ovnkv1.TransportOptionNoOverlay,
					NoOverlay: &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATDisabled, Routing: ovnkv1.RoutingUnmanaged},
				},
			},
		},
		row:      []string{"lc-selected", "Layer3", "Primary", "10.80.0.0/16", "0/0", "Pending", "<none>"},
		describe: []string{"Selector: tenant=acme", "Namespaces: " + red, "Transport: NoOverlay (outbound SNAT Disabled, routing Unmanaged)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			var n netview.Network
			switch w := tc.want.(type) {
			case *ovnkv1.UserDefinedNetwork:
				n.UDN = w
			case *ovnkv1.ClusterUserDefinedNetwork:
				n.CUDN = w
				h.cudnLater(w.Name)
			}
			out := h.MustRun(tc.args...)
			if want := n.ResourceType() + "/" + n.Name() + " created\n"; out != want {
				t.Errorf("create printed %q, want %q", out, want)
			}

			got := tc.want.DeepCopyObject().(client.Object)
			if !h.exists(got) {
				t.Fatalf("%s was not created", n.Ref())
			}
			if !equality.Semantic.DeepEqual(netview.Of(got).Spec(), n.Spec()) || !equality.Semantic.DeepEqual(selectorOf(got), selectorOf(tc.want)) {
				gotYAML, _ := yaml.Marshal(got)
				wantYAML, _ := yaml.Marshal(tc.want)
				t.Fatalf("the API server holds:\n%s\nwant:\n%s", gotYAML, wantYAML)
			}

			table := h.MustRun("list")
			if row := clitest.TableRow(t, table, tc.row[0]); !slices.Equal(row[:len(tc.row)], tc.row) {
				t.Errorf("list row = %q, want %q followed by the age\n%s", row, tc.row, table)
			}
			var listed unstructured.UnstructuredList
			if err := json.Unmarshal([]byte(h.MustRun("list", "-o", "json")), &listed); err != nil {
				t.Fatalf("list -o json: %v", err)
			}
			if !slices.ContainsFunc(listed.Items, func(u unstructured.Unstructured) bool {
				return u.GetKind() == n.Kind() && u.GetName() == n.Name() && u.GetNamespace() == n.Namespace()
			}) {
				t.Errorf("list -o json has no %s %s", n.Kind(), n.Ref())
			}

			args := []string{"describe", n.Ref()}
			if n.Cluster() {
				args = append(args, "--cluster")
			}
			desc := h.MustRun(args...)
			for _, want := range append(tc.describe, "Name: "+n.Name(), "Nodes: 0/0 ready") {
				if !strings.Contains(squeeze(desc), want) {
					t.Errorf("describe lacks %q:\n%s", want, desc)
				}
			}

			out = h.MustRun(append([]string{"delete"}, args[1:]...)...)
			if !strings.HasPrefix(out, n.ResourceType()+` "`+n.Name()+`" deleted`) {
				t.Errorf("delete printed %q", out)
			}
			if h.exists(got) {
				t.Errorf("%s still exists after delete", n.Ref())
			}
		})
	}
}

// squeeze collapses runs of spaces, so that checks do not depend on alignment.
func squeeze(s string) string {
	return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
}

func selectorOf(obj client.Object) metav1.LabelSelector {
	if c, ok := obj.(*ovnkv1.ClusterUserDefinedNetwork); ok {
		return c.Spec.NamespaceSelector
	}
	return metav1.LabelSelector{}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
