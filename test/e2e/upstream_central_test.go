package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/sandbox"
)

// TestUpstreamCentralNB builds a network's zones with the agents, then makes the cluster
// look like upstream OVN-Kubernetes with one central NB — an ovnkube-node DaemonSet none
// of whose containers serves an NB, an ovnkube-db Deployment whose nb-ovsdb container
// serves the first node's zone NB, no agent — and reads it through the real kubectl
// with no settings file: topology, for any node, shows what that one NB holds, and
// version names the Deployment serving it.
func TestUpstreamCentralNB(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	central := ec.nodes[0]
	ec.create(ctx, namespace("cn-l3", nil), layer3UDN("cn-l3", "blue", "10.150.0.0/16"))
	ec.requireZonesMatch(ctx, ec.allCompiled("cn-l3_blue"))
	snap, err := ovn.Snapshot(ctx, central.nbClient)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := ec.s.ServeCentralNBAsUpstream(ctx, central.name); err != nil {
		t.Fatal(err)
	}
	if err := ec.s.RemoveAgent(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("the cluster looks upstream's after %s", time.Since(start).Round(time.Second))
	// No settings at all: no file named, none where the plugin looks by default.
	ec.pluginEnv = []string{"OVNK_PLUGIN_CONFIG=", "XDG_CONFIG_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}

	// The relay in nb-ovsdb serves the NB once it has caught up with the node's.
	awaitTopology(ctx, t, ec, "cn-l3/blue", central.name, "topology through ovnkube-db's nb-ovsdb")
	// Every node's zone is the central NB: the other nodes show the first one's rows.
	for _, n := range ec.nodes {
		requireTopologyShowsZone(ctx, t, ec, n.name, "cn-l3/blue", "cn-l3_blue", snap)
	}

	var version struct {
		Cluster *clusterkind.Cluster `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(ec.must(ctx, "version", "-o", "json")), &version); err != nil {
		t.Fatal(err)
	}
	want := clusterkind.Workload{Kind: "Deployment", Namespace: sandbox.UpstreamNamespace, Name: sandbox.UpstreamDB}
	if c := version.Cluster; c == nil || c.Kind != clusterkind.Upstream || c.Interconnect || c.CentralNB == nil || *c.CentralNB != want {
		t.Errorf("version says the cluster is %+v, want upstream without interconnect, its NB served by %s", c, want)
	}
}
