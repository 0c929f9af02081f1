package cluster

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// TestSpecNetworks checks that SpecNetworks keeps networks without ids, which Build
// leaves out, and leaves out exactly the objects whose spec is wrong.
func TestSpecNetworks(t *testing.T) {
	in := mixedInputs()
	got, errs := SpecNetworks(in)
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
		if n.ID != 0 || n.TunnelKeys != nil {
			t.Errorf("network %s: ID %d, TunnelKeys %v; SpecNetworks must not read annotations", n.Name, n.ID, n.TunnelKeys)
		}
	}
	// "pending" has no network id (Build leaves it out); "badkeys" has malformed tunnel
	// keys, which only Build reads.
	want := []string{"cluster_udn_pending", "cluster_udn_sel", "ns1_badkeys", "ns1_ok"}
	if !slices.Equal(names, want) {
		t.Fatalf("networks %v, want %v", names, want)
	}
	if ns := got[0].Namespaces; !slices.Equal(ns, []string{"ns1"}) {
		t.Errorf("cluster_udn_pending serves %v, want [ns1]", ns)
	}
	wantErrs := []string{
		`clusteruserdefinednetwork/badsel: spec.namespaceSelector: "Bogus" is not a valid label selector operator`,
		`clusteruserdefinednetwork/x: network name "cluster_udn_x" is also the name of userdefinednetwork/cluster/udn_x; rename one of them`,
		`userdefinednetwork/cluster/udn_x: network name "cluster_udn_x" is also the name of clusteruserdefinednetwork/x; rename one of them`,
		`userdefinednetwork/ns1/badsubnet: spec.layer3.subnets: "10.5.0.0/33" is not a CIDR`,
		`userdefinednetwork/ns1/hs: spec.layer3.subnets: host subnet /8 does not fit in 10.7.0.0/16`,
	}
	gotErrs := errorStrings(errs)
	if len(gotErrs) != len(wantErrs) {
		t.Fatalf("errors:\n%s\nwant %d errors", strings.Join(gotErrs, "\n"), len(wantErrs))
	}
	for i := range wantErrs {
		if !strings.Contains(gotErrs[i], wantErrs[i]) {
			t.Errorf("error %d = %q, want it to contain %q", i, gotErrs[i], wantErrs[i])
		}
	}
}

func TestUserNetworkName(t *testing.T) {
	for ovn, user := range map[string]string{
		"default":                 "default",
		"cluster_udn_blue":        "blue",
		"cluster_udn_blue-2":      "blue-2",
		"test12_namespace-scoped": "test12/namespace-scoped",
		"plain":                   "plain",
	} {
		if got := UserNetworkName(ovn); got != user {
			t.Errorf("UserNetworkName(%q) = %q, want %q", ovn, got, user)
		}
	}
}

func TestCUDNNamespaces(t *testing.T) {
	namespaces := []corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"team": "y"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"team": "x"}}},
	}
	cudn := func(sel metav1.LabelSelector) *ovnkv1.ClusterUserDefinedNetwork {
		return &ovnkv1.ClusterUserDefinedNetwork{Spec: ovnkv1.ClusterUserDefinedNetworkSpec{NamespaceSelector: sel}}
	}
	for _, tc := range []struct {
		name    string
		sel     metav1.LabelSelector
		want    []string
		wantErr bool
	}{
		{name: "matching labels", sel: metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}, want: []string{"a", "c"}},
		{name: "an empty selector serves every namespace", want: []string{"a", "b", "c"}},
		{name: "a selector that does not parse serves none", wantErr: true,
			sel: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CUDNNamespaces(cudn(tc.sel), namespaces)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Fatalf("CUDNNamespaces = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestHostSubnetErrorSuggestsOnlyWorkingLengths checks that a host subnet that does not
// fit is told the lengths that fit and leave pods an address (CheckSubnets refuses
// longer ones), or, when none does, the longest subnet that holds one.
func TestHostSubnetErrorSuggestsOnlyWorkingLengths(t *testing.T) {
	for _, tc := range []struct {
		cidr       string
		hostSubnet int // 0: the family's default
		want       string
	}{
		{"10.7.0.0/24", 0, "f: host subnet /24 does not fit in 10.7.0.0/24: want a prefix length from 25 to 29"},
		{"10.7.0.0/28", 0, "f: host subnet /24 does not fit in 10.7.0.0/28: want a prefix length from 29 to 29"},
		{"10.7.0.0/29", 0, "f: host subnet /24 does not fit in 10.7.0.0/29: no host subnet inside it leaves an address for pods: want a subnet of at most /28"},
		{"10.7.0.0/16", 33, "f: host subnet /33 does not fit in 10.7.0.0/16: want a prefix length from 17 to 29"},
		{"fd00:7::/120", 0, "f: host subnet /64 does not fit in fd00:7::/120: want a prefix length from 121 to 126"},
		{"fd00:7::/127", 0, "f: host subnet /64 does not fit in fd00:7::/127: no host subnet inside it leaves an address for pods: want a subnet of at most /125"},
	} {
		_, err := checkSubnet("f", tc.cidr, tc.hostSubnet, true)
		var hs *HostSubnetError
		if !errors.As(err, &hs) || err.Error() != tc.want {
			t.Errorf("%s with host subnet %d: %v, want a *HostSubnetError %q", tc.cidr, tc.hostSubnet, err, tc.want)
		}
	}
}

// TestCheckHostSubnetBoundaries checks the shortest and longest host subnets each family
// accepts, and the ones just past them.
func TestCheckHostSubnetBoundaries(t *testing.T) {
	for _, tc := range []struct {
		cidr       string
		hostSubnet int
		ok         bool
	}{
		{"10.244.0.0/16", 16, false},
		{"10.244.0.0/16", 17, true},
		{"10.244.0.0/16", 29, true},
		{"10.244.0.0/16", 30, false}, // 4 addresses: the broadcast and 3 kept leave none
		{"fd00:10::/48", 48, false},
		{"fd00:10::/48", 49, true},
		{"fd00:10::/48", 126, true},
		{"fd00:10::/48", 127, false},
	} {
		err := CheckHostSubnet("f", netip.MustParsePrefix(tc.cidr), tc.hostSubnet)
		var hs *HostSubnetError
		if tc.ok && err != nil || !tc.ok && !errors.As(err, &hs) {
			t.Errorf("CheckHostSubnet(%s, /%d) = %v, want accepted: %t", tc.cidr, tc.hostSubnet, err, tc.ok)
		}
	}
}
