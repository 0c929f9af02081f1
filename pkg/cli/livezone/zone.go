// Package livezone reads what a node's OVN zone holds right now, for the views that
// show it (`kubectl ovnk topology`, `routes`, `trace`, `upgrade`): it picks the node
// (--node, or a default the views explain), reads the zone's NB content (straight from
// its endpoint, or through a pod: ovnk's agent, or upstream OVN-Kubernetes'
// ovnkube-node or ovnkube-db), and resolves the network a user names to the rows that belong to it.
package livezone

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Zone is what one node's NB held when it was read.
type Zone struct {
	// Node is the node whose zone this is.
	Node string
	// Nodes are the cluster's nodes, sorted by name.
	Nodes []string
	// Defaulted says Node was chosen by default rather than with --node.
	Defaulted bool
	// Rows are the zone's rows, keyed by their real UUIDs.
	Rows *rows.Set
	// Index resolves the rows' references.
	Index *rows.Index

	// zoneStatus is the node's ovnk.io/zone-status: why a network is not programmed.
	zoneStatus map[string]string
}

// Read picks the node — node (--node), or by default the first by name — and reads its
// zone, from nb (--nb) when set, else from wherever For says.
func Read(ctx context.Context, f *cmdutil.Factory, nb, node string) (*Zone, error) {
	nodes, err := listNodes(ctx, f)
	if err != nil {
		return nil, err
	}
	z := &Zone{Node: node}
	for _, n := range nodes {
		z.Nodes = append(z.Nodes, n.Name)
	}
	if z.Node == "" {
		z.Node, z.Defaulted = z.Nodes[0], true
	}
	i := slices.IndexFunc(nodes, func(n corev1.Node) bool { return n.Name == z.Node })
	if i < 0 {
		return nil, fmt.Errorf("unknown node %q: the cluster's nodes are %s", z.Node, listSome(z.Nodes))
	}
	// A malformed report only costs the hint it would give; the zone is still shown.
	z.zoneStatus, _, _ = cluster.ZoneStatusCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: z.Node}, nodes[i].Annotations)

	d, err := For(f, nb).Dump(ctx, z.Node)
	if err != nil {
		return nil, err
	}
	if z.Rows, err = d.Rows(); err != nil {
		return nil, fmt.Errorf("read node %s's zone: %w", z.Node, err)
	}
	z.Index = rows.NewIndex(z.Rows)
	return z, nil
}

// listNodes lists the cluster's nodes sorted by name, and refuses a cluster with none.
func listNodes(ctx context.Context, f *cmdutil.Factory) ([]corev1.Node, error) {
	conn, err := f.Connect()
	if err != nil {
		return nil, err
	}
	var list corev1.NodeList
	if err := conn.Client.List(ctx, &list); err != nil {
		return nil, conn.Explain(fmt.Errorf("list nodes: %w", err))
	}
	if len(list.Items) == 0 {
		return nil, errors.New("the cluster has no nodes, so there is no zone to show: add a node (or run `make demo` for a sandbox with three)")
	}
	slices.SortFunc(list.Items, func(a, b corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// maxListed is how many names an error message or hint lists before "…".
const maxListed = 5

// listSome joins up to maxListed names and says how many there are in all.
func listSome(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(names[:maxListed], ", "), len(names))
}

// NodeHint says how the node was chosen when the user did not choose it and could have
// chosen another; "" otherwise.
func (z *Zone) NodeHint() string {
	if !z.Defaulted || len(z.Nodes) < 2 {
		return ""
	}
	return fmt.Sprintf("Showing %s, the first of %d nodes by name; pick another with --node: %s.",
		z.Node, len(z.Nodes), listSome(z.Nodes[1:]))
}

// NotProgrammed is why the node's agent reported (ovnk.io/zone-status) that its zone has
// not programmed the network or connect under key (a network's OVN name, or
// cluster.ConnectZoneStatusKey), "" when it reported no reason.
func (z *Zone) NotProgrammed(key string) string { return z.zoneStatus[key] }

// Title says what a view shows: the network and whose zone.
func (z *Zone) Title(n Network) string {
	var details []string
	if n.OVNName != n.Name {
		details = append(details, n.OVNName)
	}
	if n.Topology != "" {
		details = append(details, n.Topology)
	}
	title := "Network " + n.Name
	if len(details) > 0 {
		title += " (" + strings.Join(details, ", ") + ")"
	}
	return fmt.Sprintf("%s in node %s's zone", title, z.Node)
}

// Routers are the network's routers, by name.
func (z *Zone) Routers(n Network) []*nbdb.LogicalRouter {
	var out []*nbdb.LogicalRouter
	for _, lr := range z.Rows.Routers {
		if lr.ExternalIDs[rows.NetworkKey] == n.OVNName {
			out = append(out, lr)
		}
	}
	slices.SortFunc(out, func(a, b *nbdb.LogicalRouter) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Switches are the network's switches, by name.
func (z *Zone) Switches(n Network) []*nbdb.LogicalSwitch {
	var out []*nbdb.LogicalSwitch
	for _, ls := range z.Rows.Switches {
		if ls.ExternalIDs[rows.NetworkKey] == n.OVNName {
			out = append(out, ls)
		}
	}
	slices.SortFunc(out, func(a, b *nbdb.LogicalSwitch) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Router is the zone's router of that name, or nil.
func (z *Zone) Router(name string) *nbdb.LogicalRouter { return z.Index.Router(name) }

// RouterPorts are a router's ports, by name, as ovn-nbctl show lists them.
func (z *Zone) RouterPorts(lr *nbdb.LogicalRouter) []*nbdb.LogicalRouterPort {
	out := make([]*nbdb.LogicalRouterPort, 0, len(lr.Ports))
	for _, key := range lr.Ports {
		if lrp := z.Index.RouterPorts[key]; lrp != nil {
			out = append(out, lrp)
		}
	}
	slices.SortFunc(out, func(a, b *nbdb.LogicalRouterPort) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// SwitchPorts are a switch's ports, by name, as ovn-nbctl show lists them.
func (z *Zone) SwitchPorts(ls *nbdb.LogicalSwitch) []*nbdb.LogicalSwitchPort {
	out := make([]*nbdb.LogicalSwitchPort, 0, len(ls.Ports))
	for _, key := range ls.Ports {
		if lsp := z.Index.SwitchPorts[key]; lsp != nil {
			out = append(out, lsp)
		}
	}
	slices.SortFunc(out, func(a, b *nbdb.LogicalSwitchPort) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
