package topologycmd

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/topology"
)

// ConnectView is what `kubectl ovnk topology connect/NAME -o json|yaml` prints: a
// ClusterNetworkConnect's connect router in one node's zone, and the connected
// networks' routers there with their side of the link.
type ConnectView struct {
	// Node is the node whose zone was read.
	Node string `json:"node"`
	// Connect is the ClusterNetworkConnect's name.
	Connect string `json:"connect"`
	// Router is the connect router, its ports sorted by name. A port's peer names the
	// network whose router it links to; a remote port stands for another node's link.
	Router Router `json:"router"`
	// Networks are the routers in the zone that a port of the connect router links
	// to, by network and router name.
	Networks []ConnectedRouter `json:"networks"`
}

// ConnectedRouter is a connected network's router (the cluster router of a Layer3
// network, the transit router of a Layer2 one) as the connect sees it.
type ConnectedRouter struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// Role is cluster router or transit router.
	Role string `json:"role,omitempty"`
	// Network is the network the router belongs to (its external_ids).
	Network livezone.Network `json:"network"`
	// Links are the router's ports peered with the connect router (rtocr-…), by name.
	Links []RouterPort `json:"links"`
	// Policies counts the router's policies at priority 9001 that reroute to the
	// connect router's side of a link: they steer the pods' traffic for the other
	// connected networks (`kubectl ovnk routes NETWORK --policies` lists them).
	Policies int `json:"policies"`
}

// connectArgPrefix names a connect on the command line, as in connect/NAME. A
// UserDefinedNetwork of a namespace named "connect" is still reached as NAME -n connect
// or by its OVN name.
const connectArgPrefix = "connect/"

// connectRole is the role a connect router is shown with.
const connectRole = "connect router"

// connectArg returns the connect an argument names, as connect/NAME or as its router's
// name.
func connectArg(arg string) (string, bool) {
	if name, ok := strings.CutPrefix(arg, connectArgPrefix); ok {
		return name, true
	}
	return strings.CutPrefix(arg, topology.ConnectRouterName(""))
}

// connectRouters are the zone's connect routers by connect name: the routers whose
// external_ids say a ClusterNetworkConnect owns them. The networks' routers carry
// only their network's IDs, even where their link ports carry the connect's.
func connectRouters(z *livezone.Zone) map[string]*nbdb.LogicalRouter {
	out := map[string]*nbdb.LogicalRouter{}
	for _, lr := range z.Rows.Routers {
		if cnc, ok := topology.ConnectOf(lr.ExternalIDs); ok {
			out[cnc] = lr
		}
	}
	return out
}

// connectRouter resolves the connect arg names to its router in the zone. The error
// for a connect the zone does not have says why its agent has not programmed it when
// it reported a reason, else lists the connects the zone has.
func connectRouter(z *livezone.Zone, arg, cnc string) (*nbdb.LogicalRouter, error) {
	routers := connectRouters(z)
	if lr := routers[cnc]; lr != nil {
		return lr, nil
	}
	if reason := z.NotProgrammed(cluster.ConnectZoneStatusKey(cnc)); reason != "" {
		return nil, fmt.Errorf("connect %q is not programmed in node %s's zone yet: %s", arg, z.Node, reason)
	}
	if len(routers) == 0 {
		return nil, fmt.Errorf("unknown connect %q: node %s's zone holds no connect routers (kubectl ovnk connections lists the cluster's connects)", arg, z.Node)
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(routers)) {
		names = append(names, connectArgPrefix+name)
	}
	return nil, fmt.Errorf("unknown connect %q in node %s's zone: it holds %s", arg, z.Node, strings.Join(names, ", "))
}

// connectView assembles the view of connect cnc's router cr. The builder shows no
// network, so every peer on a network's router names that network.
func (b *builder) connectView(cnc string, cr *nbdb.LogicalRouter) ConnectView {
	v := ConnectView{Node: b.z.Node, Connect: cnc, Router: b.routerView(cr), Networks: []ConnectedRouter{}}
	v.Router.Role = connectRole
	// The networks' routers are found through the peers of the connect router's ports,
	// so only the links this zone holds count; the next hops of their policies are the
	// connect router's addresses on those links.
	type linked struct {
		lr       *nbdb.LogicalRouter
		view     ConnectedRouter
		nexthops map[netip.Addr]bool
	}
	byName := map[string]*linked{}
	for _, p := range v.Router.Ports {
		if p.Peer == nil || p.Peer.Kind != "router" || b.routerOfPort[p.Peer.Port] == nil {
			continue
		}
		lr := b.routerOfPort[p.Peer.Port]
		l := byName[lr.Name]
		if l == nil {
			var n livezone.Network
			if net := networkOf(lr.ExternalIDs); net != nil {
				n = *net
			}
			l = &linked{lr: lr, nexthops: map[netip.Addr]bool{},
				view: ConnectedRouter{Name: lr.Name, UUID: lr.UUID, Role: livezone.RouterRole(n, lr.Name), Network: n, Links: []RouterPort{}}}
			byName[lr.Name] = l
		}
		for _, lrp := range b.z.RouterPorts(lr) {
			if lrp.Name == p.Peer.Port {
				l.view.Links = append(l.view.Links, b.routerPort(lrp))
			}
		}
		for _, n := range p.Networks {
			if pfx, err := netip.ParsePrefix(n); err == nil {
				l.nexthops[pfx.Addr()] = true
			}
		}
	}
	for _, l := range byName {
		l.view.Policies = b.connectPolicies(l.lr, l.nexthops)
		slices.SortFunc(l.view.Links, func(a, b RouterPort) int { return cmp.Compare(a.Name, b.Name) })
		v.Networks = append(v.Networks, l.view)
	}
	slices.SortFunc(v.Networks, func(a, b ConnectedRouter) int {
		return cmp.Or(cmp.Compare(a.Network.Name, b.Network.Name), cmp.Compare(a.Name, b.Name))
	})
	return v
}

// connectPolicies counts a network router's policies at the connect priority that
// reroute to one of the addresses: those of one connect router, when the network is in
// several connects.
func (b *builder) connectPolicies(lr *nbdb.LogicalRouter, addrs map[netip.Addr]bool) int {
	n := 0
	for _, key := range lr.Policies {
		p := b.z.Index.Policies[key]
		if p == nil || p.Priority != topology.ConnectPolicyPriority || p.Action != nbdb.LogicalRouterPolicyActionReroute {
			continue
		}
		if slices.ContainsFunc(p.Nexthops, func(nh string) bool {
			a, err := netip.ParseAddr(nh)
			return err == nil && addrs[a]
		}) {
			n++
		}
	}
	return n
}

// completeArg completes the argument with the cluster's networks and, as connect/NAME,
// its ClusterNetworkConnects. It reads the API objects rather than a zone: reading a
// zone runs a command in the node's agent, too slow for a key press.
func completeArg(f *cmdutil.Factory) cobra.CompletionFunc {
	names := f.CompleteNames(func(ctx context.Context, c client.Client) ([]string, error) {
		nets, err := livezone.ListNetworkNames(ctx, c)
		if err != nil {
			return nil, err
		}
		var cncs ovnkv1.ClusterNetworkConnectList
		if err := c.List(ctx, &cncs); err != nil {
			return nil, err
		}
		connects := make([]string, 0, len(cncs.Items))
		for _, cnc := range cncs.Items {
			connects = append(connects, connectArgPrefix+cnc.Name)
		}
		slices.Sort(connects)
		return append(nets, connects...), nil
	})
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}
