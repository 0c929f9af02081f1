package cluster

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// SpecNetworks returns the user-defined networks that in.CUDNs and in.UDNs describe,
// read from their specs alone, sorted by name, with an *ObjectError for each object left
// out. Unlike Build it does not read k8s.ovn.org/network-id or k8s.ovn.org/tunnel-keys:
// ID is 0 and TunnelKeys nil, so a network that waits for the leader's allocation is
// included. It is the leader's view: it validates and allocates networks before Build
// accepts them, and learns which namespaces a network not allocated yet will serve.
// Objects are left out, as in Build, when their spec is invalid or their network names
// collide (all of them). in.Namespaces resolves ClusterUserDefinedNetworks' namespace
// selectors; everything else in in is ignored.
func SpecNetworks(in Inputs) ([]*Network, []error) {
	namespaces := sortedPtrs(in.Namespaces, func(ns *corev1.Namespace) string { return ns.Name })
	b := &builder{networks: map[string]*Network{}, unavailable: map[string]bool{}}
	byName := map[string][]networkSource{}
	for _, src := range networkSources(in.CUDNs, in.UDNs, namespaces) {
		byName[src.name] = append(byName[src.name], src)
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		srcs := byName[name]
		if len(srcs) > 1 {
			b.collision(name, srcs)
			continue
		}
		src := srcs[0]
		n, err := src.fromSpec()
		if src.err != nil {
			err = src.err
		}
		if err != nil {
			b.errs = append(b.errs, &ObjectError{Object: src.owner, Err: err})
			continue
		}
		b.networks[name] = n
	}
	return slices.SortedFunc(maps.Values(b.networks), func(x, y *Network) int { return cmp.Compare(x.Name, y.Name) }), b.errs
}

// networkSources reduces CUDNs and UDNs to what a network is built from, in the order
// given, as userDefinedNetworks does for Build.
func networkSources(cudns []*ovnkv1.ClusterUserDefinedNetwork, udns []*ovnkv1.UserDefinedNetwork, namespaces []*corev1.Namespace) []networkSource {
	var out []networkSource
	for _, c := range cudns {
		if c == nil {
			continue
		}
		src := networkSource{
			name:        CUDNNetworkName(c.Name),
			owner:       ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: c.Name},
			annotations: c.Annotations,
			path:        "spec.network",
			created:     c.CreationTimestamp.Time,
			spec:        c.Spec.Network,
		}
		src.namespaces, src.err = selectNamespaces(&c.Spec.NamespaceSelector, namespaces)
		out = append(out, src)
	}
	for _, u := range udns {
		if u == nil {
			continue
		}
		out = append(out, networkSource{
			name:        UDNNetworkName(u.Namespace, u.Name),
			owner:       ObjectRef{Kind: "UserDefinedNetwork", Namespace: u.Namespace, Name: u.Name},
			annotations: u.Annotations,
			path:        "spec",
			created:     u.CreationTimestamp.Time,
			spec:        ovnkv1.NetworkSpec{Topology: u.Spec.Topology, Layer3: u.Spec.Layer3, Layer2: u.Spec.Layer2},
			namespaces:  []string{u.Namespace},
		})
	}
	return out
}
