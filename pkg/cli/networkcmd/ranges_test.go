package networkcmd

import (
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
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
	warning := "Warning: cannot read the agent's configuration from ConfigMap " + h.AgentNamespace + "/" + manifests.DefaultConfigMapName + ": it does not exist"
	if !strings.Contains(stderr, warning) {
		t.Errorf("stderr %q lacks %q", stderr, warning)
	}
}
