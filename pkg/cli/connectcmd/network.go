package connectcmd

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// subnetPrefixes are the network's pod subnets. The API server admits only valid
// CIDRs; one that does not parse anyway is left out rather than guessed at.
func subnetPrefixes(n netview.Network) []netip.Prefix { return prefixes(n.Subnets()) }

// hasFamily reports whether the network has an IPv4 (v4) or IPv6 subnet.
func hasFamily(n netview.Network, v4 bool) bool {
	return slices.ContainsFunc(subnetPrefixes(n), func(p netip.Prefix) bool { return p.Addr().Is4() == v4 })
}

// ownerKey is the network's key in k8s.ovn.org/network-connect-subnet, by its id as
// netview.Network.IDs reads it (its object's, else that upstream OVN-Kubernetes wrote
// on its NADs, of which nads may hold any); "" while it has none. The error says why
// an id that is there cannot be read.
func ownerKey(n netview.Network, nads []*nadv1.NetworkAttachmentDefinition) (string, error) {
	ids, ok, err := n.IDs(nads)
	if err != nil || !ok {
		return "", err
	}
	return cluster.NetworkOwnerKeyOf(cluster.Topology(n.Topology()), ids.ID), nil
}

func prefixes(cidrs []string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// sortNetworks orders networks by how the commands name them.
func sortNetworks(nets []netview.Network) {
	slices.SortFunc(nets, func(a, b netview.Network) int { return strings.Compare(a.Ref(), b.Ref()) })
}

func refs(nets []netview.Network) []string {
	out := make([]string, len(nets))
	for i, n := range nets {
		out[i] = n.Ref()
	}
	return out
}

// checkRef checks the syntax of a network argument: NAME or NAMESPACE/NAME.
func checkRef(arg string) error {
	ns, name, namespaced := strings.Cut(arg, "/")
	if !namespaced {
		name = arg
	}
	switch {
	case arg == "" || namespaced && (ns == "" || name == "" || strings.Contains(name, "/")):
		return fmt.Errorf("network %q: name a ClusterUserDefinedNetwork as NAME and a UserDefinedNetwork as NAMESPACE/NAME", arg)
	case namespaced && len(validation.IsDNS1123Label(ns)) > 0:
		return fmt.Errorf("network %q: %q is not a namespace name: %s", arg, ns, validation.IsDNS1123Label(ns)[0])
	case len(validation.IsDNS1123Subdomain(name)) > 0:
		return fmt.Errorf("network %q: %q is not a network name: %s", arg, name, validation.IsDNS1123Subdomain(name)[0])
	}
	return nil
}

// resolve finds the network arg names among nets: a ClusterUserDefinedNetwork by NAME,
// a UserDefinedNetwork by NAMESPACE/NAME. When none matches, the error says what does
// exist under that name.
func resolve(nets []netview.Network, arg string) (netview.Network, error) {
	for _, n := range nets {
		if n.Ref() == arg {
			return n, nil
		}
	}
	ns, name, namespaced := strings.Cut(arg, "/")
	if !namespaced {
		var udns []string
		for _, n := range nets {
			if !n.Cluster() && n.UDN.Name == arg {
				udns = append(udns, n.Ref())
			}
		}
		hint := "`kubectl ovnk network list` shows the networks"
		if len(udns) > 0 {
			hint = "a UserDefinedNetwork is named NAMESPACE/NAME: did you mean " + orList(udns) + "?"
		}
		return netview.Network{}, fmt.Errorf("unknown network %s: there is no ClusterUserDefinedNetwork %s (%s)", arg, arg, hint)
	}
	hint := fmt.Sprintf("`kubectl ovnk network list -n %s` shows that namespace's networks", ns)
	if slices.ContainsFunc(nets, func(n netview.Network) bool { return n.Cluster() && n.CUDN.Name == name }) {
		hint = fmt.Sprintf("the ClusterUserDefinedNetwork %s is named without a namespace", name)
	}
	return netview.Network{}, fmt.Errorf("unknown network %s: there is no UserDefinedNetwork %s in namespace %s (%s)", arg, name, ns, hint)
}

// orList joins words as "a, b or c".
func orList(words []string) string { return joinList(words, "or") }

// andList joins words as "a, b and c".
func andList(words []string) string { return joinList(words, "and") }

func joinList(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
