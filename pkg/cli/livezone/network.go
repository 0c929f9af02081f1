package livezone

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Network is a network as its users and OVN name it.
type Network struct {
	// Name is how users name it: "default", a ClusterUserDefinedNetwork's name, or a
	// UserDefinedNetwork's namespace/name.
	Name string `json:"name"`
	// OVNName is its name in OVN, the rows' external_ids:k8s.ovn.org/network
	// ("cluster_udn_blue", "ns1_red").
	OVNName string `json:"ovnName"`
	// Topology is layer3 or layer2, from the rows' external_ids:k8s.ovn.org/topology.
	Topology string `json:"topology,omitempty"`
}

// Networks are the networks the zone has routers or switches of, by user name.
func (z *Zone) Networks() []Network {
	seen := map[string]Network{}
	add := func(ids map[string]string) {
		name := ids[rows.NetworkKey]
		if name == "" {
			return
		}
		if _, ok := seen[name]; !ok {
			seen[name] = Network{Name: cluster.UserNetworkName(name), OVNName: name, Topology: ids[rows.TopologyKey]}
		}
	}
	for _, lr := range z.Rows.Routers {
		add(lr.ExternalIDs)
	}
	for _, ls := range z.Rows.Switches {
		add(ls.ExternalIDs)
	}
	out := make([]Network, 0, len(seen))
	for _, n := range seen {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Network) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Namespace is the namespace a bare UDN name is looked up in, and whether the user
// chose it with -n.
type Namespace struct {
	Name     string
	Explicit bool
}

// Network resolves what the user typed — default, a CUDN's name, a UDN's
// namespace/name (or its name with -n), or an OVN network name — to a network of the
// zone. The error for a network the zone does not have lists the ones it has, or says
// why the node has not programmed it when its agent reported a reason.
func (z *Zone) Network(arg string, ns Namespace) (Network, error) {
	return z.network(arg, candidateNames(arg, ns))
}

// NetworkOf is the network of the OVN name ovnName in the zone, arg being what the user
// typed for it (found in the cluster's objects); its errors are Network's.
func (z *Zone) NetworkOf(arg, ovnName string) (Network, error) {
	return z.network(arg, []string{ovnName})
}

// network is the first of the OVN names candidates that the zone holds.
func (z *Zone) network(arg string, candidates []string) (Network, error) {
	have := map[string]Network{}
	for _, n := range z.Networks() {
		have[n.OVNName] = n
	}
	for _, c := range candidates {
		if n, ok := have[c]; ok {
			return n, nil
		}
	}
	for _, c := range candidates {
		if reason := z.zoneStatus[c]; reason != "" {
			return Network{}, fmt.Errorf("network %q is not programmed in node %s's zone yet: %s", arg, z.Node, reason)
		}
	}
	var names []string
	for _, n := range z.Networks() {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return Network{}, fmt.Errorf("unknown network %q: node %s's zone holds no networks yet (is its agent running? kubectl ovnk status)", arg, z.Node)
	}
	return Network{}, fmt.Errorf("unknown network %q in node %s's zone: it holds %s", arg, z.Node, strings.Join(names, ", "))
}

// candidateNames are the OVN names arg may mean, most likely first. A name with -n is
// a UDN of that namespace before anything else; a bare name is a CUDN, then an OVN
// name, then a UDN of the context's namespace.
func candidateNames(arg string, ns Namespace) []string {
	if arg == cluster.DefaultNetworkName {
		return []string{arg}
	}
	if namespace, name, ok := strings.Cut(arg, "/"); ok {
		return []string{cluster.UDNNetworkName(namespace, name)}
	}
	if ns.Explicit {
		return []string{cluster.UDNNetworkName(ns.Name, arg), cluster.CUDNNetworkName(arg), arg}
	}
	return []string{cluster.CUDNNetworkName(arg), arg, cluster.UDNNetworkName(ns.Name, arg)}
}

// ListNetworkNames lists the networks users can name, for completion: default, then
// every ClusterUserDefinedNetwork and UserDefinedNetwork as the commands name them
// (netview.Network.Ref: NAME, NAMESPACE/NAME), sorted.
func ListNetworkNames(ctx context.Context, c client.Client) ([]string, error) {
	cudns, udns, err := netview.ListAll(ctx, c)
	if err != nil {
		return nil, err
	}
	names := []string{cluster.DefaultNetworkName}
	for _, n := range netview.FromLists(&ovnkv1.ClusterUserDefinedNetworkList{Items: cudns}, &ovnkv1.UserDefinedNetworkList{Items: udns}) {
		names = append(names, n.Ref())
	}
	slices.Sort(names[1:])
	return names, nil
}

// CompleteNetwork completes a command's first argument with the cluster's networks.
func CompleteNetwork(f *cmdutil.Factory) cobra.CompletionFunc {
	names := f.CompleteNames(ListNetworkNames)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// RouterRole says what a router of network n is for, from OVN-Kubernetes' names; ""
// for a router it does not recognise.
func RouterRole(n Network, name string) string {
	prefix := cluster.OVNPrefix(n.OVNName)
	switch {
	case name == prefix+"ovn_cluster_router":
		return "cluster router"
	case name == prefix+"transit_router":
		return "transit router"
	case strings.HasPrefix(name, "GR_"+prefix):
		return "gateway router"
	}
	return ""
}

// SwitchRole says what a switch of network n is for; node is the node the switch
// belongs to (external_ids:k8s.ovn.org/node), "" for a switch of the whole network.
func SwitchRole(n Network, name, node string) string {
	prefix := cluster.OVNPrefix(n.OVNName)
	switch {
	case name == prefix+"join":
		return "join switch"
	case name == prefix+"transit_switch":
		return "transit switch"
	case name == prefix+"ovn_layer2_switch":
		return "layer2 switch"
	case node != "" && name == "ext_"+prefix+node:
		return "external switch"
	case node != "" && name == prefix+node:
		return "node switch"
	}
	return ""
}
