package connectcmd

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// badInputAgentConfig is the agent's configuration in TestBadInput: dual-stack, and
// service subnets other than the default, so that the checks show they read it.
const badInputAgentConfig = `[default]
cluster-subnets = 10.244.0.0/16/24,fd00:10:244::/48/64
service-subnets = 10.112.0.0/12
host-service-ips = 10.112.0.1,10.112.0.10
`

// badInputCluster creates what the mistakes of TestBadInput collide with, and returns
// the namespace of its UserDefinedNetwork.
func badInputCluster(h *harness) string {
	h.T.Helper()
	h.AgentConfig(badInputAgentConfig)
	// Three nodes with ids up to 7: a Layer3 network's block must hold 8 links.
	for i, id := range []int{1, 2, 7} {
		v, err := cluster.NodeIDCodec.Format(id)
		if err != nil {
			h.T.Fatal(err)
		}
		h.Node("bad-node-"+strconv.Itoa(i+1), map[string]string{cluster.AnnotationNodeID: v})
	}
	l3, l2 := ovnkv1.NetworkTopologyLayer3, ovnkv1.NetworkTopologyLayer2
	h.cudn("bad-blue", l3, []string{"10.10.0.0/16"})
	h.cudn("bad-green", l2, []string{"10.20.0.0/16"})
	h.cudn("bad-target", l3, []string{"10.21.0.0/16"})
	h.cudn("bad-dual", l3, []string{"10.70.0.0/16", "fd00:70::/48"}, withLabels("pair", "dual"))
	h.cudn("bad-dual2", l2, []string{"10.71.0.0/16", "fd00:71::/64"}, withLabels("pair", "dual"))
	h.cudn("bad-storage", l2, []string{"10.60.0.0/24"}, secondary)
	h.cudn("bad-nooverlay", l3, []string{"10.80.0.0/16"}, noOverlay)
	h.cudn("bad-inner", l3, []string{"10.10.128.0/17"})
	h.cudn("bad-lan", l2, []string{"192.168.5.0/24"})
	h.cudn("bad-ownjoin", l3, []string{"10.90.0.0/16"}, join("100.99.0.0/16"))
	h.cudn("bad-mislabelled", l3, []string{"10.91.0.0/16"}, withLabels(NetworkNameLabel, "other"))
	h.cudn("bad-victim", l3, []string{"10.92.0.0/16"})
	h.cudn("bad-impostor", l3, []string{"10.93.0.0/16"}, withLabels(NetworkNameLabel, "bad-victim"))
	ns := h.Namespace("", nil)
	h.udn(ns, "web", l3, []string{"10.30.0.0/16"})

	h.MustRun("connect", "bad-blue", "bad-green", "--subnet", "172.28.0.0/16")
	// Two connects of exactly the same networks, written by hand.
	for _, name := range []string{"bad-twin-1", "bad-twin-2"} {
		h.Create(&ovnkv1.ClusterNetworkConnect{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ovnkv1.ClusterNetworkConnectSpec{
				NetworkSelectors: cudnsLabelled("pair", "dual"),
				ConnectSubnets:   []ovnkv1.ConnectSubnet{{CIDR: "172.16.0.0/16", NetworkPrefix: 24}},
				Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
			},
		})
	}
	return ns
}

// TestBadInput gives the commands mistakes and requires, for each, a non-zero exit
// with one line naming the values and the fix, and nothing created, labelled or
// deleted.
func TestBadInput(t *testing.T) {
	h := newHarness(t)
	ns := badInputCluster(h)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		// The arguments.
		{"one network", []string{"connect", "bad-blue"},
			[]string{"takes at least two networks to connect (got 1)", "NAMESPACE/NAME"}},
		{"a network twice", []string{"connect", "bad-blue", "bad-green", "bad-blue"},
			[]string{"network bad-blue is named twice: name each network once"}},
		{"not a reference", []string{"connect", "bad-blue", "a/b/c"},
			[]string{`network "a/b/c": name a ClusterUserDefinedNetwork as NAME and a UserDefinedNetwork as NAMESPACE/NAME`}},
		{"not a name", []string{"connect", "bad-blue", "Bad_Name"},
			[]string{`network "Bad_Name": "Bad_Name" is not a network name`}},
		{"-n", []string{"connect", "bad-blue", "bad-target", "-n", "default"},
			[]string{"-n does not apply to connect: name a UserDefinedNetwork as NAMESPACE/NAME"}},

		// Networks that are not there or cannot be connected.
		{"unknown cluster network", []string{"connect", "bad-blue", "nosuch"},
			[]string{"unknown network nosuch: there is no ClusterUserDefinedNetwork nosuch", "`kubectl ovnk network list`"}},
		{"namespaced network named bare", []string{"connect", "bad-blue", "web"},
			[]string{"unknown network web", "a UserDefinedNetwork is named NAMESPACE/NAME: did you mean " + ns + "/web?"}},
		{"unknown namespaced network", []string{"connect", "bad-blue", ns + "/nosuch"},
			[]string{"unknown network " + ns + "/nosuch: there is no UserDefinedNetwork nosuch in namespace " + ns}},
		{"secondary network", []string{"connect", "bad-blue", "bad-storage"},
			[]string{"network bad-storage cannot be connected: it is a secondary network", "leave it out"}},
		{"no-overlay network", []string{"connect", "bad-blue", "bad-nooverlay"},
			[]string{"network bad-nooverlay cannot be connected: it uses transport NoOverlay", "leave it out"}},
		{"networks overlapping", []string{"connect", "bad-blue", "bad-inner"},
			[]string{"networks bad-blue (10.10.0.0/16) and bad-inner (10.10.128.0/17) overlap"}},

		// Connect subnets overlapping the networks connected.
		{"default subnet over a network", []string{"connect", "bad-lan", "bad-target"},
			[]string{"the default connect subnet 192.168.0.0/16 overlaps subnet 192.168.5.0/24 of network bad-lan", "stay out of the subnets, join and transit subnets of the networks it connects", "choose another with --subnet"}},
		{"subnet over a namespace's network", []string{"connect", "bad-target", ns + "/web", "--subnet", "10.30.0.0/20"},
			[]string{"--subnet 10.30.0.0/20 overlaps subnet 10.30.0.0/16 of network " + ns + "/web"}},
		{"a network's default join subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "100.65.0.0/20"},
			[]string{"--subnet 100.65.0.0/20 overlaps join subnet 100.65.0.0/16 of network bad-target"}},
		{"a network's own join subnet", []string{"connect", "bad-ownjoin", "bad-target", "--subnet", "100.99.0.0/20"},
			[]string{"--subnet 100.99.0.0/20 overlaps join subnet 100.99.0.0/16 of network bad-ownjoin"}},

		// Connect subnets overlapping the cluster's own ranges, as the agent's
		// configuration sets them.
		{"cluster subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "10.244.128.0/20"},
			[]string{`--subnet 10.244.128.0/20 overlaps cluster subnet 10.244.0.0/16 of network "default"`, "stay out of the cluster's own ranges", "choose another with --subnet"}},
		{"IPv6 cluster subnet", []string{"connect", "bad-dual", "bad-dual2", "--subnet", "172.31.0.0/16,fd00:10:244::/112", "--network-prefix", "28"},
			[]string{`--subnet fd00:10:244::/112 overlaps cluster subnet fd00:10:244::/48 of network "default"`}},
		{"default network's join subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "100.64.0.0/20"},
			[]string{`--subnet 100.64.0.0/20 overlaps join subnet 100.64.0.0/16 of network "default"`}},
		{"transit subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "100.88.0.0/20"},
			[]string{"--subnet 100.88.0.0/20 overlaps transit subnet 100.88.0.0/16"}},
		{"service subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "10.112.0.0/20"},
			[]string{"--subnet 10.112.0.0/20 overlaps service subnet 10.112.0.0/12"}},
		{"masquerade subnet", []string{"connect", "bad-target", "bad-green", "--subnet", "169.254.0.0/20"},
			[]string{"--subnet 169.254.0.0/20 overlaps masquerade subnet 169.254.0.0/17"}},
		{"IPv6 masquerade subnet", []string{"connect", "bad-dual", "bad-dual2", "--subnet", "172.31.0.0/16,fd69::/120", "--network-prefix", "28"},
			[]string{"--subnet fd69::/120 overlaps masquerade subnet fd69::/112"}},

		// Connect subnets too small.
		{"block too small for the nodes", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/24", "--network-prefix", "29"},
			[]string{"--network-prefix 29 gives each network a block of 8 addresses in --subnet 172.31.0.0/24, but Layer3 network bad-target needs 2 per node, 16 for node ids up to 7: use --network-prefix 28 or less"}},
		{"too few blocks", []string{"connect", "bad-target", "bad-green", "bad-victim", "--subnet", "172.31.0.0/24", "--network-prefix", "25"},
			[]string{"--subnet 172.31.0.0/24 holds 2 blocks of /25, but the 3 networks need one each, 384 addresses: use a /23 or larger, or a longer --network-prefix"}},
		{"network prefix as long as the subnet", []string{"connect", "bad-target", "bad-green", "--network-prefix", "16"},
			[]string{"--network-prefix 16 does not fit the default connect subnet 192.168.0.0/16", "use a prefix from 17 to 31"}},
		{"network prefix of no link", []string{"connect", "bad-target", "bad-green", "--network-prefix", "32"},
			[]string{"--network-prefix 32 does not fit the default connect subnet 192.168.0.0/16", "use a prefix from 17 to 31"}},
		{"IPv6 network prefix for IPv4", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/16", "--network-prefix", "64"},
			[]string{"--network-prefix 64 is an IPv6 prefix length (it is above 32), and IPv4 has none 96 shorter for --subnet 172.31.0.0/16: give the IPv4 length instead, e.g. 24"}},
		{"network prefix out of range", []string{"connect", "bad-target", "bad-green", "--network-prefix", "0"},
			[]string{"--network-prefix 0: give the prefix length of each network's block"}},
		{"IPv6 blocks not fitting", []string{"connect", "bad-dual", "bad-dual2", "--subnet", "172.31.0.0/16,fd00:31::/120"},
			[]string{"--network-prefix 24: that gives IPv6 blocks of /120, which do not fit --subnet fd00:31::/120", "give an IPv6 prefix from 121 to 127"}},

		// --subnet and the networks' IP families.
		{"no IPv6 subnet for dual-stack networks", []string{"connect", "bad-dual", "bad-dual2", "--subnet", "172.31.0.0/16"},
			[]string{"--subnet 172.31.0.0/16: networks bad-dual and bad-dual2 have IPv6, so give an IPv6 connect subnet too, e.g. --subnet 172.31.0.0/16,fd00:10::/112"}},
		{"IPv6 subnet for IPv4 networks", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/16,fd00:31::/112"},
			[]string{"--subnet 172.31.0.0/16,fd00:31::/112: no network to connect has IPv6, so leave fd00:31::/112 out"}},
		{"host bits", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.1/16"},
			[]string{"--subnet 172.31.0.1/16: host bits set; did you mean 172.31.0.0/16?"}},
		{"not a CIDR", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/33"},
			[]string{"--subnet 172.31.0.0/33: not a CIDR"}},
		{"two IPv4 subnets", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/16,172.30.0.0/16"},
			[]string{"--subnet 172.31.0.0/16,172.30.0.0/16: give at most one IPv4 and one IPv6 CIDR"}},

		// Other flags.
		{"unknown connectivity", []string{"connect", "bad-target", "bad-green", "--connectivity", "pod,bogus"},
			[]string{`--connectivity pod,bogus: "bogus" is not a kind of connectivity; use pod, service or pod,service`}},
		{"connectivity twice", []string{"connect", "bad-target", "bad-green", "--connectivity", "pod,PodNetwork"},
			[]string{"--connectivity pod,PodNetwork: pod is given twice"}},
		{"invalid name", []string{"connect", "bad-target", "bad-green", "--name", "Bad_Name"},
			[]string{`--name "Bad_Name": a lowercase RFC 1123 subdomain`}},
		{"unknown dry run", []string{"connect", "bad-target", "bad-green", "--dry-run=maybe"},
			[]string{"--dry-run=maybe: use --dry-run (or =client)"}},
		{"unknown output", []string{"connect", "bad-target", "bad-green", "-o", "xml"},
			[]string{`unknown output format "xml"`}},

		// Other connects.
		{"name taken", []string{"connect", "bad-target", "bad-green", "--subnet", "172.31.0.0/16", "--name", "bad-blue-bad-green"},
			[]string{"--name bad-blue-bad-green: connect bad-blue-bad-green already exists (it connects bad-blue and bad-green): choose another name"}},
		{"already connected", []string{"connect", "bad-green", "bad-blue", "--subnet", "172.31.0.0/16"},
			[]string{"bad-green and bad-blue are already connected by connect bad-blue-bad-green", "kubectl ovnk connections describe bad-blue-bad-green"}},
		{"connect subnet of a connect of the same network", []string{"connect", "bad-blue", ns + "/web", "--subnet", "172.28.0.0/20"},
			[]string{"--subnet 172.28.0.0/20 overlaps connect subnet 172.28.0.0/16 of connect bad-blue-bad-green, which also connects bad-blue", "choose another with --subnet"}},

		// Labels that would select the wrong networks.
		{"label naming another network", []string{"connect", "bad-mislabelled", "bad-target", "--subnet", "172.31.0.0/16"},
			[]string{"network bad-mislabelled has label ovnk.io/network-name=other, which names another network", "kubectl label clusteruserdefinednetwork bad-mislabelled ovnk.io/network-name=bad-mislabelled --overwrite"}},
		{"label taken by another network", []string{"connect", "bad-victim", "bad-target", "--subnet", "172.31.0.0/16"},
			[]string{"ClusterUserDefinedNetwork bad-impostor has label ovnk.io/network-name=bad-victim, so a connect of bad-victim would select it too", "kubectl label clusteruserdefinednetwork bad-impostor ovnk.io/network-name-"}},

		// disconnect and connections.
		{"disconnect nothing", []string{"disconnect"},
			[]string{"takes a connect's NAME or the networks it connects"}},
		{"disconnect an unknown connect", []string{"disconnect", "nosuch"},
			[]string{"no connect named nosuch: `kubectl ovnk connections` lists the connects"}},
		{"disconnect networks not connected exactly", []string{"disconnect", "bad-blue", "bad-target"},
			[]string{"no connect connects exactly bad-blue and bad-target; connects of some of them: bad-blue-bad-green (bad-blue, bad-green)"}},
		{"disconnect networks not connected", []string{"disconnect", "bad-target", "bad-victim"},
			[]string{"no connect connects bad-target and bad-victim: none of them is connected"}},
		{"disconnect networks connected twice", []string{"disconnect", "bad-dual2", "bad-dual"},
			[]string{"several connects connect exactly bad-dual2 and bad-dual: bad-twin-1 and bad-twin-2: name the one to delete"}},
		{"disconnect an unknown network", []string{"disconnect", "bad-blue", "nosuch"},
			[]string{"unknown network nosuch"}},
		{"describe an unknown connect", []string{"connections", "describe", "nosuch"},
			[]string{"no connect named nosuch"}},
		{"describe nothing", []string{"connections", "describe"},
			[]string{"takes one connect's NAME (got 0 arguments)"}},
		{"connections of a name", []string{"connections", "bad-blue-bad-green"},
			[]string{"takes no arguments", "kubectl ovnk connections describe bad-blue-bad-green"}},
		{"connections in an unknown format", []string{"connections", "-o", "xml"},
			[]string{`unknown output format "xml"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			before, labelsBefore := h.connects(), h.allLabels()
			out, _, err := h.Run(tc.args...)
			clitest.OneLine(t, err, tc.want...)
			if out != "" {
				t.Errorf("a refused command printed %q", out)
			}
			if after := h.connects(); len(after) != len(before) {
				t.Errorf("%d connects before, %d after", len(before), len(after))
			}
			if labelsAfter := h.allLabels(); !maps.Equal(labelsBefore, labelsAfter) {
				t.Errorf("labels of the networks changed from %v to %v", labelsBefore, labelsAfter)
			}
		})
	}
}

// allLabels maps each ClusterUserDefinedNetwork to its labels, written as text.
func (h *harness) allLabels() map[string]string {
	h.T.Helper()
	var list ovnkv1.ClusterUserDefinedNetworkList
	if err := h.C.List(h.Ctx(), &list); err != nil {
		h.T.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range list.Items {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
			kv = append(kv, k+"="+c.Labels[k])
		}
		out[c.Name] = strings.Join(kv, ",")
	}
	return out
}
