package upgradecmd

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/test/testenv"
)

// upstreamNAD is the NAD upstream's cluster manager writes in namespace ns for cudn:
// controlled by it, and carrying the network's id and tunnel keys, which cudn lacks.
func upstreamNAD(cudn *ovnkv1.ClusterUserDefinedNetwork, ns, id, keys string) *nadv1.NetworkAttachmentDefinition {
	return &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: cudn.Name,
			Labels: map[string]string{cluster.LabelUserDefinedNetwork: ""},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "ClusterUserDefinedNetwork",
				Name: cudn.Name, UID: cudn.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			Annotations: map[string]string{
				cluster.AnnotationNetworkName: cluster.CUDNNetworkName(cudn.Name),
				cluster.AnnotationNetworkID:   id,
				cluster.AnnotationTunnelKeys:  keys,
			},
		},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"cluster_udn_green","netAttachDefName":"` + ns + `/green","role":"primary","subnets":"100.88.4.0/24","topology":"layer2","type":"ovn-k8s-cni-overlay"}`},
	}
}

// TestUpstreamNADIDs runs the command on a cluster shaped like upstream
// OVN-Kubernetes': the primary Layer2 network green has no ids on its object, its NAD
// has them, and no heartbeat Lease or ovnk annotation is there. green is assessed with
// the NAD's ids: both nodes are on the legacy topology, and the upgrade is not complete.
func TestUpstreamNADIDs(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	tenant := tenantNamespace(ctx, t, kube, c)
	green := greenCUDN(t, tenant)
	green.Annotations = nil
	clitest.CreateObjects(ctx, t, c, nodeObject(t, "ups-a", 1, ""), nodeObject(t, "ups-b", 2, ""), green)
	clitest.CreateObjects(ctx, t, c, upstreamNAD(green, tenant, "7", "[16711690,16715800]"), podOnGreen(t, tenant, "web-0", "ups-b"))
	settings := &cmdutil.Settings{AgentNamespace: kube.Namespace(t), NBEndpoints: map[string]string{
		"ups-a": zoneNB(t, legacyPort).Endpoint,
		"ups-b": zoneNB(t, legacyPort).Endpoint,
	}}

	cmd := newTestCommand(kube, settings, clitest.Terminal{Width: 80})
	if err := cmd.run(ctx, "-o", "json"); err != nil {
		t.Fatalf("upgrade-status -o json: %v\nstderr: %s", err, cmd.errOut.String())
	}
	var r l2upgrade.Report
	if err := json.Unmarshal([]byte(cmd.out.String()), &r); err != nil {
		t.Fatalf("-o json does not parse: %v\n%s", err, cmd.out.String())
	}
	if r.Complete || r.Total != 2 || len(r.Networks) != 1 {
		t.Fatalf("report: complete %t, %d nodes, networks %+v; want green assessed on 2 nodes, not complete\n%s", r.Complete, r.Total, r.Networks, cmd.out.String())
	}
	if n := r.Networks[0]; n.Network != "cluster_udn_green" || !slices.Equal(n.Legacy, []string{"ups-a", "ups-b"}) {
		t.Errorf("green: %+v; want legacy on ups-a and ups-b", n)
	}
	for _, n := range r.Nodes {
		if n.Node == "ups-b" && !slices.Equal(n.Blocking, []string{tenant + "/web-0"}) {
			t.Errorf("ups-b: %+v; want blocked by %s/web-0", n, tenant)
		}
	}
	if strings.Contains(cmd.errOut.String(), "green") {
		t.Errorf("a warning about green, whose NAD holds its ids: %s", cmd.errOut.String())
	}

	t.Run("text", func(t *testing.T) {
		cmd := newTestCommand(kube, settings, clitest.Terminal{Width: 80})
		if err := cmd.run(ctx); err != nil {
			t.Fatal(err)
		}
		out := cmd.out.String()
		if strings.Contains(out, "Upgrade complete") || strings.Contains(out, "No primary Layer2") || !strings.Contains(out, "drain node ups-b") {
			t.Errorf("the text does not show green's upgrade pending:\n%s", out)
		}
	})
	t.Run("unreadable id", func(t *testing.T) {
		var nad nadv1.NetworkAttachmentDefinition
		if err := c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "green"}, &nad); err != nil {
			t.Fatal(err)
		}
		nad.Annotations[cluster.AnnotationNetworkID] = "seven"
		if err := c.Update(ctx, &nad); err != nil {
			t.Fatal(err)
		}
		cmd := newTestCommand(kube, settings, clitest.Terminal{Width: 80})
		if err := cmd.run(ctx, "-o", "json"); err != nil {
			t.Fatal(err)
		}
		warnings := cmd.errOut.String()
		for _, want := range []string{"networkattachmentdefinition/" + tenant + "/green", "seven", "Layer2 network green is not assessed"} {
			if !strings.Contains(warnings, want) {
				t.Errorf("the warnings lack %q:\n%s", want, warnings)
			}
		}
	})
}
