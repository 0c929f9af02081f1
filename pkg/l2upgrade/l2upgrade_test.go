package l2upgrade

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

func owned(network string, names ...string) []*nbdb.LogicalRouterPort {
	var out []*nbdb.LogicalRouterPort
	for _, n := range names {
		out = append(out, &nbdb.LogicalRouterPort{Name: n, ExternalIDs: map[string]string{
			rows.OwnerControllerKey: rows.OwnerController, rows.NetworkKey: network}})
	}
	return out
}

const (
	legacyPort  = "rtos-cluster_udn_green_ovn_layer2_switch"
	transitPort = "trtos-cluster_udn_green_ovn_layer2_switch"
	upgradePort = "trtos-cluster_udn_green_ovn_layer2_switch-upgrade"
)

func TestFootprintOf(t *testing.T) {
	ports := append(owned("cluster_udn_green", legacyPort, transitPort, upgradePort, "rtotr-GR_cluster_udn_green_node1"),
		&nbdb.LogicalRouterPort{Name: "rtos-blue_ovn_layer2_switch", ExternalIDs: map[string]string{rows.NetworkKey: "blue"}})
	fp := FootprintOf(ports)
	if !fp.Legacy["cluster_udn_green"] || !fp.TransitRouter["cluster_udn_green"] || !fp.Upgrade["cluster_udn_green"] {
		t.Errorf("footprint %+v misses one of green's ports", fp)
	}
	if fp.Legacy["blue"] {
		t.Errorf("a port ovnk does not own counted: %+v", fp)
	}
}

// TestDecide walks a node through the upgrade, with the crash cases: a conversion
// interrupted before the annotation goes on whatever pods arrived meanwhile.
func TestDecide(t *testing.T) {
	legacy := FootprintOf(owned("cluster_udn_green", legacyPort))
	converted := FootprintOf(owned("cluster_udn_green", transitPort, upgradePort))
	partial := FootprintOf(owned("cluster_udn_green", legacyPort, transitPort))
	withPods := topologytest.Layer2Upgrade()
	drained := topologytest.Layer2Upgrade()
	drained.Pods = slices.DeleteFunc(slices.Clone(drained.Pods), func(p *cluster.Pod) bool { return p.Node == "node2" })
	pending := topologytest.Layer2Upgrade()
	pending.Pods[1] = &cluster.Pod{Namespace: "green", Name: "starting", Node: "node2", Networks: pending.Pods[1].Networks}
	annotated := topologytest.Layer2Upgrade("node2")
	lostNetwork := FootprintOf(owned("cluster_udn_gone", "rtos-cluster_udn_gone_ovn_layer2_switch"))
	for _, tc := range []struct {
		name     string
		mode     Mode
		st       *cluster.State
		fp       Footprint
		phase    Phase
		topo     topology.Layer2Topology
		hold     bool
		set      bool
		clear    bool
		blocking []string
		unknown  []string
	}{
		{"v1 agent", ModeLegacy, withPods, legacy, PhaseLegacy, topology.Layer2Legacy, false, false, false, nil, nil},
		{"v1 agent on an annotated node", ModeLegacy, annotated, converted, PhaseLegacy, topology.Layer2Legacy, false, false, true, nil, nil},
		{"pods run on the node", ModeTransitRouter, withPods, legacy, PhaseBlocked, topology.Layer2Legacy, false, false, false, []string{"green/pod-node2"}, nil},
		{"a pending pod does not block", ModeTransitRouter, pending, legacy, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"drained", ModeTransitRouter, drained, legacy, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"a legacy network the state lacks", ModeTransitRouter, drained, lostNetwork, PhaseBlocked, topology.Layer2Legacy, false, false, false, nil, []string{"cluster_udn_gone"}},
		{"interrupted after the NB, pods arrived", ModeTransitRouter, withPods, converted, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"interrupted mid-apply", ModeTransitRouter, withPods, partial, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"annotated", ModeTransitRouter, annotated, converted, PhaseUpgraded, topology.Layer2TransitRouter, false, false, false, nil, nil},
		{"annotated over a legacy zone, nothing blocks", ModeTransitRouter, func() *cluster.State {
			st := topologytest.Layer2Upgrade("node2")
			st.Pods = st.Pods[:1]
			return st
		}(), legacy, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"annotated over a partial zone", ModeTransitRouter, annotated, partial, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"a stale annotation on a legacy zone with pods", ModeTransitRouter, topologytest.Layer2Upgrade("node2"), legacy, PhaseBlocked, topology.Layer2Legacy, false, false, true, []string{"green/pod-node2"}, nil},
		{"new node", ModeTransitRouter, drained, Footprint{}, PhaseConverting, topology.Layer2TransitRouter, true, true, false, nil, nil},
		{"NB lost while pods run", ModeTransitRouter, withPods, Footprint{}, PhaseBlocked, topology.Layer2Legacy, false, false, false, []string{"green/pod-node2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := Decide(tc.mode, tc.st, tc.st.Node("node2"), tc.fp)
			if step.Phase != tc.phase || step.Options.Layer2 != tc.topo || step.Options.HoldLocalLayer2Pods != tc.hold ||
				step.SetVersion != tc.set || step.ClearVersion != tc.clear || !slices.Equal(step.Blocking, tc.blocking) || !slices.Equal(step.Unknown, tc.unknown) {
				t.Errorf("step %+v; want phase %s, %s, hold %v, set %v, clear %v, blocking %v, unknown %v", step, tc.phase, tc.topo, tc.hold, tc.set, tc.clear, tc.blocking, tc.unknown)
			}
		})
	}
}

// TestConfirm: the annotation waits while a Layer2 network of the zone did not convert.
func TestConfirm(t *testing.T) {
	st := topologytest.Layer2Upgrade()
	st.Pods = st.Pods[1:] // node1 is drained
	step := Decide(ModeTransitRouter, st, st.Node("node1"), Footprint{})
	if !step.SetVersion {
		t.Fatalf("fixture: %+v", step)
	}
	if got := Confirm(step, st, Footprint{}, nil); !got.SetVersion {
		t.Errorf("a clean conversion is not confirmed: %+v", got)
	}
	legacy := FootprintOf(owned("cluster_udn_green", legacyPort))
	failed := map[string]error{"cluster_udn_green": errors.New("no tunnel keys")}
	got := Confirm(step, st, legacy, failed)
	if got.SetVersion || !slices.Equal(got.Unknown, []string{"cluster_udn_green"}) {
		t.Errorf("a legacy Layer2 network that did not compile: %+v", got)
	}
	// A network without legacy rows here (secondary, NoOverlay, or new) never holds the
	// annotation back, compiled or not.
	if got := Confirm(step, st, Footprint{}, failed); !got.SetVersion {
		t.Errorf("a network without legacy rows held the annotation back: %+v", got)
	}
	gone := FootprintOf(owned("cluster_udn_gone", "rtos-cluster_udn_gone_ovn_layer2_switch"))
	if got := Confirm(step, st, gone, nil); got.SetVersion || !slices.Equal(got.Unknown, []string{"cluster_udn_gone"}) {
		t.Errorf("a legacy network the state lacks: %+v", got)
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"v1", "v2"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%s) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("2.0"); err == nil || !strings.Contains(err.Error(), `"2.0"`) {
		t.Errorf("ParseMode(2.0): %v, want an error naming the value", err)
	}
}

// TestAssessMidUpgrade: one node upgraded holding the upgrade ports, one blocked by its
// pod, one converting; the report says what to do about each.
func TestAssessMidUpgrade(t *testing.T) {
	st := topologytest.Layer2Upgrade("node1")
	st.Networks[0].TransitSubnetsChanged = true
	up := FootprintOf(owned("cluster_udn_green", transitPort, upgradePort))
	conv := FootprintOf(owned("cluster_udn_green", transitPort))
	r := Assess(st, map[string]Zone{
		"node1": {Footprint: &up, Agent: PhaseUpgraded},
		"node2": {Footprint: &Footprint{Legacy: map[string]bool{"cluster_udn_green": true}}, Agent: PhaseBlocked},
		"node3": {Footprint: &conv},
	})
	phases := []string{}
	for _, n := range r.Nodes {
		phases = append(phases, n.Node+"="+string(n.Phase))
	}
	if strings.Join(phases, " ") != "node1=upgraded node2=blocked node3=converting" {
		t.Errorf("phases %v", phases)
	}
	if r.Upgraded != 1 || r.Total != 3 || r.Complete {
		t.Errorf("progress %d/%d complete %v", r.Upgraded, r.Total, r.Complete)
	}
	if !slices.Equal(r.Nodes[1].Blocking, []string{"green/pod-node2"}) || !slices.Equal(r.Nodes[0].Artifacts, []string{"cluster_udn_green"}) {
		t.Errorf("blocking %v, artifacts %v", r.Nodes[1].Blocking, r.Nodes[0].Artifacts)
	}
	n := r.Networks[0]
	if strings.Join(n.TransitRouter, ",") != "node1" || strings.Join(n.Legacy, ",") != "node2,node3" || strings.Join(n.ArtifactsIn, ",") != "node1" || len(n.TransitSubnets) != 2 {
		t.Errorf("network %+v", n)
	}
	next := strings.Join(r.Next, "\n")
	for _, want := range []string{"drain node node2", "green/pod-node2", "node node3 is converting"} {
		if !strings.Contains(next, want) {
			t.Errorf("next actions lack %q:\n%s", want, next)
		}
	}
}

// TestAssessEnd: all nodes upgraded is not complete while a zone holds upgrade ports,
// nor while a zone could not be read; then it is.
func TestAssessEnd(t *testing.T) {
	st := topologytest.Layer2Upgrade("node1", "node2", "node3")
	clean := FootprintOf(owned("cluster_udn_green", transitPort))
	left := FootprintOf(owned("cluster_udn_green", transitPort, upgradePort))
	r := Assess(st, map[string]Zone{"node1": {Footprint: &clean}, "node2": {Footprint: &left}, "node3": {Footprint: &clean}})
	if r.Complete || !strings.Contains(strings.Join(r.Next, "\n"), "zone node2 still holds upgrade ports") {
		t.Errorf("leftovers: complete %v, next %v", r.Complete, r.Next)
	}
	r = Assess(st, map[string]Zone{"node1": {Footprint: &clean}, "node2": {Err: errors.New("connection refused")}, "node3": {Footprint: &clean}})
	if r.Complete || r.Nodes[1].ZoneError != "connection refused" || !strings.Contains(strings.Join(r.Next, "\n"), "node2") {
		t.Errorf("unreadable zone: %+v", r)
	}
	r = Assess(st, map[string]Zone{"node1": {Footprint: &clean}, "node2": {Footprint: &clean}, "node3": {Footprint: &clean}})
	if !r.Complete || len(r.Next) != 0 || r.Upgraded != 3 {
		t.Errorf("done: %+v", r)
	}
}

// TestAssessLegacyAgentAndManyPods: a legacy agent is named as such, and a long list
// of blocking pods is shortened.
func TestAssessLegacyAgentAndManyPods(t *testing.T) {
	st := topologytest.Layer2Upgrade()
	for i := range 4 {
		p := *st.Pods[1]
		p.Name = "extra-" + string(rune('a'+i))
		st.Pods = append(st.Pods, &p)
	}
	r := Assess(st, map[string]Zone{"node1": {Agent: PhaseLegacy}})
	next := strings.Join(r.Next, "\n")
	for _, want := range []string{"roll out the new agent on node node1", "drain node node2", "and 2 more", "drain node node3"} {
		if !strings.Contains(next, want) {
			t.Errorf("next lacks %q:\n%s", want, next)
		}
	}
}

// TestAssessWhatDrainDoesNotSolve: a DaemonSet's pod stays after a drain, and a legacy
// network the state lacks (a bad annotation) blocks too; both are said. A node
// annotated 2.0 whose zone is still legacy with pods is not counted as upgraded.
func TestAssessWhatDrainDoesNotSolve(t *testing.T) {
	st := topologytest.Layer2Upgrade("node3")
	st.Pods[1].DaemonSet = "agent"
	legacy := FootprintOf(owned("cluster_udn_green", legacyPort))
	gone := FootprintOf(owned("cluster_udn_gone", "rtos-cluster_udn_gone_ovn_layer2_switch"))
	st.Pods = slices.DeleteFunc(st.Pods, func(p *cluster.Pod) bool { return p.Node == "node1" })
	r := Assess(st, map[string]Zone{"node1": {Footprint: &gone}, "node2": {Footprint: &legacy}, "node3": {Footprint: &legacy}})
	if r.Nodes[0].Phase != PhaseBlocked || !slices.Equal(r.Nodes[0].UnknownNetworks, []string{"cluster_udn_gone"}) {
		t.Errorf("node1: %+v", r.Nodes[0])
	}
	if r.Nodes[2].Phase != PhaseBlocked || r.Upgraded != 0 {
		t.Errorf("node3, annotated over a legacy zone with a pod: %+v (upgraded %d)", r.Nodes[2], r.Upgraded)
	}
	next := strings.Join(r.Next, "\n")
	for _, want := range []string{"fix network cluster_udn_gone", "DaemonSet pod green/pod-node2 stays or comes back after a drain"} {
		if !strings.Contains(next, want) {
			t.Errorf("next lacks %q:\n%s", want, next)
		}
	}
}

// TestOnlyUpgradedNetworksPodsBlock: pods of a secondary or NoOverlay Layer2 network,
// which never had the legacy topology, do not keep a node from converting.
func TestOnlyUpgradedNetworksPodsBlock(t *testing.T) {
	legacy := FootprintOf(owned("cluster_udn_green", legacyPort))
	for _, change := range []func(*cluster.Network){
		func(n *cluster.Network) { n.Role = cluster.Secondary },
		func(n *cluster.Network) { n.Transport = cluster.NoOverlay },
	} {
		st := topologytest.Layer2Upgrade()
		net := *st.Networks[0]
		change(&net)
		st.Networks = []*cluster.Network{&net}
		if step := Decide(ModeTransitRouter, st, st.Node("node2"), legacy); step.Phase != PhaseConverting || len(step.Blocking) > 0 {
			t.Errorf("network %s/%s: step %+v, want converting", net.Role, net.Transport, step)
		}
	}
}
