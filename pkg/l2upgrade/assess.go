package l2upgrade

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// Zone is what Assess knows of one node's zone.
type Zone struct {
	// Footprint is what the zone's NB holds; nil when it could not be read.
	Footprint *Footprint
	// Err says why the zone could not be read.
	Err error
	// Agent is the phase the node's agent reports in its heartbeat; "" when unknown
	// (no ovnk agent, or one that does not report it).
	Agent Phase
}

// NodeReport is one node's place in the upgrade.
type NodeReport struct {
	Node string `json:"node"`
	// Version is the node's k8s.ovn.org/layer2-topology-version ("" before "2.0").
	Version string `json:"version"`
	Phase   Phase  `json:"phase"`
	// Blocking are the running Layer2 pods that keep a node from converting.
	Blocking []string `json:"blockingPods,omitempty"`
	// DaemonSetPods are those of Blocking a DaemonSet controls: a drain leaves them.
	DaemonSetPods []string `json:"daemonSetPods,omitempty"`
	// UnknownNetworks are networks the node's zone holds on the legacy topology that the
	// cluster state lacks (their object has a bad annotation): their pods cannot be
	// checked, so the node does not convert.
	UnknownNetworks []string `json:"unknownNetworks,omitempty"`
	// Artifacts are the networks whose upgrade ports the node's zone still holds.
	Artifacts []string `json:"upgradeArtifacts,omitempty"`
	// ZoneError says why the node's zone could not be read.
	ZoneError string `json:"zoneError,omitempty"`
}

// NetworkReport is one Layer2 network's place in the upgrade.
type NetworkReport struct {
	Network string `json:"network"`
	// Legacy and TransitRouter are the nodes on each topology.
	Legacy        []string `json:"legacyNodes"`
	TransitRouter []string `json:"transitRouterNodes"`
	// ArtifactsIn are the zones still holding the network's upgrade ports.
	ArtifactsIn []string `json:"upgradeArtifactsIn,omitempty"`
	// TransitSubnets are the network's transit subnets, reported when the defaults
	// overlapped its subnets and others were chosen (OKEP-5094 option 4).
	TransitSubnets []string `json:"transitSubnetsChosen,omitempty"`
}

// Report is the whole upgrade: per node, per network, and what to do next.
type Report struct {
	Nodes    []NodeReport    `json:"nodes"`
	Networks []NetworkReport `json:"networks"`
	// Upgraded of Total nodes run the transit router.
	Upgraded int `json:"upgraded"`
	Total    int `json:"total"`
	// Complete: every node is upgraded and no zone holds an upgrade artifact.
	Complete bool `json:"complete"`
	// Next are the operator's next actions, most pressing first.
	Next []string `json:"next,omitempty"`
}

// Assess reports the upgrade from the cluster state (nodes and their annotations, pods,
// networks) and what each node's zone holds. A node whose zone is unknown is judged by
// its annotation and pods alone.
func Assess(st *cluster.State, zones map[string]Zone) Report {
	r := Report{Total: len(st.Nodes)}
	var blocked, waiting, converting, unreadable, legacyAgents []string
	artifactZones := map[string][]string{} // network -> zones
	for _, node := range st.Nodes {
		z := zones[node.Name]
		nr := NodeReport{Node: node.Name, Version: node.Layer2TopologyVersion}
		if z.Err != nil {
			nr.ZoneError = z.Err.Error()
			unreadable = append(unreadable, node.Name)
		}
		pods := LocalLayer2Pods(st, node.Name)
		var legacyOnly bool
		if z.Footprint != nil {
			nr.UnknownNetworks = unknownNetworks(st, z.Footprint.Legacy)
			legacyOnly = len(z.Footprint.Legacy) > 0 && len(z.Footprint.TransitRouter) == 0
		}
		blocks := len(pods) > 0 || len(nr.UnknownNetworks) > 0
		switch {
		case node.Layer2TransitRouter() && !(legacyOnly && blocks):
			nr.Phase = PhaseUpgraded
			r.Upgraded++
		case z.Agent == PhaseLegacy:
			nr.Phase = PhaseLegacy
			legacyAgents = append(legacyAgents, node.Name)
		case !node.Layer2TransitRouter() && z.Footprint != nil && len(z.Footprint.TransitRouter) > 0:
			nr.Phase = PhaseConverting
			converting = append(converting, node.Name)
		case blocks:
			nr.Phase = PhaseBlocked
			nr.Blocking = podNames(pods)
			for _, p := range pods {
				if p.DaemonSet != "" {
					nr.DaemonSetPods = append(nr.DaemonSetPods, p.Namespace+"/"+p.Name)
				}
			}
			blocked = append(blocked, node.Name)
		default:
			nr.Phase = PhaseLegacy
			waiting = append(waiting, node.Name)
		}
		if z.Footprint != nil {
			nr.Artifacts = sortedKeys(z.Footprint.Upgrade)
			for _, network := range nr.Artifacts {
				artifactZones[network] = append(artifactZones[network], node.Name)
			}
		}
		r.Nodes = append(r.Nodes, nr)
	}
	for _, n := range st.Networks {
		if n.Topology != cluster.Layer2 || n.Role != cluster.Primary {
			continue
		}
		nr := NetworkReport{Network: n.Name, Legacy: []string{}, TransitRouter: []string{}, ArtifactsIn: artifactZones[n.Name]}
		for _, node := range st.Nodes {
			if node.Layer2TransitRouter() {
				nr.TransitRouter = append(nr.TransitRouter, node.Name)
			} else {
				nr.Legacy = append(nr.Legacy, node.Name)
			}
		}
		if n.TransitSubnetsChanged {
			for _, t := range n.TransitSubnets {
				nr.TransitSubnets = append(nr.TransitSubnets, t.String())
			}
		}
		r.Networks = append(r.Networks, nr)
	}
	var leftovers []string
	for _, nr := range r.Nodes {
		if len(nr.Artifacts) > 0 {
			leftovers = append(leftovers, nr.Node)
		}
	}
	r.Complete = r.Upgraded == r.Total && len(leftovers) == 0 && len(unreadable) == 0
	r.Next = nextActions(r, blocked, legacyAgents, waiting, converting, leftovers, unreadable)
	return r
}

// nextActions says what the operator does next, most pressing first.
func nextActions(r Report, blocked, legacyAgents, waiting, converting, leftovers, unreadable []string) []string {
	var next []string
	byNode := map[string]NodeReport{}
	for _, nr := range r.Nodes {
		byNode[nr.Node] = nr
	}
	for _, node := range legacyAgents {
		next = append(next, fmt.Sprintf("roll out the new agent on node %s: it runs --layer2-topology=v1", node))
	}
	for _, node := range blocked {
		nr := byNode[node]
		if pods := nr.Blocking; len(pods) > 0 {
			action := fmt.Sprintf("drain node %s (kubectl drain %s --ignore-daemonsets --delete-emptydir-data): Layer2 %s %s still %s on it",
				node, node, plural(len(pods), "pod", "pods"), podList(pods), plural(len(pods), "runs", "run"))
			if ds := nr.DaemonSetPods; len(ds) > 0 {
				action += fmt.Sprintf("; DaemonSet %s %s %s after a drain: the node converts once no DaemonSet runs Layer2 pods there (keep it off the node with a node selector while it converts)",
					plural(len(ds), "pod", "pods"), podList(ds), plural(len(ds), "stays or comes back", "stay or come back"))
			}
			next = append(next, action)
		}
		if nets := nr.UnknownNetworks; len(nets) > 0 {
			next = append(next, fmt.Sprintf("fix %s %s: node %s's zone has %s on the legacy topology, but %s not in the cluster state (kubectl ovnk status names the bad annotation)",
				plural(len(nets), "network", "networks"), strings.Join(nets, ", "), node, plural(len(nets), "it", "them"), plural(len(nets), "it is", "they are")))
		}
	}
	for _, node := range waiting {
		next = append(next, fmt.Sprintf("node %s has no Layer2 pods: its agent converts it at its next reconcile (restart the agent if it runs a release without the transit router)", node))
	}
	for _, node := range converting {
		next = append(next, fmt.Sprintf("wait: node %s is converting; its new Layer2 pods start once it is done", node))
	}
	if r.Upgraded == r.Total && len(leftovers) > 0 {
		next = append(next, fmt.Sprintf("wait: every node is upgraded; %s still %s upgrade ports, removed at the next reconcile",
			plural(len(leftovers), "zone", "zones")+" "+strings.Join(leftovers, ", "), plural(len(leftovers), "holds", "hold")))
	}
	if len(unreadable) > 0 {
		next = append(next, fmt.Sprintf("check the agents of %s %s: their zones could not be read",
			plural(len(unreadable), "node", "nodes"), strings.Join(unreadable, ", ")))
	}
	return next
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
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
