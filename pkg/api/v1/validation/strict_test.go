package validation_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/api/v1/validation"
)

func udnLayer3(join []ovnkv1.CIDR, subnets ...ovnkv1.CIDR) *ovnkv1.UserDefinedNetwork {
	l3 := &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, JoinSubnets: join}
	for _, s := range subnets {
		l3.Subnets = append(l3.Subnets, ovnkv1.Layer3Subnet{CIDR: s})
	}
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "ns"},
		Spec:       ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: l3},
	}
}

func cudnLayer2(sel metav1.LabelSelector, join []ovnkv1.CIDR, subnets ...ovnkv1.CIDR) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: sel,
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: subnets, JoinSubnets: join,
			}},
		},
	}
}

func TestStrict(t *testing.T) {
	type want struct{ field, detail string }
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want []want
	}{{
		name: "clean dual-stack network",
		errs: validation.StrictUserDefinedNetwork(udnLayer3([]ovnkv1.CIDR{"100.66.0.0/16"}, "10.0.0.0/16", "fd00::/48")),
	}, {
		name: "host bits in a subnet and a join subnet",
		errs: validation.StrictUserDefinedNetwork(udnLayer3([]ovnkv1.CIDR{"100.66.0.1/16"}, "10.0.0.1/16")),
		want: []want{
			{"spec.layer3.subnets[0].cidr", "host bits set; did you mean 10.0.0.0/16?"},
			{"spec.layer3.joinSubnets[0]", "host bits set; did you mean 100.66.0.0/16?"},
		},
	}, {
		name: "IPv6 host bits",
		errs: validation.StrictClusterUserDefinedNetwork(cudnLayer2(metav1.LabelSelector{}, nil, "fd00::1/64")),
		want: []want{{"spec.network.layer2.subnets[0]", "host bits set; did you mean fd00::/64?"}},
	}, {
		name: "overlapping subnets name both, once",
		errs: validation.StrictUserDefinedNetwork(udnLayer3(nil, "10.0.0.0/16", "10.0.128.0/17")),
		want: []want{{"spec.layer3.subnets[1].cidr", "overlaps subnet 10.0.0.0/16; list one subnet per IP family"}},
	}, {
		name: "two IPv4 subnets that do not overlap are left to the API server's rule",
		errs: validation.StrictUserDefinedNetwork(udnLayer3(nil, "10.0.0.0/16", "10.1.0.0/16")),
	}, {
		name: "join subnet inside a subnet",
		errs: validation.StrictClusterUserDefinedNetwork(cudnLayer2(metav1.LabelSelector{}, []ovnkv1.CIDR{"10.0.5.0/24"}, "10.0.0.0/16")),
		want: []want{{"spec.network.layer2.joinSubnets[0]", "overlaps subnet 10.0.0.0/16; join subnets address the gateway routers and must be outside the pod subnets"}},
	}, {
		name: "overlapping join subnets",
		errs: validation.StrictClusterUserDefinedNetwork(cudnLayer2(metav1.LabelSelector{}, []ovnkv1.CIDR{"fd99::/64", "fd99::/48"}, "10.0.0.0/16")),
		want: []want{{"spec.network.layer2.joinSubnets[1]", "overlaps join subnet fd99::/64; list one join subnet per IP family"}},
	}, {
		name: "unparsable CIDRs are left to the API server's rule",
		errs: validation.StrictUserDefinedNetwork(udnLayer3([]ovnkv1.CIDR{"bad"}, "10.0.0.0", "10.0.0.0/16")),
	}, {
		name: "namespace selector with an unknown operator",
		errs: validation.StrictClusterUserDefinedNetwork(cudnLayer2(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tenant", Operator: "Equals", Values: []string{"a"}},
		}}, nil, "10.0.0.0/16")),
		want: []want{{"spec.namespaceSelector", `"Equals" is not a valid label selector operator`}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d: %v", len(tc.errs), len(tc.want), tc.errs.ToAggregate())
			}
			for i, w := range tc.want {
				if got := tc.errs[i]; got.Field != w.field || got.Detail != w.detail {
					t.Errorf("error %d = %s: %q\nwant       %s: %q", i, got.Field, got.Detail, w.field, w.detail)
				}
			}
		})
	}
}
