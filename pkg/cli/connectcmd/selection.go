package connectcmd

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// selectorsFor returns network selectors that select exactly nets: the
// ClusterUserDefinedNetworks by NetworkNameLabel, the UserDefinedNetworks (all primary)
// by their namespaces' names, since a namespace has at most one primary network.
func selectorsFor(nets []netview.Network) ovnkv1.NetworkSelectors {
	var cudns, namespaces []string
	for _, n := range nets {
		if n.Cluster() {
			cudns = append(cudns, n.CUDN.Name)
		} else {
			namespaces = append(namespaces, n.UDN.Namespace)
		}
	}
	var out ovnkv1.NetworkSelectors
	if len(cudns) > 0 {
		out = append(out, ovnkv1.NetworkSelector{
			NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks,
			ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{
				NetworkSelector: inSelector(NetworkNameLabel, cudns),
			},
		})
	}
	if len(namespaces) > 0 {
		out = append(out, ovnkv1.NetworkSelector{
			NetworkSelectionType: ovnkv1.PrimaryUserDefinedNetworks,
			PrimaryUserDefinedNetworkSelector: &ovnkv1.PrimaryUserDefinedNetworkSelector{
				NamespaceSelector: inSelector(corev1.LabelMetadataName, namespaces),
			},
		})
	}
	return out
}

func inSelector(key string, values []string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: key, Operator: metav1.LabelSelectorOpIn, Values: slices.Sorted(slices.Values(values)),
	}}}
}

// selection is what a connect's selectors pick, as pkg/cluster reads them: the
// networks that can be connected, and those that cannot, with the reason.
type selection struct {
	connected []netview.Network // sorted by ref
	refused   []refusedNetwork
}

type refusedNetwork struct {
	network netview.Network
	reason  string
}

// all is every selected network, connectable or not, sorted by ref.
func (s selection) all() []netview.Network {
	out := slices.Clone(s.connected)
	for _, r := range s.refused {
		out = append(out, r.network)
	}
	sortNetworks(out)
	return out
}

// selected reads the networks cnc selects, as the leader does (netview.Model):
// ClusterUserDefinedNetworks by their labels, and the Primary UserDefinedNetwork of each
// namespace its namespace selector matches; a network whose spec is invalid is never
// selected, and a selector that does not parse selects nothing.
func (snap *snapshot) selected(cnc *ovnkv1.ClusterNetworkConnect) selection {
	var sel selection
	picked := snap.model.Selected(cnc)
	for _, n := range snap.networks {
		if !picked[n.OVNName()] {
			continue
		}
		cn, err := snap.model.Network(n)
		if err != nil {
			continue // picked by OVN name, but another object's: never the case for a valid network
		}
		if why := cluster.Connectability(cn); why != cluster.Connectable {
			sel.refused = append(sel.refused, refusedNetwork{network: n, reason: string(why)})
		} else {
			sel.connected = append(sel.connected, n)
		}
	}
	return sel
}

// selectorText shows a connect's selectors the way kubectl shows label selectors.
func selectorText(cnc *ovnkv1.ClusterNetworkConnect) []string {
	var out []string
	for _, s := range cnc.Spec.NetworkSelectors {
		var sel *metav1.LabelSelector
		var what string
		switch {
		case s.ClusterUserDefinedNetworkSelector != nil:
			sel, what = &s.ClusterUserDefinedNetworkSelector.NetworkSelector, "ClusterUserDefinedNetworks labelled"
		case s.PrimaryUserDefinedNetworkSelector != nil:
			sel, what = &s.PrimaryUserDefinedNetworkSelector.NamespaceSelector, "the Primary UserDefinedNetworks of namespaces labelled"
		default:
			out = append(out, string(s.NetworkSelectionType)+" (not connectable)")
			continue
		}
		text := "<every one>"
		if parsed, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			text = fmt.Sprintf("<invalid: %v>", err)
		} else if s := parsed.String(); s != "" {
			text = s
		}
		out = append(out, what+" "+text)
	}
	return out
}

// sameNetworks reports whether two network lists hold the same networks.
func sameNetworks(a, b []netview.Network) bool {
	ra, rb := refs(a), refs(b)
	slices.Sort(ra)
	slices.Sort(rb)
	return slices.Equal(ra, rb)
}

// shared lists the networks of a that b also holds, by ref.
func shared(a, b []netview.Network) []string {
	var out []string
	for _, n := range a {
		if slices.ContainsFunc(b, func(m netview.Network) bool { return m.Ref() == n.Ref() }) {
			out = append(out, n.Ref())
		}
	}
	return out
}

// describeNetworks names networks as "blue and ns/green" for messages.
func describeNetworks(nets []netview.Network) string {
	return andList(refs(nets))
}
