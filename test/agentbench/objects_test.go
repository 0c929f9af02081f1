package agentbench

import (
	"fmt"
	"maps"
	"math/big"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/golden"
)

// objects are a cluster as the API server holds it, by kind, in the order they are
// created: a network's namespaces before it, and pods last.
type objects struct {
	Namespaces []corev1.Namespace
	CUDNs      []ovnkv1.ClusterUserDefinedNetwork
	Nodes      []corev1.Node
	Pods       []corev1.Pod
}

// selectLabel is the label a namespace carries for each network it is served by: a
// ClusterUserDefinedNetwork selects namespaces by label, and a fixture says only which
// namespaces its pods are in.
const selectLabel = "bench.ovnk.io/"

// clusterObjects returns the objects from which cluster.Build, given def as the agent's
// default network, builds st again: Nodes with the annotations their agents and the
// leader write, a ClusterUserDefinedNetwork per network with the leader's network-id and
// tunnel-keys, the pods' namespaces, and the pods with their k8s.ovn.org/pod-networks.
// The fixture has no default network, which the agent always has: each node gets the
// i-th block of each of def's subnets and the transit switch addresses of its id, as the
// leader of an empty cluster would hand them out. It covers the fields that
// topologytest.Scale sets; TestObjectsBuildTheScaleZone holds it to that.
func clusterObjects(st *cluster.State, def cluster.DefaultNetworkConfig) (*objects, error) {
	out := &objects{}
	networks := map[string]*cluster.Network{}
	for _, n := range st.Networks {
		if n.Owner.Kind != "ClusterUserDefinedNetwork" {
			return nil, fmt.Errorf("network %s comes from a %s: only ClusterUserDefinedNetworks are written", n.Name, n.Owner.Kind)
		}
		networks[n.Name] = n
		cudn, err := cudnOf(n)
		if err != nil {
			return nil, err
		}
		out.CUDNs = append(out.CUDNs, cudn)
	}
	served := map[string][]string{} // namespace -> the networks serving it, by object name
	for _, p := range st.Pods {
		for name := range p.Networks {
			if name == cluster.DefaultNetworkName {
				continue
			}
			n := networks[name]
			if n == nil {
				return nil, fmt.Errorf("pod %s/%s is on network %s, which the state does not have", p.Namespace, p.Name, name)
			}
			if !slices.Contains(served[p.Namespace], n.Owner.Name) {
				served[p.Namespace] = append(served[p.Namespace], n.Owner.Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range st.Pods {
		if seen[p.Namespace] {
			continue
		}
		seen[p.Namespace] = true
		labels := map[string]string{}
		for _, owner := range served[p.Namespace] {
			labels[selectLabel+owner] = "selected"
		}
		out.Namespaces = append(out.Namespaces, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace, Labels: labels}})
	}
	for i, n := range st.Nodes {
		node, err := nodeOf(n, i, def)
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, node)
	}
	for _, p := range st.Pods {
		annotation := map[string]cluster.PodInterface{}
		for name, iface := range p.Networks {
			nad := cluster.DefaultNetworkName
			if name != cluster.DefaultNetworkName {
				nad = p.Namespace + "/" + networks[name].Owner.Name
			}
			annotation[nad] = iface
		}
		value, err := cluster.PodNetworksCodec.Format(annotation)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		out.Pods = append(out.Pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name,
				Annotations: map[string]string{cluster.AnnotationPodNetworks: value}},
			Spec: corev1.PodSpec{NodeName: p.Node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
		})
	}
	return out, nil
}

// cudnOf is the ClusterUserDefinedNetwork of a network, with the leader's annotations.
func cudnOf(n *cluster.Network) (ovnkv1.ClusterUserDefinedNetwork, error) {
	id, err := cluster.NetworkIDCodec.Format(n.ID)
	if err != nil {
		return ovnkv1.ClusterUserDefinedNetwork{}, fmt.Errorf("network %s: %w", n.Name, err)
	}
	keys, err := cluster.TunnelKeysCodec.Format(n.TunnelKeys)
	if err != nil {
		return ovnkv1.ClusterUserDefinedNetwork{}, fmt.Errorf("network %s: %w", n.Name, err)
	}
	role := ovnkv1.NetworkRolePrimary
	if n.Role == cluster.Secondary {
		role = ovnkv1.NetworkRoleSecondary
	}
	var join ovnkv1.DualStackCIDRs
	for _, p := range n.JoinSubnets {
		join = append(join, ovnkv1.CIDR(p.String()))
	}
	spec := ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopology(n.Topology)}
	switch n.Topology {
	case cluster.Layer3:
		spec.Layer3 = &ovnkv1.Layer3Config{Role: role, MTU: int32(n.MTU), JoinSubnets: join}
		for _, s := range n.Subnets {
			spec.Layer3.Subnets = append(spec.Layer3.Subnets, ovnkv1.Layer3Subnet{CIDR: ovnkv1.CIDR(s.CIDR.String()), HostSubnet: int32(s.HostSubnet)})
		}
	case cluster.Layer2:
		spec.Layer2 = &ovnkv1.Layer2Config{Role: role, MTU: int32(n.MTU), JoinSubnets: join}
		for _, s := range n.Subnets {
			spec.Layer2.Subnets = append(spec.Layer2.Subnets, ovnkv1.CIDR(s.CIDR.String()))
		}
	}
	return ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: n.Owner.Name, Annotations: map[string]string{
			cluster.AnnotationNetworkID:  id,
			cluster.AnnotationTunnelKeys: keys,
		}},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{selectLabel + n.Owner.Name: "selected"}},
			Network:           spec,
		},
	}, nil
}

// nodeOf is the i-th node of the cluster with every annotation a node ready for OVN
// carries, its block of each default network subnet and its default transit addresses
// added.
func nodeOf(n *cluster.Node, i int, def cluster.DefaultNetworkConfig) (corev1.Node, error) {
	fail := func(err error) (corev1.Node, error) { return corev1.Node{}, fmt.Errorf("node %s: %w", n.Name, err) }
	subnets := map[string][]netip.Prefix{}
	maps.Copy(subnets, n.Subnets)
	for _, s := range def.Subnets {
		block, err := nthBlock(s.CIDR, s.HostSubnet, i)
		if err != nil {
			return fail(err)
		}
		subnets[cluster.DefaultNetworkName] = append(subnets[cluster.DefaultNetworkName], block)
	}
	var transit []netip.Prefix
	for _, t := range def.TransitSubnets {
		ip, err := alloc.TransitSwitchIP(t, n.ID)
		if err != nil {
			return fail(err)
		}
		transit = append(transit, ip)
	}
	annotations := map[string]string{}
	if n.Layer2TopologyVersion != "" {
		annotations[cluster.AnnotationLayer2TopologyVersion] = n.Layer2TopologyVersion
	}
	for _, a := range []struct {
		key    string
		format func() (string, error)
	}{
		{cluster.AnnotationNodeID, func() (string, error) { return cluster.NodeIDCodec.Format(n.ID) }},
		{cluster.AnnotationNodeChassisID, func() (string, error) { return cluster.NodeChassisIDCodec.Format(n.ChassisID) }},
		{cluster.AnnotationNodeSubnets, func() (string, error) { return cluster.NodeSubnetsCodec.Format(subnets) }},
		{cluster.AnnotationNodeTransitSwitchPortIfAddr, func() (string, error) { return cluster.TransitSwitchPortIfAddrCodec.Format(transit) }},
		{cluster.AnnotationNodePrimaryIfAddr, func() (string, error) { return cluster.PrimaryIfAddrCodec.Format(n.PrimaryIfAddrs) }},
		{cluster.AnnotationL3GatewayConfig, func() (string, error) { return cluster.L3GatewayConfigCodec.Format(n.Gateway) }},
	} {
		v, err := a.format()
		if err != nil {
			return fail(err)
		}
		annotations[a.key] = v
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, Annotations: annotations}}, nil
}

// nthBlock is the i-th prefix of length bits inside p.
func nthBlock(p netip.Prefix, bits, i int) (netip.Prefix, error) {
	room := bits - p.Bits()
	if room < 0 || (room < 62 && i >= 1<<room) {
		return netip.Prefix{}, fmt.Errorf("%s has no block %d of /%d", p, i, bits)
	}
	a16 := p.Masked().Addr().As16()
	v := new(big.Int).SetBytes(a16[:])
	offset := p.Addr().BitLen() - bits
	v.Add(v, new(big.Int).Lsh(big.NewInt(int64(i)), uint(offset)))
	var out [16]byte
	v.FillBytes(out[:])
	addr := netip.AddrFrom16(out)
	if p.Addr().Is4() {
		addr = addr.Unmap()
	}
	return netip.PrefixFrom(addr, bits), nil
}

// inputs is what the agent's cache would hand cluster.Build.
func (o *objects) inputs(def cluster.DefaultNetworkConfig, cfg cluster.Config) cluster.Inputs {
	in := cluster.Inputs{Config: cfg, DefaultNetwork: def, Nodes: o.Nodes, Namespaces: o.Namespaces, Pods: o.Pods}
	for i := range o.CUDNs {
		in.CUDNs = append(in.CUDNs, &o.CUDNs[i])
	}
	return in
}

// TestObjectsBuildTheScaleZone builds the objects of a small Scale cluster back into a
// state, as the agent does, and requires the zone it compiles, without the default
// network the agent adds, to be the fixture's own zone, every row whole: the benchmark
// then measures the agent on the zone the pkg/ovn benchmarks apply.
func TestObjectsBuildTheScaleZone(t *testing.T) {
	st := topologytest.Scale(4, 6)
	cfg, err := agentConfig(st.Nodes[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := clusterObjects(st, cfg.DefaultNetwork())
	if err != nil {
		t.Fatal(err)
	}
	built, errs := cluster.Build(objs.inputs(cfg.DefaultNetwork(), cfg.ClusterConfig()))
	if len(errs) > 0 {
		t.Fatalf("the objects do not build: %v", errs)
	}
	if got, want := len(built.Networks), len(st.Networks)+1; got != want {
		t.Fatalf("built %d networks, want the fixture's %d and the default network", got, want)
	}
	var udns []*cluster.Network
	for _, n := range built.Networks {
		if n.Name != cluster.DefaultNetworkName {
			udns = append(udns, n)
		}
	}
	withoutDefault := *built
	withoutDefault.Networks = udns
	if diff := golden.Diff(zoneText(t, st), zoneText(t, &withoutDefault)); diff != "" {
		t.Errorf("the zone built from the objects differs from the fixture's (- fixture, + built):\n%s", diff)
	}
}

// zoneText is node0's compiled zone of st, every row whole.
func zoneText(t *testing.T, st *cluster.State) string {
	t.Helper()
	res, err := topology.Compile(st, st.Nodes[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("not compiled: %v", res.NotCompiled)
	}
	var b strings.Builder
	if err := ovn.WriteRows(&b, res.Rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
