package livezone_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestListNetworkNames lists the names completion offers from the real API server:
// default first, then every network as the commands name it, sorted.
func TestListNetworkNames(t *testing.T) {
	k := testenv.SharedKube(t)
	c := clitest.NewClient(t, k)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	network := ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
		Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"10.90.0.0/24"}}}
	cudn := func(name string) *ovnkv1.ClusterUserDefinedNetwork {
		return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: network,
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}
	}
	udn := &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lnn-web"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: network.Topology, Layer2: network.Layer2}}
	clitest.CreateObjects(ctx, t, c, cudn("lnn-zeta"), udn, cudn("lnn-alpha"))

	names, err := livezone.ListNetworkNames(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || names[0] != "default" || !slices.IsSorted(names[1:]) {
		t.Errorf("names %q: want default, then the networks sorted", names)
	}
	for _, want := range []string{"lnn-alpha", "lnn-zeta", ns + "/lnn-web"} {
		if !slices.Contains(names, want) {
			t.Errorf("names %q lack %q", names, want)
		}
	}
}
