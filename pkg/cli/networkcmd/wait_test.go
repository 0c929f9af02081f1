package networkcmd

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kptr "k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ovnk/ovnk/pkg/agent/leader"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// startLeader runs ovnk's real leader with settings against the harness's API server
// until the test ends, as the agent's leader replica runs it.
func startLeader(h *harness, s leader.Settings) {
	t := h.T
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(rest.CopyConfig(h.Kube.RESTConfig), ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "ovnk-leader",
		LeaderElectionNamespace:       h.Namespace("", nil),
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: kptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Setup(mgr, s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("leader: %v", err)
		}
	})
}

// TestCreateWait runs create --wait with the real leader: it exits once every node's
// zone reports the network (on a terminal without --wait too), and fails with the
// leader's condition when the leader refuses a network the plugin let through (the
// plugin checked the ConfigMap's ranges, the leader runs with others) or the nodes do
// not report it in time.
func TestCreateWait(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	// The ConfigMap (newHarness) says the service subnet is 10.96.0.0/16; the leader
	// runs with 10.97.0.0/16, as after an agent configured otherwise than installed.
	startLeader(h, leader.Settings{
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}},
		Cluster: cluster.Config{
			ServiceSubnets:    []netip.Prefix{netip.MustParsePrefix("10.97.0.0/16")},
			MasqueradeSubnets: []netip.Prefix{netip.MustParsePrefix("169.254.0.0/17")},
		},
		EventRecorderName: "ovnk-leader-test",
	})
	// One node, whose agent reports network "ready" programmed and "slow" not yet.
	h.Node("wait-node-"+ns, clitest.ZoneStatus(t, map[string]string{
		cluster.UDNNetworkName(ns, "ready"): "",
		cluster.UDNNetworkName(ns, "slow"):  "no k8s.ovn.org/l3-gateway-config yet",
	}))

	t.Run("ready, waiting by default on a terminal", func(t *testing.T) {
		h.T, h.TTY = t, true
		defer func() { h.TTY = false }()
		out, stderr, err := h.Run("create", "ready", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.71.0.0/24", "--timeout", "1m")
		if err != nil {
			t.Fatalf("%v\nstderr: %s", err, stderr)
		}
		if out != "userdefinednetwork.k8s.ovn.org/ready created\n" {
			t.Errorf("stdout %q", out)
		}
		if want := "UserDefinedNetwork " + ns + "/ready is ready: ready on 1/1 nodes"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	})
	t.Run("refused by the leader", func(t *testing.T) {
		h.T = t
		start := time.Now()
		_, _, err := h.Run("create", "refused", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.97.0.0/24", "--wait", "--timeout", "1m")
		clitest.OneLine(t, err, "UserDefinedNetwork "+ns+"/refused was created, but the leader refuses it: NetworkCreated False (SubnetOverlap): network \""+
			cluster.UDNNetworkName(ns, "refused")+"\" subnet 10.97.0.0/24 overlaps service subnet 10.97.0.0/16")
		if d := time.Since(start); d > 50*time.Second {
			t.Errorf("the refusal took %s: create waited for the timeout instead of reading the condition", d)
		}
	})
	t.Run("not ready in time", func(t *testing.T) {
		h.T = t
		_, _, err := h.Run("create", "slow", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.72.0.0/24", "--wait", "--timeout", "6s")
		clitest.OneLine(t, err, "UserDefinedNetwork "+ns+"/slow is not ready after 6s: NetworkReady False (Pending): ready on 0/1 nodes; node wait-node-"+ns+
			": no k8s.ovn.org/l3-gateway-config yet")
	})
	t.Run("not without a terminal", func(t *testing.T) {
		h.T = t
		_, stderr, err := h.Run("create", "quiet", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", "10.73.0.0/24")
		if err != nil || strings.Contains(stderr, "Waiting") {
			t.Errorf("create waited, or failed, when piped: %v\nstderr: %s", err, stderr)
		}
	})
	t.Run("a dry run has nothing to wait for", func(t *testing.T) {
		h.T = t
		_, _, err := h.Run("create", "dry", "-n", ns, "--subnet", "10.74.0.0/16", "--dry-run=server", "--wait")
		clitest.OneLine(t, err, "--wait: a dry run creates nothing to wait for")
	})
}
