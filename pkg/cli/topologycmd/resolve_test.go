package topologycmd_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cli/networkcmd"
	"github.com/ovnk/ovnk/pkg/cli/topologycmd"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// TestTopologyNamesNetworksAsDescribe runs `topology NAME` beside `network describe NAME`
// on the same cluster: each name either finds the same network in both, or fails in
// both with the same reason. The UserDefinedNetwork test12/namespace-scoped (in the
// cluster and in ovn-worker's zone) is named by its bare name from another namespace,
// which topology once looked up in the kubeconfig's namespace alone; a
// ClusterUserDefinedNetwork of the same name then makes the bare name ambiguous in both.
func TestTopologyNamesNetworksAsDescribe(t *testing.T) {
	livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, _ func() time.Time) []*cobra.Command {
		return []*cobra.Command{topologycmd.New(f), networkcmd.New(f)}
	})
	zone := []string{"--nb", nb.Endpoint, "--node", "ovn-worker"}
	// network runs topology -o json with args and returns the network's name, or the error.
	network := func(args ...string) (string, error) {
		out, _, err := h.Run(append(append([]string{"topology"}, args...), append(zone, "-o", "json")...)...)
		if err != nil {
			return "", err
		}
		var v topologycmd.View
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("topology %v -o json: %v\n%s", args, err, out)
		}
		return v.Network.Name, nil
	}
	for _, args := range [][]string{
		{"namespace-scoped"},
		{"test12/namespace-scoped"},
		{"namespace-scoped", "-n", "test12"},
	} {
		h.MustRun(append([]string{"network", "describe"}, args...)...)
		if got, err := network(args...); err != nil || got != "test12/namespace-scoped" {
			t.Errorf("topology %v: network %q, error %v; want test12/namespace-scoped, which network describe finds", args, got, err)
		}
	}

	h.Create(&ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "namespace-scoped"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"serves": "namespace-scoped"}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.99.0.0/16"}},
			}},
		},
	})
	_, _, describeErr := h.Run("network", "describe", "namespace-scoped")
	_, topologyErr := network("namespace-scoped")
	clitest.OneLine(t, topologyErr, `network "namespace-scoped" is ambiguous`, "--cluster", "test12/namespace-scoped")
	if describeErr == nil || topologyErr == nil || describeErr.Error() != topologyErr.Error() {
		t.Errorf("an ambiguous name: network describe says %v, topology %v; want the same error", describeErr, topologyErr)
	}
	// --cluster picks the ClusterUserDefinedNetwork, which this zone does not hold.
	_, err := network("namespace-scoped", "--cluster")
	clitest.OneLine(t, err, `unknown network "namespace-scoped" in node ovn-worker's zone`)
	// The UserDefinedNetwork is still found by its full name.
	if got, err := network("test12/namespace-scoped"); err != nil || !strings.HasPrefix(got, "test12/") {
		t.Errorf("topology test12/namespace-scoped beside a cluster network of its name: %q, %v", got, err)
	}
}
