package connectcmd

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// TestLabelNetworkAfterAConflict has someone else write each network between connect's
// read and its label, as the leader writes a network just created (its id, its
// status), so that the label's patch meets a conflict on the real API server. A write
// that leaves the label alone is followed by a second patch of the fresh network; a
// label naming the network itself is left as it is; a label naming another network is
// refused as the plan refuses it.
func TestLabelNetworkAfterAConflict(t *testing.T) {
	h := newHarness(t)
	base, err := client.NewWithWatch(h.Kube.RESTConfig, client.Options{Scheme: cmdutil.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		network string
		// meanwhile is the other writer's change.
		meanwhile func(*ovnkv1.ClusterUserDefinedNetwork)
		patches   int
		wantLabel string
		wantErr   string
	}{
		{"label-annotated", func(c *ovnkv1.ClusterUserDefinedNetwork) {
			c.Annotations = map[string]string{"k8s.ovn.org/network-id": "7"}
		},
			2, "label-annotated", ""},
		{"label-same", func(c *ovnkv1.ClusterUserDefinedNetwork) {
			c.Labels = map[string]string{NetworkNameLabel: "label-same"}
		},
			1, "label-same", ""},
		{"label-other", func(c *ovnkv1.ClusterUserDefinedNetwork) { c.Labels = map[string]string{NetworkNameLabel: "blue"} },
			1, "blue", "network label-other has label " + NetworkNameLabel + "=blue, which names another network"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			h.T = t
			h.cudn(tc.network, ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
			var read ovnkv1.ClusterUserDefinedNetwork // as the plan read it
			if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: tc.network}, &read); err != nil {
				t.Fatal(err)
			}
			patches := 0
			c := interceptor.NewClient(base, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					if patches == 1 {
						var now ovnkv1.ClusterUserDefinedNetwork
						if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &now); err != nil {
							return err
						}
						tc.meanwhile(&now)
						if err := c.Update(ctx, &now); err != nil {
							return err
						}
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			})
			err := labelNetwork(h.Ctx(), c, &read)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("labelNetwork: %v", err)
			}
			if tc.wantErr != "" {
				clitest.OneLine(t, err, tc.wantErr)
			}
			if patches != tc.patches {
				t.Errorf("%d patches, want %d", patches, tc.patches)
			}
			var now ovnkv1.ClusterUserDefinedNetwork
			if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: tc.network}, &now); err != nil {
				t.Fatal(err)
			}
			if got := now.Labels[NetworkNameLabel]; got != tc.wantLabel {
				t.Errorf("label %s=%q, want %q", NetworkNameLabel, got, tc.wantLabel)
			}
		})
	}
}
