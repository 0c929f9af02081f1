package connectcmd

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// TestRangesWithoutAgentConfig checks the cluster's ranges when the agent's
// configuration cannot be read: ovnk's defaults, with the default network's subnets
// the nodes publish for its cluster subnets, and a warning saying why.
func TestRangesWithoutAgentConfig(t *testing.T) {
	h := newHarness(t)
	subnets, err := cluster.NodeSubnetsCodec.Format(map[string][]netip.Prefix{cluster.DefaultNetworkName: {netip.MustParsePrefix("10.244.1.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	h.Node("fallback-node", map[string]string{cluster.AnnotationNodeSubnets: subnets})
	h.cudn("fallback-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("fallback-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})

	for _, tc := range []struct {
		name string
		// config is the ConfigMap's agent.conf; "" for no ConfigMap.
		config string
		why    string
	}{
		{"no ConfigMap", "", "it does not exist: set --agent-namespace, or the plugin config key agent-namespace, to the namespace the agent was installed in"},
		{"a config the agent would refuse", "[default]\ncluster-subnets = 10.244.0.0/16/33\n", "it does not load as the agent would load it: [default] cluster-subnets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			if tc.config == "" {
				h.AgentNamespace = h.Namespace("", nil)
			} else {
				h.AgentConfig(tc.config)
			}
			warning := "Warning: cannot read the agent's configuration from ConfigMap " + h.AgentNamespace + "/" + manifests.DefaultConfigMapName + ": " + tc.why
			for _, refused := range []struct{ subnet, want string }{
				{"10.244.0.0/16", `--subnet 10.244.0.0/16 overlaps subnet 10.244.1.0/24 of network "default" on node fallback-node`},
				{"10.96.0.0/20", "--subnet 10.96.0.0/20 overlaps service subnet 10.96.0.0/16"},
			} {
				_, stderr, err := h.Run("connect", "fallback-blue", "fallback-green", "--subnet", refused.subnet, "--dry-run")
				clitest.OneLine(t, err, refused.want)
				if !strings.Contains(stderr, warning) {
					t.Errorf("--subnet %s: stderr %q lacks %q", refused.subnet, stderr, warning)
				}
			}
			out, stderr, err := h.Run("connect", "fallback-blue", "fallback-green", "--dry-run")
			if err != nil || !strings.Contains(out, "kind: ClusterNetworkConnect") {
				t.Fatalf("connect --dry-run: %v\n%s", err, out)
			}
			if !strings.Contains(stderr, warning) || !strings.Contains(stderr, "ovnk's defaults for IPv4 and at the default network's subnets the nodes publish, and the leader checks the configured ones") {
				t.Errorf("stderr %q does not warn that the configuration was not read", stderr)
			}
			// The config went through a temporary file: the warning names the ConfigMap.
			if strings.Contains(stderr, os.TempDir()) {
				t.Errorf("the warning names a temporary file: %q", stderr)
			}
		})
	}
}

// TestNetworkNotSelected checks that a connect subnet overlapping a network the connect
// does not select is allowed, as the leader allows it, with a warning naming the
// network; a network that can never be connected gets none.
func TestNetworkNotSelected(t *testing.T) {
	h := newHarness(t)
	h.cudn("alone-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("alone-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})
	h.cudn("alone-lan", ovnkv1.NetworkTopologyLayer2, []string{"172.31.5.0/24"})
	h.cudn("alone-storage", ovnkv1.NetworkTopologyLayer2, []string{"172.31.6.0/24"}, secondary)

	out, stderr, err := h.Run("connect", "alone-blue", "alone-green", "--subnet", "172.31.0.0/16", "--dry-run")
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr)
	}
	if printed := printedConnect(t, out); printed.Name != "alone-blue-alone-green" {
		t.Fatalf("connect printed connect %s:\n%s", printed.Name, out)
	}
	want := "Warning: --subnet 172.31.0.0/16 overlaps subnet 172.31.5.0/24 of network alone-lan, which this connect does not select, so it is allowed; but no connect through this subnet could ever connect alone-lan: choose another --subnet if it may join these networks later\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if strings.Contains(stderr, "alone-storage") {
		t.Errorf("stderr warns about a secondary network, which is never connected: %q", stderr)
	}
}

// TestServiceCIDRFallback checks the deprecated --service-cidr: the service subnets
// when the agent's configuration cannot be read, in place of ovnk's defaults, and
// ignored when it can.
func TestServiceCIDRFallback(t *testing.T) {
	h := newHarness(t)
	h.cudn("svc-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("svc-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})
	if fl := newConnectCmd(&cmdutil.Factory{}).Flags().Lookup("service-cidr"); fl == nil || !fl.Hidden || !strings.Contains(fl.Deprecated, "used only when that cannot be read") {
		t.Errorf("--service-cidr is not a hidden flag deprecated for the agent's configuration: %+v", fl)
	}

	// The ConfigMap read: its service subnets count, not the flag's.
	out, stderr, err := h.Run("connect", "svc-blue", "svc-green", "--subnet", "172.20.0.0/16", "--service-cidr", "172.16.0.0/12", "--dry-run")
	if err != nil || !strings.Contains(out, "kind: ClusterNetworkConnect") {
		t.Fatalf("connect with the ConfigMap read and --service-cidr: %v\n%s", err, stderr)
	}

	// Without it: the flag's service subnets, and the default ones are free.
	h.AgentNamespace = h.Namespace("", nil)
	_, stderr, err = h.Run("connect", "svc-blue", "svc-green", "--subnet", "172.20.0.0/16", "--service-cidr", "172.16.0.0/12", "--dry-run")
	clitest.OneLine(t, err, "--subnet 172.20.0.0/16 overlaps service subnet 172.16.0.0/12")
	if !strings.Contains(stderr, "(with --service-cidr 172.16.0.0/12 as the service subnets)") {
		t.Errorf("stderr %q does not say the fallback took --service-cidr", stderr)
	}
	if _, _, err := h.Run("connect", "svc-blue", "svc-green", "--subnet", "10.96.0.0/20", "--service-cidr", "172.16.0.0/12", "--dry-run"); err != nil {
		t.Errorf("--subnet over ovnk's default service subnet, replaced by --service-cidr: %v", err)
	}
	_, _, err = h.Run("connect", "svc-blue", "svc-green", "--service-cidr", "10.96.0.0/8")
	clitest.OneLine(t, err, "--service-cidr 10.96.0.0/8: host bits set; did you mean 10.0.0.0/8?")
}
