package tracecmd_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// traceCluster is a topologytest cluster as the plugin finds it: its nodes, namespaces,
// user-defined networks and pods in the package's API server, with the annotations their
// agents would have written, and each node's compiled zone in an NB of its own, named by
// a settings file.
type traceCluster struct {
	k *testenv.Kube
	// env is the environment of a command that reads the zones from the NBs.
	env map[string]string
}

// newTraceCluster puts st in the API server (what is there already stays: every test
// of the package shares the server, and the fixtures' nodes and pods do not overlap)
// and starts its zones.
func newTraceCluster(t *testing.T, st *cluster.State) *traceCluster {
	t.Helper()
	k := testenv.SharedKube(t)
	c := clitest.NewClient(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var objects []client.Object
	var settings strings.Builder
	settings.WriteString("nb-endpoints:\n")
	for _, n := range st.Nodes {
		primary, err := cluster.PrimaryIfAddrCodec.Format(n.PrimaryIfAddrs)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Annotations: map[string]string{
			cluster.AnnotationNodeChassisID:     n.ChassisID,
			cluster.AnnotationNodePrimaryIfAddr: primary,
		}}})
		fmt.Fprintf(&settings, "  %s: %q\n", n.Name, livezonetest.ZoneNB(t, st, n.Name).Endpoint)
	}
	networks := map[string]*cluster.Network{}
	for _, n := range st.Networks {
		networks[n.Name] = n
	}
	namespaces := map[string]bool{}
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
			t.Fatal(err)
		}
		if !namespaces[p.Namespace] {
			namespaces[p.Namespace] = true
			objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}})
		}
		objects = append(objects, podOn(p.Namespace, p.Name, p.Node, map[string]string{cluster.AnnotationPodNetworks: value}))
	}
	// After the namespaces: a UserDefinedNetwork's must exist.
	for _, n := range st.Networks {
		if !n.IsDefault() {
			objects = append(objects, networkObject(t, n))
		}
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	file := filepath.Join(t.TempDir(), "ovnk.yaml")
	if err := os.WriteFile(file, []byte(settings.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return &traceCluster{k: k, env: map[string]string{"OVNK_PLUGIN_CONFIG": file}}
}

// networkObject is the ClusterUserDefinedNetwork or UserDefinedNetwork that defines n,
// a ClusterUserDefinedNetwork selecting n's namespaces by name.
func networkObject(t *testing.T, n *cluster.Network) client.Object {
	t.Helper()
	role := ovnkv1.NetworkRolePrimary
	if n.Role == cluster.Secondary {
		role = ovnkv1.NetworkRoleSecondary
	}
	var spec ovnkv1.NetworkSpec
	switch n.Topology {
	case cluster.Layer3:
		spec.Topology, spec.Layer3 = ovnkv1.NetworkTopologyLayer3, &ovnkv1.Layer3Config{Role: role}
		for _, s := range n.Subnets {
			spec.Layer3.Subnets = append(spec.Layer3.Subnets, ovnkv1.Layer3Subnet{CIDR: ovnkv1.CIDR(s.CIDR.String()), HostSubnet: int32(s.HostSubnet)})
		}
	case cluster.Layer2:
		spec.Topology, spec.Layer2 = ovnkv1.NetworkTopologyLayer2, &ovnkv1.Layer2Config{Role: role}
		for _, s := range n.Subnets {
			spec.Layer2.Subnets = append(spec.Layer2.Subnets, ovnkv1.CIDR(s.CIDR.String()))
		}
	}
	meta := metav1.ObjectMeta{Namespace: n.Owner.Namespace, Name: n.Owner.Name}
	switch n.Owner.Kind {
	case "ClusterUserDefinedNetwork":
		selector := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: n.Namespaces}}}
		return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: meta,
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{NamespaceSelector: selector, Network: spec}}
	case "UserDefinedNetwork":
		return &ovnkv1.UserDefinedNetwork{ObjectMeta: meta,
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: spec.Topology, Layer3: spec.Layer3, Layer2: spec.Layer2}}
	}
	t.Fatalf("network %s is owned by %s, neither a ClusterUserDefinedNetwork nor a UserDefinedNetwork", n.Name, n.Owner)
	return nil
}

// crossNamespace is topologytest.Layer2Upgrade with every node on the new topology and
// its ClusterUserDefinedNetwork green serving two namespaces: pod-node1 in green-a,
// pod-node2 and pod-node3 in green-b, whose attachments are green-a/green and
// green-b/green. The pods' addresses are ten above the fixture's, which OKEP5094's pods
// have.
func crossNamespace() *cluster.State {
	st := topologytest.Layer2Upgrade("node1", "node2", "node3")
	st.Networks[0].Namespaces = []string{"green-a", "green-b"}
	for i, p := range st.Pods {
		p.Namespace = st.Networks[0].Namespaces[min(i, 1)]
		iface := p.Networks[st.Networks[0].Name]
		for j, ip := range iface.IPs {
			a := ip.Addr().AsSlice()
			a[len(a)-1] += 10
			addr, _ := netip.AddrFromSlice(a)
			iface.IPs[j] = netip.PrefixFrom(addr, ip.Bits())
		}
		iface.MAC = fmt.Sprintf("0a:58:cb:cb:00:%02x", 13+i)
		p.Networks[st.Networks[0].Name] = iface
	}
	return st
}

func podOn(ns, name, node string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
	}
}

// run runs `kubectl ovnk trace args…` against the cluster on the terminal term.
func (tc *traceCluster) run(t *testing.T, term clitest.Terminal, args ...string) (string, error) {
	t.Helper()
	return livezonetest.Run(t, tc.k, term, tc.env, append([]string{"trace"}, args...)...)
}

// runWithoutCluster runs `kubectl ovnk trace args…` with a kubeconfig that does not
// exist, as on a machine that has only a --save file.
func runWithoutCluster(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return livezonetest.RunWith(t, filepath.Join(t.TempDir(), "no-kubeconfig"), clitest.Terminal{Width: 80}, nil, append([]string{"trace"}, args...)...)
}
