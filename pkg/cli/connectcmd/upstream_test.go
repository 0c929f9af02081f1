package connectcmd

import (
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestDescribeBlocksByNADIDs describes a connect of two networks: ups-own has its id on
// its object, as on an ovnk cluster; ups-nad has none there, and its NAD carries the id
// upstream's cluster manager allocated. The connect's blocks are keyed by the ids, so
// both networks show theirs. Once the NAD's id cannot be read, ups-nad's blocks are not
// shown and a warning names the NAD.
func TestDescribeBlocksByNADIDs(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", map[string]string{"serves": "ups-nad"})
	h.cudn("ups-own", ovnkv1.NetworkTopologyLayer3, []string{"10.70.0.0/16"}, networkID("6"), withLabels("ups", "yes"))
	upstream := h.cudn("ups-nad", ovnkv1.NetworkTopologyLayer2, []string{"10.71.0.0/16"}, withLabels("ups", "yes"))
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: upstream.Name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "ClusterUserDefinedNetwork",
				Name: upstream.Name, UID: upstream.UID, Controller: ptr.To(true),
			}},
			Annotations: map[string]string{cluster.AnnotationNetworkID: "7", cluster.AnnotationTunnelKeys: "[]"},
		},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"cluster_udn_ups-nad","type":"ovn-k8s-cni-overlay","topology":"layer2"}`},
	}
	h.Create(nad)

	blocks, err := cluster.ConnectSubnetsCodec.Format(map[string][]netip.Prefix{
		"layer3_6": {netip.MustParsePrefix("192.168.60.0/24")},
		"layer2_7": {netip.MustParsePrefix("192.168.70.0/24")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(&ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "ups-connect", Annotations: map[string]string{
			cluster.AnnotationConnectSubnets: blocks, cluster.AnnotationConnectRouterTunnelKey: "16711700"}},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: cudnsLabelled("ups", "yes"),
			ConnectSubnets:   []ovnkv1.ConnectSubnet{{CIDR: "192.168.0.0/16", NetworkPrefix: 24}},
			Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
		},
	})

	blocksCell := func(out, network string) string {
		t.Helper()
		row := clitest.TableRow(t, out, network)
		return row[len(row)-1]
	}
	out, errOut, err := h.Run("connections", "describe", "ups-connect")
	if err != nil {
		t.Fatalf("describe: %v\n%s", err, errOut)
	}
	for network, want := range map[string]string{"ups-own": "192.168.60.0/24", "ups-nad": "192.168.70.0/24"} {
		if got := blocksCell(out, network); got != want {
			t.Errorf("%s's BLOCKS %q, want %q\n%s", network, got, want, out)
		}
	}
	if errOut != "" {
		t.Errorf("warnings where every id was read:\n%s", errOut)
	}

	if err := h.C.Get(h.Ctx(), client.ObjectKeyFromObject(nad), nad); err != nil {
		t.Fatal(err)
	}
	nad.Annotations[cluster.AnnotationNetworkID] = "seven"
	if err := h.C.Update(h.Ctx(), nad); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = h.Run("connections", "describe", "ups-connect")
	if err != nil {
		t.Fatalf("describe with an unreadable id: %v\n%s", err, errOut)
	}
	if got := blocksCell(out, "ups-nad"); got != "<not allocated yet>" {
		t.Errorf("ups-nad's BLOCKS %q with its id unreadable, want none\n%s", got, out)
	}
	if got := blocksCell(out, "ups-own"); got != "192.168.60.0/24" {
		t.Errorf("ups-own's BLOCKS %q, want 192.168.60.0/24\n%s", got, out)
	}
	for _, want := range []string{"Warning: the blocks of network ups-nad are not shown", "networkattachmentdefinition/" + ns + "/ups-nad", "seven"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the warnings lack %q:\n%s", want, errOut)
		}
	}
}
