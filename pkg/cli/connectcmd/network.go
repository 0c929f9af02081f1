package connectcmd

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// network is a ClusterUserDefinedNetwork or a UserDefinedNetwork; exactly one is set.
type network struct {
	cudn *ovnkv1.ClusterUserDefinedNetwork
	udn  *ovnkv1.UserDefinedNetwork
}

func (n network) object() client.Object {
	if n.cudn != nil {
		return n.cudn
	}
	return n.udn
}

func (n network) cluster() bool { return n.cudn != nil }

// ref is how the commands name the network: NAME for a ClusterUserDefinedNetwork,
// NAMESPACE/NAME for a UserDefinedNetwork.
func (n network) ref() string {
	if n.cluster() {
		return n.cudn.Name
	}
	return n.udn.Namespace + "/" + n.udn.Name
}

func (n network) kind() string {
	if n.cluster() {
		return "ClusterUserDefinedNetwork"
	}
	return "UserDefinedNetwork"
}

// ovnName is the network's name in OVN-Kubernetes, the key of its entries in the nodes'
// zone reports.
func (n network) ovnName() string {
	if n.cluster() {
		return cluster.CUDNNetworkName(n.cudn.Name)
	}
	return cluster.UDNNetworkName(n.udn.Namespace, n.udn.Name)
}

// spec is the network description; a UserDefinedNetwork's has no transport.
func (n network) spec() ovnkv1.NetworkSpec {
	if n.cluster() {
		return n.cudn.Spec.Network
	}
	return ovnkv1.NetworkSpec{Topology: n.udn.Spec.Topology, Layer3: n.udn.Spec.Layer3, Layer2: n.udn.Spec.Layer2}
}

func (n network) topology() ovnkv1.NetworkTopology { return n.spec().Topology }

func (n network) role() ovnkv1.NetworkRole {
	s := n.spec()
	switch {
	case s.Layer3 != nil:
		return s.Layer3.Role
	case s.Layer2 != nil:
		return s.Layer2.Role
	}
	return ""
}

// transport is the east-west transport, Geneve unless a cluster network says otherwise.
func (n network) transport() ovnkv1.TransportOption {
	return cmp.Or(n.spec().Transport, ovnkv1.TransportOptionGeneve)
}

// subnets are the pod subnets. The API server admits only valid CIDRs; one that does
// not parse anyway is left out rather than guessed at.
func (n network) subnets() []netip.Prefix {
	s := n.spec()
	var cidrs []string
	switch {
	case s.Layer3 != nil:
		for _, sub := range s.Layer3.Subnets {
			cidrs = append(cidrs, string(sub.CIDR))
		}
	case s.Layer2 != nil:
		for _, c := range s.Layer2.Subnets {
			cidrs = append(cidrs, string(c))
		}
	}
	return prefixes(cidrs)
}

// joinSubnets are the join subnets the network sets itself; nil means the defaults.
func (n network) joinSubnets() []netip.Prefix {
	s := n.spec()
	var join ovnkv1.DualStackCIDRs
	switch {
	case s.Layer3 != nil:
		join = s.Layer3.JoinSubnets
	case s.Layer2 != nil:
		join = s.Layer2.JoinSubnets
	}
	cidrs := make([]string, len(join))
	for i, c := range join {
		cidrs[i] = string(c)
	}
	return prefixes(cidrs)
}

// hasFamily reports whether the network has an IPv4 (v4) or IPv6 subnet.
func (n network) hasFamily(v4 bool) bool {
	return slices.ContainsFunc(n.subnets(), func(p netip.Prefix) bool { return p.Addr().Is4() == v4 })
}

// refusal says why the network cannot be connected, "" when it can: only primary
// networks have a router to connect, and connect routers need the Geneve overlay.
// The wording is the model's (pkg/cluster), which the leader reports.
func (n network) refusal() string {
	switch {
	case n.role() != ovnkv1.NetworkRolePrimary:
		return "a secondary network cannot be connected; only primary networks can"
	case n.transport() == ovnkv1.TransportOptionNoOverlay:
		return "a no-overlay network cannot be connected: connect routers need the Geneve overlay"
	}
	return ""
}

// ownerKey is the network's key in k8s.ovn.org/network-connect-subnet, "" until the
// leader gave the network an id.
func (n network) ownerKey() string {
	id, ok, err := cluster.NetworkIDCodec.Lookup(cluster.ObjectRef{Kind: n.kind(), Namespace: n.object().GetNamespace(), Name: n.object().GetName()}, n.object().GetAnnotations())
	if err != nil || !ok {
		return ""
	}
	return cluster.NetworkOwnerKey(&cluster.Network{Topology: cluster.Topology(n.topology()), ID: id})
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
func sortNetworks(nets []network) {
	slices.SortFunc(nets, func(a, b network) int { return strings.Compare(a.ref(), b.ref()) })
}

func refs(nets []network) []string {
	out := make([]string, len(nets))
	for i, n := range nets {
		out[i] = n.ref()
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
func resolve(nets []network, arg string) (network, error) {
	for _, n := range nets {
		if n.ref() == arg {
			return n, nil
		}
	}
	ns, name, namespaced := strings.Cut(arg, "/")
	if !namespaced {
		var udns []string
		for _, n := range nets {
			if !n.cluster() && n.udn.Name == arg {
				udns = append(udns, n.ref())
			}
		}
		hint := "`kubectl ovnk network list` shows the networks"
		if len(udns) > 0 {
			hint = "a UserDefinedNetwork is named NAMESPACE/NAME: did you mean " + orList(udns) + "?"
		}
		return network{}, fmt.Errorf("unknown network %s: there is no ClusterUserDefinedNetwork %s (%s)", arg, arg, hint)
	}
	hint := fmt.Sprintf("`kubectl ovnk network list -n %s` shows that namespace's networks", ns)
	if slices.ContainsFunc(nets, func(n network) bool { return n.cluster() && n.cudn.Name == name }) {
		hint = fmt.Sprintf("the ClusterUserDefinedNetwork %s is named without a namespace", name)
	}
	return network{}, fmt.Errorf("unknown network %s: there is no UserDefinedNetwork %s in namespace %s (%s)", arg, name, ns, hint)
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
