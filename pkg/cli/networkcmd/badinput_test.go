package networkcmd

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
)

// TestBadInput gives the commands mistakes and requires, for each, a non-zero exit with
// one line naming the value and the fix, and no network created.
func TestBadInput(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	other := h.Namespace("", nil)
	// Networks the mistakes collide with.
	h.MustRun("create", "existing", "-n", ns, "--subnet", "10.40.0.0/16")
	h.cudnLater("bad-same-name")
	h.MustRun("create", "bad-same-name", "--cluster", "--namespaces", other, "--subnet", "10.41.0.0/16", "--role", "secondary")
	h.MustRun("create", "bad-same-name", "-n", ns, "--subnet", "10.42.0.0/16", "--role", "secondary")
	h.MustRun("create", "col-a", "-n", ns, "--subnet", "10.43.0.0/16", "--role", "secondary")
	// Created without the plugin, as kubectl apply would: its OVN name still counts.
	h.cudnLater("colb.b")
	h.Create(&ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "colb.b"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": other}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
				Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"10.44.0.0/16"}}},
		},
	})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad CIDR", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.300/16"},
			"--subnet 10.0.0.300/16: must be a CIDR in prefix notation, such as 10.128.0.0/16"},
		{"not a prefix", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0"},
			"--subnet 10.0.0.0: must be a CIDR in prefix notation"},
		{"host bits", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.1/16"},
			"--subnet 10.0.0.1/16: host bits set; did you mean 10.0.0.0/16?"},
		{"overlapping subnets", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--subnet", "10.0.128.0/17"},
			"--subnet 10.0.128.0/17: overlaps subnet 10.0.0.0/16; list one subnet per IP family"},
		{"two IPv4 subnets", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--subnet", "10.1.0.0/16"},
			"--subnet 10.0.0.0/16,10.1.0.0/16: two subnets must be one IPv4 and one IPv6 (dual-stack)"},
		{"three subnets", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16,fd00::/48,10.1.0.0/16"},
			"--subnet 10.0.0.0/16,fd00::/48,10.1.0.0/16: must have at most 2 items"},
		{"join subnet inside the subnet", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--join-subnet", "10.0.9.0/24"},
			"--join-subnet 10.0.9.0/24: overlaps subnet 10.0.0.0/16; join subnets address the gateway routers and must be outside the pod subnets"},
		{"join subnet on a secondary network", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--role", "secondary", "--join-subnet", "100.66.0.0/16"},
			"--join-subnet 100.66.0.0/16: joinSubnets is only allowed when role is Primary"},
		{"subnet overlapping another network of the namespace", []string{"create", "n1", "-n", ns, "--subnet", "10.40.128.0/17", "--role", "secondary"},
			fmt.Sprintf("--subnet 10.40.128.0/17: overlaps subnet 10.40.0.0/16 of UserDefinedNetwork %s/existing, which also serves namespace %s", ns, ns)},
		{"subnet over the network's default join subnet", []string{"create", "n1", "-n", ns, "--subnet", "100.65.0.0/20"},
			"--subnet 100.65.0.0/20: overlaps the network's join subnet 100.65.0.0/16, where its routers have their addresses: choose another --subnet, or a --join-subnet outside it"},
		{"subnet over the cluster subnet", []string{"create", "n1", "-n", ns, "--subnet", "10.244.0.0/20"},
			`--subnet 10.244.0.0/20: overlaps cluster subnet 10.244.0.0/16 of network "default", one of the cluster's own ranges: choose another --subnet`},
		{"subnet over the service subnet", []string{"create", "n1", "-n", ns, "--subnet", "10.96.0.0/20", "--role", "secondary"},
			"--subnet 10.96.0.0/20: overlaps service subnet 10.96.0.0/16, one of the cluster's own ranges: choose another --subnet"},
		{"subnet over the masquerade subnet", []string{"create", "n1", "-n", ns, "--subnet", "169.254.0.0/20"},
			"--subnet 169.254.0.0/20: overlaps masquerade subnet 169.254.0.0/17, one of the cluster's own ranges"},
		{"layer2 subnet over the transit subnet", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--subnet", "100.88.0.0/20"},
			"--subnet 100.88.0.0/20: overlaps transit subnet 100.88.0.0/16, one of the cluster's own ranges"},
		{"join subnet over the default network's", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--join-subnet", "100.64.0.0/16"},
			`--join-subnet 100.64.0.0/16: overlaps join subnet 100.64.0.0/16 of network "default", one of the cluster's own ranges: choose another --join-subnet`},
		{"a /24 layer3 subnet, whose nodes' default /24 blocks leave no room", []string{"create", "n1", "-n", ns, "--subnet", "10.60.0.0/24"},
			"--subnet 10.60.0.0/24: cannot hold a node's block of /24: give each node a block from /25 to /29 (--host-subnet), or use a larger --subnet"},
		{"a layer3 /28, with room for one block size", []string{"create", "n1", "-n", ns, "--subnet", "10.60.0.0/28", "--role", "secondary"},
			"--subnet 10.60.0.0/28: cannot hold a node's block of /24: give each node a block of /29 (--host-subnet), or use a larger --subnet"},
		{"a name OVN writes as another network's", []string{"create", "col.a", "-n", ns, "--subnet", "10.45.0.0/16", "--role", "secondary"},
			fmt.Sprintf(`NAME col.a: OVN would name it %s_col.a, as it names UserDefinedNetwork %s/col-a (OVN names write "-" as "."), and the two would share their OVN rows: choose another NAME`,
				strings.ReplaceAll(ns, "-", "."), ns)},
		{"a name OVN writes as that of a network kubectl apply created", []string{"create", "colb-b", "--cluster", "--namespaces", ns, "--topology", "layer2", "--subnet", "10.46.0.0/16", "--role", "secondary"},
			"NAME colb-b: OVN would name it cluster_udn_colb.b, as it names ClusterUserDefinedNetwork colb.b"},
		{"every address", []string{"create", "n1", "-n", ns, "--subnet", "0.0.0.0/0", "--role", "secondary"},
			"--subnet 0.0.0.0/0: is every IPv4 address: choose a private range, e.g. 10.128.0.0/16 or fd00:10::/48"},
		{"a multicast subnet", []string{"create", "n1", "-n", ns, "--subnet", "224.1.0.0/16", "--role", "secondary"},
			"--subnet 224.1.0.0/16: overlaps the multicast range 224.0.0.0/4, which pods cannot use: choose a private range"},
		{"a loopback subnet", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--subnet", "127.0.0.0/24"},
			"--subnet 127.0.0.0/24: overlaps the loopback range 127.0.0.0/8, which pods cannot use"},
		{"a layer2 /31", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--subnet", "10.61.0.0/31", "--role", "secondary"},
			"--subnet 10.61.0.0/31: leaves no address for pods once the network address, gateway and management port (and for IPv4 the broadcast address) are kept: use a larger subnet: at most /29 for IPv4, /126 for IPv6"},
		{"a layer3 /31", []string{"create", "n1", "-n", ns, "--subnet", "10.62.0.0/31", "--role", "secondary"},
			"--subnet 10.62.0.0/31: cannot hold a node's block of /24, nor any block with an address for pods: use a larger --subnet, of at most /28"},
		{"IPv6 on an IPv4-only cluster", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--subnet", "10.63.0.0/16,fd00:63::/64", "--role", "secondary"},
			"--subnet fd00:63::/64: is IPv6, and the cluster is IPv4 only: give only IPv4 subnets, or make the cluster dual-stack first"},
		{"second primary network of a namespace", []string{"create", "n1", "--cluster", "--namespaces", other + "," + ns, "--subnet", "10.50.0.0/16"},
			fmt.Sprintf("--role primary: namespace %s already has a primary network, UserDefinedNetwork %s/existing, and a namespace has at most one", ns, ns)},
		{"host subnet no longer than the subnet", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--host-subnet", "16"},
			"--host-subnet 16: hostSubnet must be a longer prefix than the prefix of cidr"},
		{"host prefix that leaves no room", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16/31"},
			"--subnet 10.0.0.0/16/31: hostSubnet leaves no room for pods"},
		{"host prefix that is not a number", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16/x"},
			"--subnet 10.0.0.0/16/x: after the CIDR comes the prefix length of each node's block"},
		{"host subnet on layer2", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--subnet", "10.0.0.0/16", "--host-subnet", "24"},
			"--host-subnet 24: a layer2 network has no per-node blocks"},
		{"unknown topology", []string{"create", "n1", "-n", ns, "--topology", "localnet", "--subnet", "10.0.0.0/16"},
			"--topology localnet: use layer3 or layer2"},
		{"unknown role", []string{"create", "n1", "-n", ns, "--role", "main", "--subnet", "10.0.0.0/16"},
			"--role main: use primary or secondary"},
		{"MTU out of range", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--mtu", "100"},
			"--mtu 100: must be between 576 and 65536"},
		{"MTU too small for IPv6", []string{"create", "n1", "-n", ns, "--subnet", "fd00::/48", "--mtu", "1000"},
			"--mtu 1000: mtu must be at least 1280 when an IPv6 subnet is used"},
		{"no subnet", []string{"create", "n1", "-n", ns},
			"--subnet is required"},
		{"subnets without IPAM", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--role", "secondary", "--ipam", "disabled", "--subnet", "10.0.0.0/24"},
			"--subnet 10.0.0.0/24: subnets must be omitted when ipam.mode is Disabled"},
		{"primary without IPAM", []string{"create", "n1", "-n", ns, "--topology", "layer2", "--ipam", "disabled"},
			"--ipam disabled: ipam.mode Disabled is only allowed for Secondary networks"},
		{"IPAM option on layer3", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--ipam", "disabled"},
			"--ipam disabled: only a layer2 network has IPAM options"},
		{"transport of a namespaced network", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--transport", "no-overlay", "--outbound-snat", "enabled", "--routing", "managed"},
			"--transport no-overlay: only a cluster network (--cluster) chooses its transport"},
		{"no-overlay without its options", []string{"create", "n1", "--cluster", "--namespaces", other, "--subnet", "10.0.0.0/16", "--transport", "no-overlay"},
			"--transport no-overlay needs --outbound-snat enabled|disabled and --routing managed|unmanaged"},
		{"no-overlay options without no-overlay", []string{"create", "n1", "--cluster", "--namespaces", other, "--subnet", "10.0.0.0/16", "--routing", "managed"},
			"--outbound-snat and --routing only apply to --transport no-overlay"},
		{"no-overlay on a secondary network", []string{"create", "n1", "--cluster", "--namespaces", other, "--subnet", "10.0.0.0/16", "--role", "secondary",
			"--transport", "no-overlay", "--outbound-snat", "enabled", "--routing", "managed"},
			"--transport no-overlay: transport NoOverlay is only supported for topology Layer3 with layer3.role Primary"},
		{"cluster network without namespaces", []string{"create", "n1", "--cluster", "--subnet", "10.0.0.0/16"},
			"--cluster needs the namespaces the network serves"},
		{"cluster network with -n", []string{"create", "n1", "--cluster", "-n", ns, "--namespaces", ns, "--subnet", "10.0.0.0/16"},
			"-n does not apply to a cluster network"},
		{"namespaces without --cluster", []string{"create", "n1", "-n", ns, "--namespaces", ns, "--subnet", "10.0.0.0/16"},
			"--namespaces and --namespace-selector choose the namespaces of a cluster network: add --cluster"},
		{"bad namespace selector", []string{"create", "n1", "--cluster", "--namespace-selector", "tenant in acme", "--subnet", "10.0.0.0/16"},
			`--namespace-selector "tenant in acme":`},
		{"invalid name", []string{"create", "Bad_Name", "-n", ns, "--subnet", "10.0.0.0/16"},
			`network name "Bad_Name": a lowercase RFC 1123 subdomain must consist of`},
		{"bad --dry-run", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "--dry-run=later"},
			"--dry-run=later: use --dry-run"},
		{"bad -o", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16", "-o", "table"},
			`unknown output format "table"`},
		{"unknown namespace", []string{"create", "n1", "-n", "no-such-namespace", "--subnet", "10.0.0.0/16"},
			`namespace "no-such-namespace" not found`},
		{"unknown namespace of a cluster network", []string{"create", "n1", "--cluster", "--namespaces", other + ",no-such-namespace", "--subnet", "10.0.0.0/16"},
			`namespace "no-such-namespace" not found`},
		{"existing name", []string{"create", "existing", "-n", ns, "--subnet", "10.99.0.0/16", "--role", "secondary"},
			`userdefinednetwork.k8s.ovn.org "existing" already exists in namespace ` + ns},
		{"list of an unknown namespace", []string{"list", "-n", "no-such-namespace"},
			`namespace "no-such-namespace" not found`},
		{"describe an unknown network", []string{"describe", "no-such-network"},
			`no network named "no-such-network"`},
		{"describe an unknown network of a namespace", []string{"describe", ns + "/no-such-network"},
			fmt.Sprintf(`no UserDefinedNetwork "no-such-network" in namespace %s`, ns)},
		{"describe in an unknown namespace", []string{"describe", "no-such-namespace/x"},
			`namespace "no-such-namespace" not found`},
		{"describe with an unknown -n", []string{"describe", "x", "-n", "no-such-namespace"},
			`namespace "no-such-namespace" not found`},
		{"describe an unknown cluster network", []string{"describe", "existing", "--cluster"},
			`no ClusterUserDefinedNetwork "existing"`},
		{"describe an ambiguous name", []string{"describe", "bad-same-name"},
			fmt.Sprintf(`network "bad-same-name" is ambiguous: it names ClusterUserDefinedNetwork bad-same-name (name it with --cluster) and UserDefinedNetwork %s/bad-same-name (name it as %s/bad-same-name)`, ns, ns)},
		{"describe two networks", []string{"describe", "a", "b"},
			"takes one network, NAME or NAMESPACE/NAME (got 2 arguments)"},
		{"describe with a namespace and --cluster", []string{"describe", ns + "/x", "--cluster"},
			"--cluster takes the name of a ClusterUserDefinedNetwork"},
		{"delete an unknown network", []string{"delete", "no-such-network"},
			`no network named "no-such-network"`},
		{"delete an ambiguous name", []string{"delete", "bad-same-name"},
			`network "bad-same-name" is ambiguous`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			before := h.networkCount()
			_, stderr, err := h.Run(tc.args...)
			clitest.OneLine(t, err, tc.want)
			if stderr != "" {
				t.Errorf("stderr: %q", stderr)
			}
			if after := h.networkCount(); after != before {
				t.Errorf("%d networks before, %d after: something was created or deleted", before, after)
			}
		})
	}
	// The ambiguous name resolves when qualified.
	h.T = t
	if out := h.MustRun("describe", "bad-same-name", "--cluster"); !strings.Contains(out, "ClusterUserDefinedNetwork") {
		t.Errorf("describe --cluster did not pick the cluster network:\n%s", out)
	}
	if out := h.MustRun("describe", "bad-same-name", "-n", ns); !strings.Contains(out, "Kind:         UserDefinedNetwork") {
		t.Errorf("describe -n did not pick the namespaced network:\n%s", out)
	}
}

// TestUnreachableCluster points the commands at a closed port: each fails with one line
// naming the server, except a client-side dry run, which needs no cluster.
func TestUnreachableCluster(t *testing.T) {
	h := newHarness(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	l.Close()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["closed"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["closed"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["closed"] = &clientcmdapi.Context{Cluster: "closed", AuthInfo: "closed", Namespace: "default"}
	cfg.CurrentContext = "closed"
	h.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, h.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"list"},
		{"describe", "blue"},
		{"delete", "blue"},
		{"create", "blue", "--subnet", "10.0.0.0/16"},
		{"create", "blue", "--subnet", "10.0.0.0/16", "--dry-run=server"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := h.Run(args...)
			clitest.OneLine(t, err, "cannot reach the API server at "+server)
		})
	}
	out, _, err := h.Run("create", "blue", "--subnet", "10.0.0.0/16", "--dry-run")
	if err != nil || !strings.Contains(out, "kind: UserDefinedNetwork") {
		t.Errorf("a client-side dry run needs no cluster: %v\n%s", err, out)
	}
}

// TestDryRun checks that client dry runs print the network, a server dry run kubectl's
// line (or the network, when -o asks), and that none creates anything.
func TestDryRun(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	for _, dry := range []string{"--dry-run", "--dry-run=client", "--dry-run=server -o yaml"} {
		t.Run(dry, func(t *testing.T) {
			h.T = t
			out := h.MustRun(append([]string{"create", "dry", "-n", ns, "--subnet", "10.0.0.0/16"}, strings.Fields(dry)...)...)
			var udn ovnkv1.UserDefinedNetwork
			if err := yamlStrict(out, &udn); err != nil {
				t.Fatalf("%s did not print YAML of a UserDefinedNetwork: %v\n%s", dry, err, out)
			}
			if udn.Kind != "UserDefinedNetwork" || udn.Name != "dry" || udn.Namespace != ns || udn.Spec.Layer3 == nil || udn.Spec.Layer3.Subnets[0].CIDR != "10.0.0.0/16" {
				t.Errorf("%s printed:\n%s", dry, out)
			}
			if h.exists(&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dry"}}) {
				t.Fatalf("%s created the network", dry)
			}
		})
	}
	h.T = t
	out := h.MustRun("create", "dry", "-n", ns, "--subnet", "10.0.0.0/16", "--role", "secondary", "--dry-run=server")
	if out != "userdefinednetwork.k8s.ovn.org/dry created (server dry run)\n" {
		t.Errorf("--dry-run=server printed %q, want kubectl's line", out)
	}
	out = h.MustRun("create", "dry", "--cluster", "--namespaces", ns, "--subnet", "10.0.0.0/16", "--dry-run=server", "-o", "name")
	if out != "clusteruserdefinednetwork.k8s.ovn.org/dry\n" {
		t.Errorf("--dry-run=server -o name printed %q", out)
	}
	if h.exists(&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}) {
		t.Fatalf("--dry-run=server created the cluster network")
	}
}
