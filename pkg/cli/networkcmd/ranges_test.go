package networkcmd

import (
	"net/netip"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// TestClusterRanges checks that create takes the cluster's ranges from the agent's
// configuration, and without it from ovnk's defaults, saying so.
func TestClusterRanges(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)

	// Ranges of the agent's own: its transit subnet, which a Layer3 network's own (the
	// default) is not, and its service subnets, even over the user-defined networks'
	// default join subnet, and not 10.96.0.0/16.
	h.AgentConfig("[default]\ncluster-subnets = 10.244.0.0/16/24\ntransit-subnets = 100.89.0.0/16\nservice-subnets = 100.65.0.0/16\nhost-service-ips = 100.65.0.1\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the default join subnet over a configured range", []string{"create", "n1", "-n", ns, "--subnet", "10.0.0.0/16"},
			"the default join subnet 100.65.0.0/16 of user-defined networks overlaps service subnet 100.65.0.0/16, one of the cluster's own ranges: give the network its own with --join-subnet"},
		{"subnet over the configured transit subnet", []string{"create", "n1", "-n", ns, "--subnet", "100.89.0.0/20", "--role", "secondary"},
			"--subnet 100.89.0.0/20: overlaps transit subnet 100.89.0.0/16, one of the cluster's own ranges: choose another --subnet"},
		{"layer3 subnet over its own transit subnet", []string{"create", "n1", "-n", ns, "--subnet", "100.88.0.0/20", "--role", "secondary"},
			"--subnet 100.88.0.0/20: overlaps the network's transit subnet 100.88.0.0/16, where its routers have their addresses: choose another --subnet"},
		{"a selector matching no namespace", []string{"create", "n1", "--cluster", "--namespace-selector", "nothing=here", "--role", "secondary", "--subnet", "100.65.0.0/20"},
			"--subnet 100.65.0.0/20: overlaps service subnet 100.65.0.0/16, one of the cluster's own ranges: choose another --subnet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			_, stderr, err := h.Run(tc.args...)
			clitest.OneLine(t, err, tc.want)
			if strings.Contains(stderr, "agent's configuration") {
				t.Errorf("stderr %q warns about the configuration, which was read", stderr)
			}
		})
	}
	h.T = t
	h.MustRun("create", "n1", "-n", ns, "--subnet", "10.96.0.0/20", "--role", "secondary", "--dry-run=server")

	// Without the configuration: the defaults, and a warning.
	h.AgentNamespace = h.Namespace("", nil)
	_, stderr, err := h.Run("create", "n1", "-n", ns, "--subnet", "10.96.0.0/20", "--role", "secondary")
	clitest.OneLine(t, err, "--subnet 10.96.0.0/20: overlaps service subnet 10.96.0.0/16")
	warning := "Warning: cannot read the agent's configuration from ConfigMap " + h.AgentNamespace + "/" + manifests.DefaultConfigMapName +
		": it does not exist: set --agent-namespace, or the plugin config key agent-namespace, to the namespace the agent was installed in"
	if !strings.Contains(stderr, warning) {
		t.Errorf("stderr %q lacks %q", stderr, warning)
	}
}

// TestClusterRangesFallbackFamilies checks that without the agent's configuration the
// defaults are those of the families of the nodes' subnets, as the leader keeps only
// the ranges of its cluster subnets' families: on an IPv4 cluster no IPv6 default is
// reserved, so an IPv6 subnet is refused for its family (as the leader refuses it),
// not for overlapping the IPv6 default join subnet fd98::/64.
func TestClusterRangesFallbackFamilies(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	v, err := cluster.NodeSubnetsCodec.Format(map[string][]netip.Prefix{cluster.DefaultNetworkName: {netip.MustParsePrefix("10.244.1.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	h.Node("v4-node", map[string]string{cluster.AnnotationNodeSubnets: v})
	h.AgentNamespace = h.Namespace("", nil) // no ConfigMap: the fallback
	_, stderr, err := h.Run("create", "n1", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.71.0.0/16,fd98::/48", "--dry-run=server")
	clitest.OneLine(t, err, "--subnet fd98::/48: is IPv6, and the cluster is IPv4 only: give only IPv4 subnets, or make the cluster dual-stack first")
	if !strings.Contains(stderr, "ovnk's defaults for IPv4 and at the default network's subnets the nodes publish") {
		t.Errorf("stderr %q does not name the family of the defaults", stderr)
	}
	_, _, err = h.Run("create", "n1", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.244.0.0/16")
	clitest.OneLine(t, err, `--subnet 10.244.0.0/16: overlaps subnet 10.244.1.0/24 of network "default" on node v4-node, one of the cluster's own ranges: choose another --subnet`)
}

// TestCreateWithoutAgentAccess checks that a user who may create networks and read what
// create read before it checked the cluster's ranges (namespaces, networks), but neither
// the agent's ConfigMap nor the nodes, gets the other checks and a warning naming the
// permissions, not a refusal.
func TestCreateWithoutAgentAccess(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	user := "tenant-" + ns
	h.Create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{ovnkv1.GroupName}, Resources: []string{"clusteruserdefinednetworks", "userdefinednetworks"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{ovnkv1.GroupName}, Resources: []string{"userdefinednetworks"}, Verbs: []string{"create"}},
		},
	})
	h.Create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	})
	_, stderr, err := h.Run("create", "n1", "-n", ns, "--subnet", "10.77.0.0/16", "--dry-run=server", "--as", user)
	if err != nil {
		t.Fatalf("create as %s (no configmaps, no nodes): %v\nstderr: %s", user, err, stderr)
	}
	for _, want := range []string{
		"you may not read it: ask for get on configmap " + manifests.DefaultConfigMapName + " in namespace " + h.AgentNamespace,
		"but not at the nodes' subnets, as you may not list nodes either (ask for list on nodes)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	_, _, err = h.Run("create", "n2", "-n", ns, "--subnet", "10.96.0.0/20", "--role", "secondary", "--as", user)
	clitest.OneLine(t, err, "--subnet 10.96.0.0/20: overlaps service subnet 10.96.0.0/16")
}
