package cluster

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// TestSelectNetworks checks the rule both the leader and kubectl ovnk select a
// connect's networks by.
func TestSelectNetworks(t *testing.T) {
	layer3 := func(role ovnkv1.NetworkRole, cidr string) ovnkv1.NetworkSpec {
		return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{Role: role, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr)}}}}
	}
	cudn := func(name string, labels map[string]string, spec ovnkv1.NetworkSpec) *ovnkv1.ClusterUserDefinedNetwork {
		return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: spec}}
	}
	udn := func(ns, name string, role ovnkv1.NetworkRole) *ovnkv1.UserDefinedNetwork {
		s := layer3(role, "10.50.0.0/16")
		return &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: ovnkv1.UserDefinedNetworkSpec{Topology: s.Topology, Layer3: s.Layer3}}
	}
	cudns := []*ovnkv1.ClusterUserDefinedNetwork{
		cudn("blue", map[string]string{"conn": "yes"}, layer3(ovnkv1.NetworkRolePrimary, "10.10.0.0/16")),
		cudn("sec", map[string]string{"conn": "yes"}, layer3(ovnkv1.NetworkRoleSecondary, "10.11.0.0/16")),
		// A /24 cannot hold the default /24 node blocks: the spec is invalid.
		cudn("broken", map[string]string{"conn": "yes"}, layer3(ovnkv1.NetworkRolePrimary, "10.12.0.0/24")),
		cudn("other", nil, layer3(ovnkv1.NetworkRolePrimary, "10.13.0.0/16")),
	}
	udns := []*ovnkv1.UserDefinedNetwork{udn("t1", "web", ovnkv1.NetworkRolePrimary), udn("t1", "side", ovnkv1.NetworkRoleSecondary), udn("t2", "web", ovnkv1.NetworkRolePrimary)}
	namespaces := []corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "t1", Labels: map[string]string{"tenant": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "t2", Labels: map[string]string{"tenant": "b"}}},
	}
	networks, _ := SpecNetworks(Inputs{Namespaces: namespaces, CUDNs: cudns, UDNs: udns})
	byCUDN := func(sel metav1.LabelSelector) ovnkv1.NetworkSelector {
		return ovnkv1.NetworkSelector{NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks, ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{NetworkSelector: sel}}
	}
	byNamespace := func(sel metav1.LabelSelector) ovnkv1.NetworkSelector {
		return ovnkv1.NetworkSelector{NetworkSelectionType: ovnkv1.PrimaryUserDefinedNetworks, PrimaryUserDefinedNetworkSelector: &ovnkv1.PrimaryUserDefinedNetworkSelector{NamespaceSelector: sel}}
	}
	conn := metav1.LabelSelector{MatchLabels: map[string]string{"conn": "yes"}}
	for _, tc := range []struct {
		name      string
		selectors ovnkv1.NetworkSelectors
		want      []string
		wantErr   bool
	}{
		{name: "CUDNs by their labels, secondary ones too, never an invalid one", selectors: ovnkv1.NetworkSelectors{byCUDN(conn)},
			want: []string{"cluster_udn_blue", "cluster_udn_sec"}},
		{name: "the primary UDN of each matching namespace", selectors: ovnkv1.NetworkSelectors{byNamespace(metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "a"}})},
			want: []string{"t1_web"}},
		{name: "both kinds, without repeats", selectors: ovnkv1.NetworkSelectors{byCUDN(conn), byNamespace(metav1.LabelSelector{}), byCUDN(conn)},
			want: []string{"cluster_udn_blue", "cluster_udn_sec", "t1_web", "t2_web"}},
		{name: "a selector without its body selects nothing", selectors: ovnkv1.NetworkSelectors{{NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks}}},
		{name: "a selector that does not parse", wantErr: true, selectors: ovnkv1.NetworkSelectors{byCUDN(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "conn", Operator: "Near"}}})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectNetworks(tc.selectors, networks, namespaces, cudns)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SelectNetworks error %v, want an error: %t", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("SelectNetworks = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConnectability(t *testing.T) {
	for _, tc := range []struct {
		net  Network
		want ConnectRefusal
	}{
		{Network{Role: Primary, Transport: Geneve}, Connectable},
		{Network{Role: Secondary, Transport: Geneve}, RefusedSecondary},
		{Network{Role: Primary, Transport: NoOverlay}, RefusedNoOverlay},
		{Network{Role: Secondary, Transport: NoOverlay}, RefusedSecondary},
	} {
		if got := Connectability(&tc.net); got != tc.want {
			t.Errorf("Connectability(%s %s) = %q, want %q", tc.net.Role, tc.net.Transport, got, tc.want)
		}
	}
}
