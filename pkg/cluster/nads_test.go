package cluster

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// specNetwork builds the network of obj as the leader does, with SpecNetworks.
func specNetwork(t *testing.T, obj metav1.Object, namespaces ...string) *Network {
	t.Helper()
	in := Inputs{}
	for _, ns := range namespaces {
		in.Namespaces = append(in.Namespaces, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns}}})
	}
	switch o := obj.(type) {
	case *ovnkv1.UserDefinedNetwork:
		in.UDNs = append(in.UDNs, o)
	case *ovnkv1.ClusterUserDefinedNetwork:
		in.CUDNs = append(in.CUDNs, o)
	}
	nets, errs := SpecNetworks(in)
	if len(errs) > 0 || len(nets) != 1 {
		t.Fatalf("SpecNetworks: %v, %v", nets, errs)
	}
	return nets[0]
}

// TestNetworkNADConfig holds the CNI configuration to the one upstream's cluster
// manager writes for the same network: the same keys in the same (sorted) order, the
// subnets as the object spells them, both default join subnets for any primary
// network without its own, and a primary Layer2 network's transit subnets.
func TestNetworkNADConfig(t *testing.T) {
	udn := func(spec ovnkv1.UserDefinedNetworkSpec) *ovnkv1.UserDefinedNetwork {
		return &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: "net", UID: "u1"}, Spec: spec}
	}
	cudn := func(spec ovnkv1.NetworkSpec) *ovnkv1.ClusterUserDefinedNetwork {
		return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "green", UID: "c1"},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: spec, NamespaceSelector: metav1.LabelSelector{}}}
	}
	for _, tc := range []struct {
		name string
		obj  metav1.Object
		ns   string
		want string
	}{
		{"layer3 primary with a host subnet length", udn(ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, MTU: 1300, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.20.0.0/16", HostSubnet: 24}}}}),
			"blue", `{"cniVersion":"1.0.0","joinSubnet":"100.65.0.0/16,fd99::/64","mtu":1300,"name":"blue_net","netAttachDefName":"blue/net",` +
				`"role":"primary","subnets":"10.20.0.0/16/24","topology":"layer3","type":"ovn-k8s-cni-overlay"}`},
		{"layer3 secondary without a host subnet length or join subnets", udn(ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.30.0.0/16"}, {CIDR: "fd00:30::/48", HostSubnet: 64}}}}),
			"blue", `{"cniVersion":"1.0.0","name":"blue_net","netAttachDefName":"blue/net",` +
				`"role":"secondary","subnets":"10.30.0.0/16,fd00:30::/48/64","topology":"layer3","type":"ovn-k8s-cni-overlay"}`},
		{"layer2 primary, IPv6 first, own join subnets", cudn(ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{"fd00:40::/64", "10.40.0.0/16"},
				JoinSubnets: ovnkv1.DualStackCIDRs{"100.70.0.0/16"}}}),
			"ns2", `{"cniVersion":"1.0.0","joinSubnet":"100.70.0.0/16","name":"cluster_udn_green","netAttachDefName":"ns2/green",` +
				`"role":"primary","subnets":"fd00:40::/64,10.40.0.0/16","topology":"layer2","transitSubnet":"fd97::/64,100.88.0.0/16","type":"ovn-k8s-cni-overlay"}`},
		{"layer2 primary over the default transit subnet", cudn(ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{"100.88.0.0/16"}}}),
			"ns1", `{"cniVersion":"1.0.0","joinSubnet":"100.65.0.0/16,fd99::/64","name":"cluster_udn_green","netAttachDefName":"ns1/green",` +
				`"role":"primary","subnets":"100.88.0.0/16","topology":"layer2","transitSubnet":"100.89.0.0/16","type":"ovn-k8s-cni-overlay"}`},
		{"layer2 secondary with persistent addresses", cudn(ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"10.50.0.0/24"},
				IPAM: &ovnkv1.IPAMConfig{Lifecycle: ovnkv1.IPAMLifecyclePersistent}}}),
			"ns1", `{"allowPersistentIPs":true,"cniVersion":"1.0.0","name":"cluster_udn_green","netAttachDefName":"ns1/green",` +
				`"role":"secondary","subnets":"10.50.0.0/24","topology":"layer2","type":"ovn-k8s-cni-overlay"}`},
		{"layer2 secondary without IPAM", cudn(ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled}}}),
			"ns1", `{"cniVersion":"1.0.0","name":"cluster_udn_green","netAttachDefName":"ns1/green",` +
				`"role":"secondary","topology":"layer2","type":"ovn-k8s-cni-overlay"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := specNetwork(t, tc.obj, tc.ns)
			nad, err := NetworkNAD(n, tc.obj, tc.ns, nil)
			if err != nil {
				t.Fatal(err)
			}
			if nad.Spec.Config != tc.want {
				t.Errorf("config\n%s\nwant\n%s", nad.Spec.Config, tc.want)
			}
		})
	}
}

// TestNetworkNADMetadata checks everything around the configuration: the NAD's name
// and namespace, its controller reference to the network object, label, finalizer,
// the object's labels and annotations but OVN-Kubernetes' own and kubectl's record,
// and the ids in upstream's form.
func TestNetworkNADMetadata(t *testing.T) {
	primaryL2 := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "green", UID: "c1",
			Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "kept", AnnotationNetworkID: "7", AnnotationTunnelKeys: "[16711690,16715779]",
				"k8s.ovn.org/other": "x", lastAppliedAnnotation: "{}"}},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{"10.40.0.0/16"}}}},
	}
	nad, err := NetworkNAD(specNetwork(t, primaryL2, "ns1"), primaryL2, "ns1", &NetworkIDs{ID: 7, TunnelKeys: []int{16711690, 16715779}})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := metav1.ObjectMeta{
		Namespace: "ns1", Name: "green",
		Labels: map[string]string{LabelUserDefinedNetwork: "", "team": "a"},
		Annotations: map[string]string{"note": "kept", AnnotationNetworkName: "cluster_udn_green",
			AnnotationNetworkID: "7", AnnotationTunnelKeys: "[16711690,16715779]"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "k8s.ovn.org/v1", Kind: "ClusterUserDefinedNetwork", Name: "green", UID: "c1",
			Controller: &yes, BlockOwnerDeletion: &yes}},
		Finalizers: []string{"k8s.ovn.org/user-defined-network-protection"},
	}
	if !reflect.DeepEqual(nad.ObjectMeta, want) {
		t.Errorf("metadata\n%+v\nwant\n%+v", nad.ObjectMeta, want)
	}

	// A Layer3 network's NAD has an empty key list: its one key derives from the id.
	l3 := &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: "net", UID: "u1"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.20.0.0/16"}}}}}
	nad, err = NetworkNAD(specNetwork(t, l3, "blue"), l3, "blue", &NetworkIDs{ID: 3, TunnelKeys: []int{16711686}})
	if err != nil {
		t.Fatal(err)
	}
	if got := nad.Annotations; got[AnnotationNetworkID] != "3" || got[AnnotationTunnelKeys] != "[]" || got[AnnotationNetworkName] != "blue_net" {
		t.Errorf("Layer3 NAD annotations %v, want network-id 3, tunnel-keys [] and network-name blue_net", got)
	}
	if c := metav1.GetControllerOf(nad); c == nil || c.Kind != "UserDefinedNetwork" || c.UID != "u1" {
		t.Errorf("Layer3 NAD controller %+v, want UserDefinedNetwork u1", c)
	}
	if _, err := NetworkNAD(specNetwork(t, l3, "blue"), &corev1.Pod{}, "blue", nil); err == nil {
		t.Errorf("a pod made a NAD")
	}
}

// testNAD is a NAD controlled by owner with the given annotations.
func testNAD(ns, name string, owner types.UID, annotations map[string]string) *nadv1.NetworkAttachmentDefinition {
	yes := true
	return &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{Kind: "ClusterUserDefinedNetwork", Name: name, UID: owner, Controller: &yes}}}}
}

func TestReadNetworkIDs(t *testing.T) {
	ref := ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "green"}
	obj := func(annotations map[string]string) metav1.Object {
		return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "green", UID: "c1", Annotations: annotations}}
	}
	upstream := map[string]string{AnnotationNetworkID: "2", AnnotationTunnelKeys: "[16711685,16715780]"}
	notControlled := testNAD("ns0", "green", "c1", upstream)
	notControlled.OwnerReferences[0].Controller = nil
	for _, tc := range []struct {
		name    string
		obj     metav1.Object
		nads    []*nadv1.NetworkAttachmentDefinition
		want    NetworkIDs
		ok      bool
		wantErr string
	}{
		{name: "the object's own win over its NADs", obj: obj(map[string]string{AnnotationNetworkID: "3", AnnotationTunnelKeys: "[16711686]"}),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c1", upstream)},
			want: NetworkIDs{ID: 3, TunnelKeys: []int{16711686}, HasTunnelKeys: true}, ok: true},
		{name: "the object's id without keys", obj: obj(map[string]string{AnnotationNetworkID: "3"}),
			want: NetworkIDs{ID: 3}, ok: true},
		{name: "from the NADs, the first by namespace", obj: obj(nil),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns2", "green", "c1", upstream), testNAD("ns1", "green", "c1", upstream)},
			want: NetworkIDs{ID: 2, TunnelKeys: []int{16711685, 16715780}, HasTunnelKeys: true, NAD: "ns1/green"}, ok: true},
		{name: "a NAD from before the transit router has no keys", obj: obj(nil),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c1", map[string]string{AnnotationNetworkID: "2"})},
			want: NetworkIDs{ID: 2, NAD: "ns1/green"}, ok: true},
		{name: "another network's NADs and ones without an id do not count", obj: obj(nil),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c2", upstream), testNAD("ns2", "green", "c1", nil), notControlled}},
		{name: "NADs that disagree", obj: obj(nil),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c1", upstream),
				testNAD("ns2", "green", "c1", map[string]string{AnnotationNetworkID: "3", AnnotationTunnelKeys: "[16711686,16715780]"})},
			ok: true, wantErr: "networkattachmentdefinition/ns2/green: annotation k8s.ovn.org/network-id: network id 3 and tunnel keys [16711686 16715780] differ from NetworkAttachmentDefinition ns1/green's 2 and [16711685 16715780]"},
		{name: "a malformed NAD", obj: obj(nil),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c1", map[string]string{AnnotationNetworkID: "five"})},
			ok:   true, wantErr: "networkattachmentdefinition/ns1/green: annotation k8s.ovn.org/network-id"},
		{name: "a malformed object", obj: obj(map[string]string{AnnotationNetworkID: "-1"}),
			nads: []*nadv1.NetworkAttachmentDefinition{testNAD("ns1", "green", "c1", upstream)},
			ok:   true, wantErr: "clusteruserdefinednetwork/green: annotation k8s.ovn.org/network-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ReadNetworkIDs(ref, tc.obj, tc.nads)
			if tc.wantErr != "" {
				var oe *ObjectError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &oe) {
					t.Fatalf("error %v, want an *ObjectError containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok || (tc.wantErr == "" && !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("got %+v, %t; want %+v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestWaitingNetworks checks that the networks Build leaves out for want of an id are
// named with the annotation they wait for, and only those.
func TestWaitingNetworks(t *testing.T) {
	withID := func(u *ovnkv1.UserDefinedNetwork) *ovnkv1.UserDefinedNetwork {
		u.Annotations = map[string]string{AnnotationNetworkID: "4", AnnotationTunnelKeys: "[16711687]"}
		return u
	}
	l3 := ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
		Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.20.0.0/16"}}}}
	bad := ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
		Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.5.0.0/33"}}}}
	in := Inputs{
		DefaultNetwork: DefaultNetworkConfig{Subnets: []Subnet{{CIDR: mustPrefixes("10.244.0.0/16")[0], HostSubnet: 24}}},
		Nodes:          []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}},
		UDNs: []*ovnkv1.UserDefinedNetwork{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pending"}, Spec: l3},
			withID(&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "ready"}, Spec: l3}),
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "bad"}, Spec: bad},
		},
		CUDNs: []*ovnkv1.ClusterUserDefinedNetwork{{ObjectMeta: metav1.ObjectMeta{Name: "later"},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: ovnkv1.NetworkSpec{Topology: l3.Topology, Layer3: l3.Layer3}}}},
	}
	_, errs := Build(in)
	got := WaitingNetworks(errs)
	want := map[string]string{"ns1_pending": "waiting for k8s.ovn.org/network-id", "cluster_udn_later": "waiting for k8s.ovn.org/network-id"}
	if !maps.Equal(got, want) {
		t.Errorf("WaitingNetworks = %v, want %v (Build's errors: %q)", got, want, errorStrings(errs))
	}
	// The node that waits for its id is not a network.
	if slices.Contains(slices.Collect(maps.Keys(got)), "n1") {
		t.Errorf("a node is among the waiting networks")
	}
}
