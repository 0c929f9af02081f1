package connectcmd

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// selectedByModel is what pkg/cluster, the model the leader and the agents build from
// the API objects, reads a connect to select: the OVN network names of its connectable
// networks. It is an independent reading of the selectors connect wrote.
func selectedByModel(t *testing.T, h *harness, name string) []string {
	t.Helper()
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	var namespaces corev1.NamespaceList
	if err := h.C.List(h.Ctx(), &cudns); err != nil {
		t.Fatal(err)
	}
	if err := h.C.List(h.Ctx(), &udns); err != nil {
		t.Fatal(err)
	}
	if err := h.C.List(h.Ctx(), &namespaces); err != nil {
		t.Fatal(err)
	}
	in := cluster.Inputs{
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}},
		Namespaces:     namespaces.Items,
		CNCs:           []*ovnkv1.ClusterNetworkConnect{h.getConnect(name)},
	}
	for i := range cudns.Items {
		in.CUDNs = append(in.CUDNs, &cudns.Items[i])
	}
	for i := range udns.Items {
		in.UDNs = append(in.UDNs, &udns.Items[i])
	}
	st, _ := cluster.Build(in)
	if len(st.Connects) != 1 {
		t.Fatalf("the model holds %d connects, want %s", len(st.Connects), name)
	}
	return st.Connects[0].Networks
}

// TestConnectLifecycle connects networks by name, checks that each connect selects
// exactly them (and not the look-alikes around), lists and describes them, and
// disconnects them by name and by networks.
func TestConnectLifecycle(t *testing.T) {
	h := newHarness(t)
	h.Node("life-node-1", nil)
	h.Node("life-node-2", nil)
	web := h.Namespace("", nil)
	other := h.Namespace("", nil)
	h.cudn("life-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"}, networkID("11"))
	h.cudn("life-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"}, networkID("12"))
	// Look-alikes that a loose selector would pick: a cluster network with the same
	// labels as life-blue, and another namespace's primary network.
	h.cudn("life-red", ovnkv1.NetworkTopologyLayer3, []string{"10.40.0.0/16"}, networkID("13"))
	h.udn(web, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.30.0.0/16"}, networkID("14"))
	h.udn(other, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.50.0.0/16"}, networkID("15"))

	out := h.MustRun("connect", "life-blue", "life-green")
	want := "clusteruserdefinednetwork.k8s.ovn.org/life-blue labeled\n" +
		"clusteruserdefinednetwork.k8s.ovn.org/life-green labeled\n" +
		"clusternetworkconnect.k8s.ovn.org/life-blue-life-green created\n"
	if out != want {
		t.Errorf("connect printed:\n%s\nwant:\n%s", out, want)
	}
	for _, n := range []string{"life-blue", "life-green"} {
		if got := h.cudnLabels(n)[NetworkNameLabel]; got != n {
			t.Errorf("network %s has %s=%q, want its name", n, NetworkNameLabel, got)
		}
	}
	if _, ok := h.cudnLabels("life-red")[NetworkNameLabel]; ok {
		t.Errorf("life-red, not connected, was labelled")
	}
	cnc := h.getConnect("life-blue-life-green")
	wantSubnets := []ovnkv1.ConnectSubnet{{CIDR: "192.168.0.0/16", NetworkPrefix: 24}}
	if !slices.Equal(cnc.Spec.ConnectSubnets, wantSubnets) || !slices.Equal(cnc.Spec.Connectivity, []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork}) {
		t.Errorf("connect spec: subnets %v connectivity %v, want %v and PodNetwork", cnc.Spec.ConnectSubnets, cnc.Spec.Connectivity, wantSubnets)
	}
	if got, want := selectedByModel(t, h, cnc.Name), []string{"cluster_udn_life-blue", "cluster_udn_life-green"}; !slices.Equal(got, want) {
		t.Errorf("the model reads the connect as selecting %v, want %v", got, want)
	}

	// A namespace's network, a chosen name and range; the label on life-blue stays.
	out = h.MustRun("connect", "life-blue", web+"/web", "--name", "blue-web", "--subnet", "172.31.0.0/20", "--network-prefix", "26", "--connectivity", "pod,service")
	if out != "clusternetworkconnect.k8s.ovn.org/blue-web created\n" {
		t.Errorf("second connect printed %q", out)
	}
	cnc = h.getConnect("blue-web")
	wantSubnets = []ovnkv1.ConnectSubnet{{CIDR: "172.31.0.0/20", NetworkPrefix: 26}}
	if !slices.Equal(cnc.Spec.ConnectSubnets, wantSubnets) || len(cnc.Spec.Connectivity) != 2 {
		t.Errorf("blue-web spec: subnets %v connectivity %v", cnc.Spec.ConnectSubnets, cnc.Spec.Connectivity)
	}
	if got, want := selectedByModel(t, h, "blue-web"), []string{"cluster_udn_life-blue", cluster.UDNNetworkName(web, "web")}; !slices.Equal(got, want) {
		t.Errorf("the model reads blue-web as selecting %v, want %v", got, want)
	}

	list := h.MustRun("connections")
	// The cells before AGE, which depends on the wall clock.
	wantRow := []string{"life-blue-life-green", "life-blue,life-green", "192.168.0.0/16", "pod", "Pending", "0/2"}
	if row := clitest.TableRow(t, list, "life-blue-life-green"); len(row) != 7 || !slices.Equal(row[:6], wantRow) {
		t.Errorf("connections row %q, want %q", row, wantRow)
	}
	if row := clitest.TableRow(t, list, "blue-web"); !slices.Contains(row, "172.31.0.0/20") {
		t.Errorf("connections row %q: want its subnet", row)
	}

	desc := h.MustRun("connections", "describe", "life-blue-life-green")
	for _, w := range []string{
		"life-blue ↔ life-green",
		fmt.Sprintf("life-blue is also connected to %s/web by connect blue-web: life-green and %s/web do NOT reach each other through life-blue", web, web),
		"Router:           connect_router_life-blue-life-green",
	} {
		if !strings.Contains(desc, w) {
			t.Errorf("describe lacks %q:\n%s", w, desc)
		}
	}
	desc = h.MustRun("connections", "describe", "blue-web")
	if !strings.Contains(desc, "Note: "+servicesNotProgrammed) {
		t.Errorf("describe of a connect requesting services does not say only pods are connected:\n%s", desc)
	}

	if out := h.MustRun("disconnect", "blue-web"); out != "clusternetworkconnect.k8s.ovn.org/blue-web deleted\n" {
		t.Errorf("disconnect by name printed %q", out)
	}

	// The default name is taken: the connect gets the next free one.
	h.Create(&ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "life-blue-life-red"},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: cudnsLabelled("nothing", "here"),
			ConnectSubnets:   []ovnkv1.ConnectSubnet{{CIDR: "172.29.0.0/16", NetworkPrefix: 24}},
			Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
		},
	})
	if out := h.MustRun("connect", "life-blue", "life-red", "--subnet", "172.30.0.0/16"); !strings.HasSuffix(out, "clusternetworkconnect.k8s.ovn.org/life-blue-life-red-2 created\n") {
		t.Errorf("connect with its default name taken printed %q", out)
	}
	if out := h.MustRun("disconnect", "life-red", "life-blue"); out != "clusternetworkconnect.k8s.ovn.org/life-blue-life-red-2 deleted\n" {
		t.Errorf("disconnect by networks printed %q", out)
	}
	h.MustRun("disconnect", "life-blue", "life-green")
	var names []string
	for _, c := range h.connects() {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"life-blue-life-red"}) {
		t.Errorf("after disconnecting, the connects are %v; want only the one made by hand", names)
	}
	h.MustRun("disconnect", "life-blue-life-red")
	if out, stderr, err := h.Run("connections"); err != nil || out != "" || !strings.Contains(stderr, "No connections found") {
		t.Errorf("connections with none: %q, %q, %v", out, stderr, err)
	}
}
