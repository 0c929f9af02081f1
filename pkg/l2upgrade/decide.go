// Package l2upgrade drives the Layer2 topology upgrade of OKEP-5094, from the legacy
// topology (each node's gateway router on the Layer2 switch) to the transit router. A
// node converts only once no pod of a Layer2 network runs on it, since moving the
// management port's SNAT would break their connections; it then says so with
// k8s.ovn.org/layer2-topology-version: "2.0", and the other zones adapt.
//
// Decide is the agent's side: what its zone is built as now. Assess is the operator's
// side: where the upgrade stands in the whole cluster and what to do next.
package l2upgrade

import (
	"fmt"
	"slices"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
)

// Mode is the Layer2 topology an agent is configured to run (--layer2-topology).
type Mode string

const (
	// ModeLegacy keeps the legacy topology, as a release before OKEP-5094 would: a
	// cluster mid-upgrade can be modelled with it.
	ModeLegacy Mode = "v1"
	// ModeTransitRouter converts to the transit router as soon as it is safe.
	ModeTransitRouter Mode = "v2"
)

// ParseMode reads a --layer2-topology value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeLegacy, ModeTransitRouter:
		return m, nil
	}
	return "", fmt.Errorf("layer2 topology %q is not v1 (legacy: gateway routers on the switch) or v2 (transit router, OKEP-5094)", s)
}

// Phase is where a node is in the upgrade.
type Phase string

const (
	// PhaseLegacy: the node runs the legacy topology, and its agent keeps it (v1).
	PhaseLegacy Phase = "legacy"
	// PhaseBlocked: the agent would convert, but Layer2 pods still run on the node.
	PhaseBlocked Phase = "blocked"
	// PhaseConverting: the zone is being rebuilt; new Layer2 pods wait.
	PhaseConverting Phase = "converting"
	// PhaseUpgraded: the node runs the transit-router topology and says so.
	PhaseUpgraded Phase = "upgraded"
)

// Footprint is which Layer2 topology a zone's NB holds, per network: what ovnk owns
// there, as left by the last reconcile (even an interrupted one).
type Footprint struct {
	// Legacy networks have a gateway router port on their switch.
	Legacy map[string]bool
	// TransitRouter networks have a transit router port on their switch.
	TransitRouter map[string]bool
	// Upgrade networks hold the "-upgrade" ports kept for legacy nodes.
	Upgrade map[string]bool
}

// FootprintOf classifies a zone's router ports; ports ovnk does not own are ignored.
func FootprintOf(ports []*nbdb.LogicalRouterPort) Footprint {
	fp := Footprint{Legacy: map[string]bool{}, TransitRouter: map[string]bool{}, Upgrade: map[string]bool{}}
	for _, p := range ports {
		if !rows.Owned(p.ExternalIDs) {
			continue
		}
		network := p.ExternalIDs[rows.NetworkKey]
		switch topology.ClassifyLayer2Port(p.Name) {
		case topology.Layer2LegacyGatewayPort:
			fp.Legacy[network] = true
		case topology.Layer2TransitRouterPort:
			fp.TransitRouter[network] = true
		case topology.Layer2UpgradePort:
			fp.Upgrade[network] = true
		}
	}
	return fp
}

// Step is what the agent does in one reconcile.
type Step struct {
	Phase Phase
	// Options build the zone.
	Options topology.Options
	// Blocking are the running local Layer2 pods ("namespace/name") that keep the node
	// from converting.
	Blocking []string
	// Unknown are networks the zone holds on the legacy topology that the cluster state
	// lacks (an object with a bad annotation): their pods cannot be checked, so they
	// keep the node from converting too, as they keep it from being declared upgraded.
	Unknown []string
	// SetVersion: after the zone is applied, annotate the node "2.0".
	SetVersion bool
	// ClearVersion: before the zone is applied, remove the annotation, which a legacy
	// zone must not carry (other zones would treat the node as upgraded).
	ClearVersion bool
}

// Decide returns the agent's step for its node given its configured mode, the node as
// the cluster state has it, and what its zone holds. Only running pods of primary
// Layer2 networks block a conversion (a pending pod holds no connection yet).
//
//   - An agent in v1 mode builds the legacy topology.
//   - A node annotated "2.0" runs the transit router, unless its zone holds only the
//     legacy topology and something blocks: then the annotation is stale (a legacy
//     agent could not remove it) and goes. A zone still holding legacy rows is
//     converted as below.
//   - A zone already holding a transit router for a Layer2 network, on a node not
//     annotated yet, is converting (an earlier reconcile was interrupted): it goes on.
//   - A zone holding the legacy topology stays there while Layer2 pods run on the node,
//     and converts once none does.
//   - A zone holding neither (a new node, or one without Layer2 networks) starts on the
//     transit router, unless Layer2 pods run there: its NB was lost, and those pods were
//     configured for their legacy gateway, which is rebuilt.
//
// While converting, local Layer2 pods not wired yet wait (Options.HoldLocalLayer2Pods),
// and the annotation follows the conversion (SetVersion; see Confirm).
func Decide(mode Mode, st *cluster.State, node *cluster.Node, fp Footprint) Step {
	legacy := Step{Phase: PhaseLegacy, Options: topology.Options{Layer2: topology.Layer2Legacy}}
	if mode == ModeLegacy {
		legacy.ClearVersion = node.Layer2TopologyVersion != ""
		return legacy
	}
	converting := Step{Phase: PhaseConverting, Options: topology.Options{Layer2: topology.Layer2TransitRouter, HoldLocalLayer2Pods: true}, SetVersion: true}
	blocked := legacy
	blocked.Phase = PhaseBlocked
	blocked.Blocking = podNames(LocalLayer2Pods(st, node.Name))
	blocked.Unknown = unknownNetworks(st, fp.Legacy)
	blocks := len(blocked.Blocking) > 0 || len(blocked.Unknown) > 0
	switch {
	case node.Layer2TransitRouter():
		switch {
		case len(fp.Legacy) > 0 && len(fp.TransitRouter) == 0 && blocks:
			blocked.ClearVersion = true
			return blocked
		case len(fp.Legacy) > 0:
			// Annotated over a zone still (partly) legacy: finish it as a conversion.
			return converting
		}
		return Step{Phase: PhaseUpgraded, Options: topology.Options{Layer2: topology.Layer2TransitRouter}}
	case len(fp.TransitRouter) > 0:
		return converting
	case blocks:
		return blocked
	}
	return converting
}

// Confirm withdraws a step's SetVersion when the zone just applied still holds a Layer2
// network on the legacy topology: one the state lacks, or one that did not compile
// (its legacy rows are kept as they were). Networks without legacy rows (secondary or
// NoOverlay networks, which are not compiled here, or new ones) do not count. The node
// stays converting, and says why.
func Confirm(step Step, st *cluster.State, fp Footprint, notCompiled map[string]error) Step {
	if !step.SetVersion {
		return step
	}
	step.Unknown = unknownNetworks(st, fp.Legacy)
	for _, n := range st.Networks {
		if err := notCompiled[n.Name]; err != nil && fp.Legacy[n.Name] {
			step.Unknown = append(step.Unknown, n.Name)
		}
	}
	if len(step.Unknown) > 0 {
		step.SetVersion = false
	}
	return step
}

// unknownNetworks are the networks of legacy that st lacks, sorted.
func unknownNetworks(st *cluster.State, legacy map[string]bool) []string {
	var out []string
	for name := range legacy {
		if !slices.ContainsFunc(st.Networks, func(n *cluster.Network) bool { return n.Name == name }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// LocalLayer2Pods are the running pods on node of any network the upgrade concerns (a
// primary Layer2 network over Geneve: a NoOverlay one never had the legacy topology),
// sorted by namespace and name.
func LocalLayer2Pods(st *cluster.State, node string) []*cluster.Pod {
	layer2 := map[string]bool{}
	for _, n := range st.Networks {
		if n.Topology == cluster.Layer2 && n.Role == cluster.Primary && n.Transport != cluster.NoOverlay {
			layer2[n.Name] = true
		}
	}
	var out []*cluster.Pod
	for _, p := range st.Pods {
		if p.Node != node || !p.Running {
			continue
		}
		for network := range p.Networks {
			if layer2[network] {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func podNames(pods []*cluster.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}
