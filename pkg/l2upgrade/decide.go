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
	"strings"

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
	// Blocking are the local Layer2 pods ("namespace/name") that keep a node from
	// converting.
	Blocking []string
	// SetVersion: after the zone is applied, annotate the node "2.0".
	SetVersion bool
	// ClearVersion: remove the annotation, which a legacy agent's node must not carry
	// (other zones would treat it as upgraded).
	ClearVersion bool
}

// Decide returns the agent's step for its node given its configured mode, the node as
// the cluster state has it, what its zone holds, and the state's pods.
//
//   - An agent in v1 mode builds the legacy topology.
//   - A node annotated "2.0" runs the transit router.
//   - A zone already holding a transit router for a Layer2 network, on a node not
//     annotated yet, is converting (an earlier reconcile was interrupted): it goes on,
//     new local Layer2 pods wait, and the annotation follows.
//   - A zone holding the legacy topology stays there while Layer2 pods run on the node,
//     and converts once none does.
//   - A zone holding neither (a new node, or one without Layer2 networks) starts on
//     the transit router.
func Decide(mode Mode, st *cluster.State, node *cluster.Node, fp Footprint) Step {
	if mode == ModeLegacy {
		return Step{Phase: PhaseLegacy, Options: topology.Options{Layer2: topology.Layer2Legacy}, ClearVersion: node.Layer2TopologyVersion != ""}
	}
	transit := topology.Options{Layer2: topology.Layer2TransitRouter}
	converting := topology.Options{Layer2: topology.Layer2TransitRouter, HoldLocalLayer2Pods: true}
	switch {
	case node.Layer2TransitRouter():
		return Step{Phase: PhaseUpgraded, Options: transit}
	case len(fp.TransitRouter) > 0:
		return Step{Phase: PhaseConverting, Options: converting, SetVersion: true}
	case len(fp.Legacy) > 0:
		if pods := LocalLayer2Pods(st, node.Name); len(pods) > 0 {
			return Step{Phase: PhaseBlocked, Options: topology.Options{Layer2: topology.Layer2Legacy}, Blocking: pods}
		}
		return Step{Phase: PhaseConverting, Options: converting, SetVersion: true}
	}
	return Step{Phase: PhaseConverting, Options: transit, SetVersion: true}
}

// LocalLayer2Pods are the pods ("namespace/name", sorted) on any Layer2 network of the
// state that run on node.
func LocalLayer2Pods(st *cluster.State, node string) []string {
	layer2 := map[string]bool{}
	for _, n := range st.Networks {
		if n.Topology == cluster.Layer2 {
			layer2[n.Name] = true
		}
	}
	var out []string
	for _, p := range st.Pods {
		if p.Node != node {
			continue
		}
		for network := range p.Networks {
			if layer2[network] {
				out = append(out, p.Namespace+"/"+p.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// podList names pods for a message: all of them up to three, else three and a count.
func podList(pods []string) string {
	const shown = 3
	if len(pods) <= shown {
		return strings.Join(pods, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(pods[:shown], ", "), len(pods)-shown)
}
