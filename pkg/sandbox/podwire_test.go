package sandbox

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// layer3WithGateways is topologytest.Layer3 with the gateways and a route the leader
// would have written into blue/web's annotation.
func layer3WithGateways() (*cluster.State, *cluster.Pod) {
	st := topologytest.Layer3()
	var web *cluster.Pod
	for _, p := range st.Pods {
		if p.Namespace == "blue" && p.Name == "web" {
			web = p
		}
	}
	def := web.Networks["default"]
	def.Gateways = []netip.Addr{netip.MustParseAddr("10.244.0.1"), netip.MustParseAddr("fd00:10:244:1::1")}
	def.Routes = []cluster.PodRoute{{Dest: netip.MustParsePrefix("100.64.0.0/16"), NextHop: netip.MustParseAddr("10.244.0.1")}}
	web.Networks["default"] = def
	blue := web.Networks["cluster_udn_blue"]
	blue.Gateways = []netip.Addr{netip.MustParseAddr("10.10.0.1"), netip.MustParseAddr("2014:100:200::1")}
	web.Networks["cluster_udn_blue"] = blue
	return st, web
}

// A pod of a primary user-defined network: eth0 on the default network without a
// default route (infrastructure-locked), ovn-udn1 with the default routes.
func TestPlanPod(t *testing.T) {
	st, web := layer3WithGateways()
	plan, err := planPod(st, web, "ovnk-abcdef-")
	if err != nil {
		t.Fatal(err)
	}
	want := podPlan{
		Ref:   "blue/web",
		UID:   web.UID,
		Netns: "ovnk-abcdef-p5f0c2a4e7a1b",
		Ifaces: []podIface{
			{
				Name: "eth0", Host: "5f0c2a4e7a1b_0", IfaceID: "blue_web", MAC: "0a:58:0a:f4:00:05", MTU: 1400,
				IPs:    []netip.Prefix{netip.MustParsePrefix("10.244.0.5/24"), netip.MustParsePrefix("fd00:10:244:1::5/64")},
				Routes: []podRoute{{Dst: netip.MustParsePrefix("100.64.0.0/16"), Via: netip.MustParseAddr("10.244.0.1")}},
			},
			{
				Name: "ovn-udn1", Host: "5f0c2a4e7a1b_1", IfaceID: "blue.blue_blue_web", MAC: "0a:58:0a:0a:00:05", MTU: 1400,
				IPs: []netip.Prefix{netip.MustParsePrefix("10.10.0.5/24"), netip.MustParsePrefix("2014:100:200::5/64")},
				Routes: []podRoute{
					{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.10.0.1")},
					{Dst: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2014:100:200::1")},
				},
			},
		},
	}
	if !reflect.DeepEqual(want, plan) {
		t.Errorf("plan:\n%+v\nwant\n%+v", plan, want)
	}
	if len(plan.Ifaces[0].Host) > 15 {
		t.Errorf("host interface %s is longer than the 15 bytes Linux allows", plan.Ifaces[0].Host)
	}
	if got := plan.podIPs(); !slices.Equal(got, []string{"10.244.0.5", "fd00:10:244:1::5"}) {
		t.Errorf("status podIPs %v, want the default network's addresses", got)
	}
}

// wiringLab is a node with OVS (userspace) in its own namespace and a br-int of the
// given datapath type (netdev, as the agent makes it), and a prefix for the pods'
// namespaces that the test removes.
func wiringLab(t *testing.T, datapath string) (*nodeHost, *testenv.OVS, string, context.Context) {
	t.Helper()
	testenv.NeedRoot(t, "network namespaces and OVS")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	node := testenv.NewNetns(t)
	ovs := testenv.StartOVSInNetns(t, node, nil)
	if _, err := ovs.VSCtl(ctx, "add-br", integrBr, "--", "set", "Bridge", integrBr, "datapath_type="+datapath, "fail_mode=secure"); err != nil {
		t.Fatal(err)
	}
	prefix := netnsPrefix(t.TempDir())
	t.Cleanup(func() {
		names, _ := netnsesWithPrefix(prefix)
		for _, n := range names {
			if err := deleteNetns(context.Background(), n); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	h := &nodeHost{name: "node1", netns: node.Name, rundir: ovs.Dir(), vsctl: ovs.VSCtl}
	return h, ovs, prefix, ctx
}

var ifIndexRe = regexp.MustCompile(`@if\d+`)

// podState is the pod namespace as `ip` shows it, and the node's br-int ports with the
// sandbox's tags: what a wiring is judged by.
func podState(ctx context.Context, t *testing.T, ovs *testenv.OVS, netns string) []string {
	t.Helper()
	var lines []string
	for _, argv := range [][]string{
		{"ip", "-n", netns, "-br", "link", "show"},
		{"ip", "-n", netns, "-br", "addr", "show", "scope", "global"},
		{"ip", "-n", netns, "-o", "link", "show"},
		{"ip", "-n", netns, "route", "show", "proto", "boot"},
		{"ip", "-n", netns, "-6", "route", "show", "proto", "boot"},
	} {
		out, err := run(ctx, nil, argv...)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			l = strings.Join(strings.Fields(ifIndexRe.ReplaceAllString(l, "")), " ")
			if argv[3] == "-o" { // only the MTU of -o: the rest is in -br
				f := strings.Fields(l)
				if i := slices.Index(f, "mtu"); i > 0 {
					l = strings.TrimSuffix(f[1], ":") + " mtu " + f[i+1]
				}
			}
			if l != "" && !strings.HasPrefix(l, "lo") {
				lines = append(lines, l)
			}
		}
	}
	out, err := ovs.VSCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name,external_ids", "find", "Interface", `external_ids:"ovnk.io/owner"=ovnk-sandbox`)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			lines = append(lines, "port "+l)
		}
	}
	slices.Sort(lines)
	return lines
}

// TestPodWiring wires a pod with two interfaces into a real node, checks what the pod's
// namespace and br-int hold, wires it again (nothing changes), changes its addresses
// (only the difference is applied) and unwires it.
func TestPodWiring(t *testing.T) {
	h, ovs, prefix, ctx := wiringLab(t, "netdev")
	st, web := layer3WithGateways()
	plan, err := planPod(st, web, prefix)
	if err != nil {
		t.Fatal(err)
	}
	wire := func(plan podPlan) bool {
		t.Helper()
		ports, err := h.ports(ctx)
		if err != nil {
			t.Fatal(err)
		}
		changed, err := h.wire(ctx, plan, ports)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	if !wire(plan) {
		t.Error("first wiring reported no change")
	}
	got := podState(ctx, t, ovs, plan.Netns)
	wantState := []string{
		"default via 10.10.0.1 dev ovn-udn1",
		"default via 2014:100:200::1 dev ovn-udn1 metric 1024 pref medium",
		"eth0 UP 0a:58:0a:f4:00:05 <BROADCAST,MULTICAST,UP,LOWER_UP>",
		"eth0 UP 10.244.0.5/24 fd00:10:244:1::5/64",
		"eth0 mtu 1400",
		"ovn-udn1 UP 0a:58:0a:0a:00:05 <BROADCAST,MULTICAST,UP,LOWER_UP>",
		"ovn-udn1 UP 10.10.0.5/24 2014:100:200::5/64",
		"ovn-udn1 mtu 1400",
		"port 5f0c2a4e7a1b_0,iface-id=blue_web iface-id-ver=" + web.UID + " ovnk.io/owner=ovnk-sandbox ovnk.io/pod=blue/web",
		"port 5f0c2a4e7a1b_1,iface-id=blue.blue_blue_web iface-id-ver=" + web.UID + " ovnk.io/owner=ovnk-sandbox ovnk.io/pod=blue/web",
		"100.64.0.0/16 via 10.244.0.1 dev eth0",
	}
	slices.Sort(wantState)
	if diff := diffLines(wantState, got); diff != "" {
		t.Errorf("pod after wiring (-want +got):\n%s", diff)
	}
	// The host ends are up in the node, so vswitchd has a live port for each.
	for _, ifc := range plan.Ifaces {
		out, err := run(ctx, nil, "ip", "-n", h.netns, "-br", "link", "show", ifc.Host)
		if err != nil || !strings.Contains(out, " UP ") {
			t.Errorf("host end %s in the node: %q, %v; want it up", ifc.Host, out, err)
		}
	}

	if wire(plan) {
		t.Error("wiring the same plan again reported a change")
	}
	if again := podState(ctx, t, ovs, plan.Netns); !slices.Equal(again, got) {
		t.Errorf("wiring again changed the pod (-before +after):\n%s", diffLines(got, again))
	}

	// New addresses on the default network: the old one goes, the new one comes, and
	// nothing else is touched.
	moved := plan
	moved.Ifaces = slices.Clone(plan.Ifaces)
	moved.Ifaces[0].IPs = []netip.Prefix{netip.MustParsePrefix("10.244.0.9/24"), netip.MustParsePrefix("fd00:10:244:1::5/64")}
	if !wire(moved) {
		t.Error("wiring new addresses reported no change")
	}
	after := podState(ctx, t, ovs, plan.Netns)
	wantMoved := slices.Clone(got)
	wantMoved[slices.Index(wantMoved, "eth0 UP 10.244.0.5/24 fd00:10:244:1::5/64")] = "eth0 UP 10.244.0.9/24 fd00:10:244:1::5/64"
	slices.Sort(wantMoved)
	if diff := diffLines(wantMoved, after); diff != "" {
		t.Errorf("pod after new addresses (-want +got):\n%s", diff)
	}

	ports, err := h.ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range ports {
		names = append(names, name)
	}
	changed, err := h.unwire(ctx, plan.Netns, names)
	if err != nil || !changed {
		t.Fatalf("unwire: changed %v, %v", changed, err)
	}
	if netnsExists(plan.Netns) {
		t.Errorf("namespace %s is still there after unwiring", plan.Netns)
	}
	if left, err := h.ports(ctx); err != nil || len(left) != 0 {
		t.Errorf("ports left after unwiring: %v, %v", left, err)
	}
	if changed, err := h.unwire(ctx, plan.Netns, nil); err != nil || changed {
		t.Errorf("unwiring again: changed %v, %v; want nothing to do", changed, err)
	}
}

// diffLines shows the lines only want has (-) and only got has (+), "" when the sorted
// sets are equal.
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	if b.Len() == 0 && !slices.Equal(want, got) {
		return fmt.Sprintf("same lines, different multiplicity: want %q, got %q", want, got)
	}
	return b.String()
}
