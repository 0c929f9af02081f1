package leader

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentconfig "github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestPlanBadNetworks checks that a network that cannot be created gets NetworkCreated
// False with a reason and a message naming both sides, and that the good network "ok"
// is created anyway.
func TestPlanBadNetworks(t *testing.T) {
	primary, secondary := ovnkv1.NetworkRolePrimary, ovnkv1.NetworkRoleSecondary
	withID := func(c *ovnkv1.ClusterUserDefinedNetwork, id, keys string) *ovnkv1.ClusterUserDefinedNetwork {
		c.Annotations = map[string]string{cluster.AnnotationNetworkID: id, cluster.AnnotationTunnelKeys: keys}
		return c
	}
	for _, tc := range []struct {
		name  string
		cudns []*ovnkv1.ClusterUserDefinedNetwork
		udns  []*ovnkv1.UserDefinedNetwork
		setup func(p *planner)
		// want maps objects to their NetworkCreated condition: "True" or "Reason: message".
		want map[string]string
	}{{
		name:  "overlaps the default network's cluster subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(primary, "10.244.0.0/16", 24), "a")},
		want: map[string]string{"clusteruserdefinednetwork/bad": `SubnetOverlap: network "cluster_udn_bad" subnet 10.244.0.0/16 overlaps cluster subnet 10.244.0.0/16 of network "default"; ` +
			`use a subnet that overlaps none of the cluster's subnets and no other network of the same namespaces`},
	}, {
		name: "overlaps the service subnet",
		udns: []*ovnkv1.UserDefinedNetwork{udn("a", "bad", 1, l2(secondary, "10.96.128.0/24"))},
		want: map[string]string{"userdefinednetwork/a/bad": `SubnetOverlap: network "a_bad" subnet 10.96.128.0/24 overlaps service subnet 10.96.0.0/16;`},
	}, {
		name:  "overlaps the masquerade subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l2(primary, "169.254.0.0/16"), "a")},
		want:  map[string]string{"clusteruserdefinednetwork/bad": `overlaps masquerade subnet 169.254.0.0/17`},
	}, {
		name:  "overlaps the default join subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(primary, "100.64.0.0/12", 24), "a")},
		want:  map[string]string{"clusteruserdefinednetwork/bad": `subnet 100.64.0.0/12 overlaps join subnet 100.64.0.0/16 of network "default"`},
	}, {
		name:  "overlaps the transit subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(primary, "100.88.0.0/20", 24), "a")},
		want:  map[string]string{"clusteruserdefinednetwork/bad": `subnet 100.88.0.0/20 overlaps transit subnet 100.88.0.0/16`},
	}, {
		name:  "overlaps its own join subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(primary, "100.65.0.0/16", 24), "a")},
		want:  map[string]string{"clusteruserdefinednetwork/bad": `subnet 100.65.0.0/16 overlaps its own join subnet 100.65.0.0/16`},
	}, {
		name: "overlaps an older network of the same namespace",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("older", 1, l3(primary, "10.100.0.0/16", 24), "a", "b"),
		},
		udns: []*ovnkv1.UserDefinedNetwork{udn("b", "newer", 2, l2(secondary, "10.100.7.0/24"))},
		want: map[string]string{
			"clusteruserdefinednetwork/older": "True",
			"userdefinednetwork/b/newer": `SubnetOverlap: network "b_newer" subnet 10.100.7.0/24 overlaps subnet 10.100.0.0/16 of network "cluster_udn_older", ` +
				`which also serves namespace "b"; networks of the same namespace need subnets that do not overlap`,
		},
	}, {
		name: "the same subnet in other namespaces is fine",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("x", 1, l3(primary, "10.100.0.0/16", 24), "a"),
			cudn("y", 2, l3(primary, "10.100.0.0/16", 24), "b"),
		},
		want: map[string]string{"clusteruserdefinednetwork/x": "True", "clusteruserdefinednetwork/y": "True"},
	}, {
		name: "a network holding an id beats an older one",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("older", 1, l2(secondary, "10.100.0.0/16"), "a"),
			withID(cudn("holder", 2, l2(secondary, "10.100.0.0/24"), "a"), "9", "[16711692]"),
		},
		want: map[string]string{
			"clusteruserdefinednetwork/holder": "True",
			"clusteruserdefinednetwork/older":  `SubnetOverlap: network "cluster_udn_older" subnet 10.100.0.0/16 overlaps subnet 10.100.0.0/24 of network "cluster_udn_holder"`,
		},
	}, {
		name: "two primary networks in a namespace",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("first", 1, l3(primary, "10.100.0.0/16", 24), "a"),
		},
		udns: []*ovnkv1.UserDefinedNetwork{udn("a", "second", 2, l2(primary, "10.101.0.0/16"))},
		want: map[string]string{
			"clusteruserdefinednetwork/first": "True",
			"userdefinednetwork/a/second": `PrimaryNetworkConflict: network "a_second" would be the second primary network of namespace "a", ` +
				`whose primary network is "cluster_udn_first"; a namespace has at most one primary network`,
		},
	}, {
		name:  "network names collide",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("x", 1, l3(primary, "10.100.0.0/16", 24), "a")},
		udns:  []*ovnkv1.UserDefinedNetwork{udn("cluster", "udn_x", 2, l3(primary, "10.101.0.0/16", 24))},
		want: map[string]string{
			"clusteruserdefinednetwork/x":      `InvalidSpec: network name "cluster_udn_x" is also the name of userdefinednetwork/cluster/udn_x; rename one of them`,
			"userdefinednetwork/cluster/udn_x": `InvalidSpec: network name "cluster_udn_x" is also the name of clusteruserdefinednetwork/x`,
		},
	}, {
		name: "OVN names collide: the older keeps its name",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("col-a", 1, l3(secondary, "10.100.0.0/16", 24), "a"),
			cudn("col.a", 2, l2(secondary, "10.101.0.0/16"), "b"),
		},
		want: map[string]string{
			"clusteruserdefinednetwork/col-a": "True",
			"clusteruserdefinednetwork/col.a": `OVNNameConflict: network "cluster_udn_col.a" has the OVN name "cluster_udn_col.a" of network "cluster_udn_col-a" ` +
				`(OVN names write "-" as "."), so the two would share their OVN rows: rename one of them`,
		},
	}, {
		name: "OVN names collide: holding an id beats being older",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("col-a", 1, l3(secondary, "10.100.0.0/16", 24), "a"),
			withID(cudn("col.a", 2, l2(secondary, "10.101.0.0/16"), "b"), "9", "[16711692]"),
		},
		want: map[string]string{
			"clusteruserdefinednetwork/col.a": "True",
			"clusteruserdefinednetwork/col-a": `OVNNameConflict: network "cluster_udn_col-a" has the OVN name "cluster_udn_col.a" of network "cluster_udn_col.a"`,
		},
	}, {
		name:  "a multicast subnet",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l2(secondary, "239.0.0.0/16"), "a")},
		want: map[string]string{"clusteruserdefinednetwork/bad": `UnusableSubnet: network "cluster_udn_bad" subnet 239.0.0.0/16 overlaps the multicast range 224.0.0.0/4, ` +
			`which pods cannot use: choose a private range`},
	}, {
		name:  "every address",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(secondary, "0.0.0.0/0", 24), "a")},
		want:  map[string]string{"clusteruserdefinednetwork/bad": `UnusableSubnet: network "cluster_udn_bad" subnet 0.0.0.0/0 is every IPv4 address`},
	}, {
		name: "a Layer2 /31 leaves no pod address",
		udns: []*ovnkv1.UserDefinedNetwork{udn("a", "bad", 1, l2(secondary, "10.100.0.0/31"))},
		want: map[string]string{"userdefinednetwork/a/bad": `UnusableSubnet: network "a_bad" subnet 10.100.0.0/31 leaves no address for pods`},
	}, {
		name:  "network ids exhausted",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("z", 1, l2(secondary, "10.100.0.0/16"), "b")},
		setup: func(p *planner) { p.networkIDs = alloc.NewIDAllocator("network", 1, 1) },
		want: map[string]string{
			"clusteruserdefinednetwork/z": `NetworkIDsExhausted: no free network id for "cluster_udn_z": all 1 ids of 1–1 are in use`,
		},
	}, {
		name:  "tunnel keys exhausted",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("z", 1, l2(primary, "10.100.0.0/16"), "b")},
		setup: func(p *planner) {
			for i := range alloc.TunnelKeyPoolSize {
				if _, err := p.tunnelKeys.Allocate("cnc/"+strconv.Itoa(i), 1); err != nil {
					panic(err)
				}
			}
		},
		want: map[string]string{
			"clusteruserdefinednetwork/z": `TunnelKeysExhausted: transit router tunnel key of network "cluster_udn_z": no free tunnel key for "cluster_udn_z"`,
		},
	}, {
		name:  "node subnets exhausted",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("small", 1, l3(primary, "10.100.0.0/23", 24), "b")},
		want: map[string]string{
			"clusteruserdefinednetwork/small": `SubnetsExhausted: node n3 has no subnet of network "cluster_udn_small": no free subnet for "n3": cluster CIDR 10.100.0.0/23 holds 2 /24 subnets, all in use`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &snapshot{
				nodes:      []*corev1.Node{node("n1"), node("n2"), node("n3")},
				namespaces: []corev1.Namespace{namespace("a", nil), namespace("b", nil), namespace("cluster", nil), namespace("ok", nil)},
				cudns:      append(tc.cudns, cudn("ok", 5, l3(primary, "10.250.0.0/16", 24), "ok")),
				udns:       tc.udns,
			}
			sortNetworks(s)
			p := newTestPlanner(t)
			if tc.setup != nil {
				tc.setup(p)
			}
			converge(t, p, s)
			want := map[string]string{"clusteruserdefinednetwork/ok": "True"}
			for k, v := range tc.want {
				want[k] = v
			}
			for _, obj := range s.objects() {
				w, ok := want[describe(obj)]
				if !ok {
					continue
				}
				delete(want, describe(obj))
				checkCreated(t, obj, w)
				_, hasID := obj.GetAnnotations()[cluster.AnnotationNetworkID]
				if w != "True" && !strings.HasPrefix(w, ReasonSubnetsExhausted) && hasID {
					t.Errorf("%s is not created but got a network id: %v", describe(obj), obj.GetAnnotations())
				}
			}
			for name := range want {
				t.Errorf("no object %s", name)
			}
		})
	}
}

func sortNetworks(s *snapshot) {
	slices.SortFunc(s.cudns, func(a, b *ovnkv1.ClusterUserDefinedNetwork) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.udns, func(a, b *ovnkv1.UserDefinedNetwork) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// checkCreated checks a network's NetworkCreated condition against want: "True" (and
// the network has an id), or "Reason: message" (a part of it).
func checkCreated(t *testing.T, obj client.Object, want string) {
	t.Helper()
	c := meta.FindStatusCondition(conditionsOf(obj), ovnkv1.ConditionNetworkCreated)
	if c == nil {
		t.Errorf("%s has no NetworkCreated condition", describe(obj))
		return
	}
	if want == "True" {
		if c.Status != "True" || obj.GetAnnotations()[cluster.AnnotationNetworkID] == "" {
			t.Errorf("%s: NetworkCreated %s %s: %s, id %q; want it created", describe(obj), c.Status, c.Reason, c.Message,
				obj.GetAnnotations()[cluster.AnnotationNetworkID])
		}
		return
	}
	got := c.Reason + ": " + c.Message
	if c.Status != "False" || !strings.Contains(got, want) {
		t.Errorf("%s: NetworkCreated %s\n%s\nwant False\n%s", describe(obj), c.Status, got, want)
	}
}

// TestPlanCollisionKeepsIDs: when a new object's network name collides with an
// established network's, the established one keeps its id and keys reserved (both are
// reported InvalidSpec), so that a network created meanwhile does not take them.
func TestPlanCollisionKeepsIDs(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)
	s.namespaces = append(s.namespaces, namespace("cluster", nil), namespace("zz", nil))
	s.udns = append(s.udns, udn("cluster", "udn_blue", 9, l2(ovnkv1.NetworkRoleSecondary, "10.99.0.0/24")))
	s.cudns = append(s.cudns, cudn("zz", 10, l2(ovnkv1.NetworkRoleSecondary, "10.98.0.0/24"), "zz"))
	sortNetworks(s)
	converge(t, p, s)
	for _, c := range s.cudns {
		switch c.Name {
		case "blue":
			checkCreated(t, c, `InvalidSpec: network name "cluster_udn_blue" is also the name of userdefinednetwork/cluster/udn_blue`)
			if c.Annotations[cluster.AnnotationNetworkID] != "1" {
				t.Errorf("blue lost its id: %v", c.Annotations)
			}
		case "zz":
			if got := c.Annotations[cluster.AnnotationNetworkID]; got != "5" {
				t.Errorf("zz got network id %q, want 5, the lowest nobody holds", got)
			}
		}
	}
}

// TestReservedRangesAsThePluginReadsThem checks, from the agent's config file to a
// verdict, that kubectl ovnk refuses a subnet for overlapping the cluster's own ranges
// exactly when the leader of an agent running with that file does, in the same words:
// the agent builds its leader with SettingsOf of the loaded file, the plugin reads the
// file from the agent's ConfigMap (netview.AgentConfigRanges), for IPv4, IPv6 and
// dual-stack clusters, whose ranges of the other family are not reserved.
func TestReservedRangesAsThePluginReadsThem(t *testing.T) {
	probes := []string{
		"10.244.3.0/24", "fd00:10:244::/64", "10.128.0.0/20", "fd00:10:128::/64", // cluster subnets
		"100.64.0.0/20", "fd98::/64", "100.88.0.0/20", "fd97::/64", // join and transit
		"169.254.0.0/24", "fd69::/120", "10.96.0.0/20", "fd00:10:96::/112", // masquerade and service
		"10.71.0.0/16", "fd71::/48", // free
	}
	for _, tc := range []struct{ name, text string }{
		{"IPv4", "[default]\ncluster-subnets = 10.244.0.0/16/24\n"},
		{"IPv6", "[default]\ncluster-subnets = fd00:10:244::/48/64\nservice-subnets = fd00:10:96::/112\nhost-service-ips = fd00:10:96::1\n"},
		{"dual-stack", "[default]\ncluster-subnets = 10.128.0.0/14/23,fd00:10:128::/48/64\nservice-subnets = 10.96.0.0/16,fd00:10:96::/112\nhost-service-ips = 10.96.0.1,fd00:10:96::1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
			agentconfig.AddFlags(fs)
			if err := fs.Parse([]string{"--node-name=n1"}); err != nil {
				t.Fatal(err)
			}
			cfg, err := agentconfig.LoadText(fs, func(string) string { return "" }, tc.text, "agent.conf")
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlanner(SettingsOf(cfg))
			if err != nil {
				t.Fatal(err)
			}
			plugin, err := netview.AgentConfigRanges(tc.text, "agent.conf", "ovnk-system")
			if err != nil {
				t.Fatal(err)
			}
			leaderRanges, pluginRanges := p.reservedRanges(), plugin.Reserved()
			if !slices.Equal(leaderRanges, pluginRanges) {
				t.Errorf("the leader reserves\n%v\nkubectl ovnk reserves\n%v", leaderRanges, pluginRanges)
			}
			for _, probe := range probes {
				subnet := pfx(probe)
				if got, want := refusal(pluginRanges, subnet), refusal(leaderRanges, subnet); got != want {
					t.Errorf("--subnet %s: kubectl ovnk refuses it for overlapping %q, the leader for overlapping %q", probe, got, want)
				}
			}
			other := "fd98::/64" // the other family's default join subnet
			if tc.name == "IPv6" {
				other = "100.64.0.0/20"
			}
			if tc.name != "dual-stack" && refusal(leaderRanges, pfx(other)) != "" {
				t.Errorf("an %s cluster reserves %s, of the other family", tc.name, other)
			}
		})
	}
}

// refusal names the first of ranges that subnet overlaps, as the checks take them; ""
// when none.
func refusal(ranges []cluster.ReservedRange, subnet netip.Prefix) string {
	for _, r := range ranges {
		if r.Prefix.Overlaps(subnet) {
			return r.What
		}
	}
	return ""
}
