package connectcmd

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

// The tests run the commands against the package's real kube-apiserver, with the CRDs
// pkg/manifests embeds (testenv installs them). They run one after another and each
// removes the networks, nodes and connects it made, because the commands read the
// whole cluster.

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// harness runs `kubectl ovnk connect|disconnect|connections …` in-process against the
// shared API server.
type harness struct {
	t          *testing.T
	kube       *testenv.Kube
	c          client.Client
	kubeconfig string
	// now is the views' clock; width and tty are the terminal they see.
	now   func() time.Time
	width int
	tty   bool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	k := testenv.SharedKube(t)
	h := &harness{t: t, kube: k, c: clitest.NewClient(t, k), kubeconfig: k.Kubeconfig, now: time.Now, width: 200}
	// Whatever a test connects goes when it ends, so the next one sees none of it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.c.DeleteAllOf(ctx, &ovnkv1.ClusterNetworkConnect{}); err != nil {
			t.Errorf("delete the connects: %v", err)
		}
	})
	return h
}

// run runs the root command holding connect, disconnect and connections with args,
// and returns what it printed and its error. It is not the real root
// (cli.NewRootCommandWith), which builds connections with the wall clock.
func (h *harness) run(args ...string) (stdout, stderr string, err error) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	f := clitest.NewFactory(h.kubeconfig, clitest.Terminal{TTY: h.tty, Width: h.width}, nil, &out, &errOut)
	f.Settings = &cmdutil.Settings{}
	root := &cobra.Command{
		Use:           "kubectl-ovnk",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ovnk"},
	}
	f.Kube.AddFlags(root.PersistentFlags())
	root.AddCommand(newConnectCmd(f), newDisconnectCmd(f), newConnectionsCmd(f, h.now))
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustRun runs the command and fails the test if it fails.
func (h *harness) mustRun(args ...string) string {
	h.t.Helper()
	out, stderr, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("kubectl ovnk %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// create creates obj and deletes it when the test ends.
func (h *harness) create(obj client.Object) {
	h.t.Helper()
	if err := h.c.Create(h.ctx(), obj); err != nil {
		h.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			h.t.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// namespace creates a namespace, with a random name when name is "".
func (h *harness) namespace(name string) string {
	h.t.Helper()
	if name == "" {
		return h.kube.Namespace(h.t)
	}
	h.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

// netOpt adjusts a network built by the helpers below.
type netOpt func(*ovnkv1.NetworkSpec, *metav1.ObjectMeta)

// secondary makes the network a Secondary one.
func secondary(s *ovnkv1.NetworkSpec, _ *metav1.ObjectMeta) {
	if s.Layer3 != nil {
		s.Layer3.Role = ovnkv1.NetworkRoleSecondary
	} else {
		s.Layer2.Role = ovnkv1.NetworkRoleSecondary
	}
}

// noOverlay gives a Layer3 cluster network the NoOverlay transport.
func noOverlay(s *ovnkv1.NetworkSpec, _ *metav1.ObjectMeta) {
	s.Transport = ovnkv1.TransportOptionNoOverlay
	s.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingManaged}
}

// join sets the network's own join subnets.
func join(cidrs ...ovnkv1.CIDR) netOpt {
	return func(s *ovnkv1.NetworkSpec, _ *metav1.ObjectMeta) {
		if s.Layer3 != nil {
			s.Layer3.JoinSubnets = cidrs
		} else {
			s.Layer2.JoinSubnets = cidrs
		}
	}
}

// withLabels sets the network object's labels.
func withLabels(kv ...string) netOpt {
	return func(_ *ovnkv1.NetworkSpec, m *metav1.ObjectMeta) {
		m.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m.Labels[kv[i]] = kv[i+1]
		}
	}
}

// networkID sets k8s.ovn.org/network-id, as the leader would.
func networkID(id string) netOpt {
	return func(_ *ovnkv1.NetworkSpec, m *metav1.ObjectMeta) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[cluster.AnnotationNetworkID] = id
	}
}

// spec is a primary network of the topology with the subnets.
func spec(topology ovnkv1.NetworkTopology, subnets ...string) ovnkv1.NetworkSpec {
	s := ovnkv1.NetworkSpec{Topology: topology}
	if topology == ovnkv1.NetworkTopologyLayer3 {
		s.Layer3 = &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary}
		for _, c := range subnets {
			s.Layer3.Subnets = append(s.Layer3.Subnets, ovnkv1.Layer3Subnet{CIDR: ovnkv1.CIDR(c)})
		}
	} else {
		s.Layer2 = &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary}
		for _, c := range subnets {
			s.Layer2.Subnets = append(s.Layer2.Subnets, ovnkv1.CIDR(c))
		}
	}
	return s
}

// cudn creates a ClusterUserDefinedNetwork serving a namespace of its own.
func (h *harness) cudn(name string, topology ovnkv1.NetworkTopology, subnets []string, opts ...netOpt) *ovnkv1.ClusterUserDefinedNetwork {
	h.t.Helper()
	c := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"serves": name}},
			Network:           spec(topology, subnets...),
		},
	}
	for _, o := range opts {
		o(&c.Spec.Network, &c.ObjectMeta)
	}
	h.create(c)
	return c
}

// udn creates a UserDefinedNetwork in ns.
func (h *harness) udn(ns, name string, topology ovnkv1.NetworkTopology, subnets []string, opts ...netOpt) *ovnkv1.UserDefinedNetwork {
	h.t.Helper()
	s := spec(topology, subnets...)
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	for _, o := range opts {
		o(&s, &meta)
	}
	u := &ovnkv1.UserDefinedNetwork{ObjectMeta: meta, Spec: ovnkv1.UserDefinedNetworkSpec{Topology: s.Topology, Layer3: s.Layer3, Layer2: s.Layer2}}
	h.create(u)
	return u
}

// node creates a Node with annotations (nil for none).
func (h *harness) node(name string, annotations map[string]string) {
	h.t.Helper()
	h.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}})
}

// zoneReport is the ovnk.io/zone-status annotation of a node that reported report.
func zoneReport(t *testing.T, report map[string]string) map[string]string {
	t.Helper()
	v, err := cluster.ZoneStatusCodec.Format(report)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{cluster.AnnotationZoneStatus: v}
}

// cudnsLabelled selects the ClusterUserDefinedNetworks labelled key=value.
func cudnsLabelled(key, value string) ovnkv1.NetworkSelectors {
	return ovnkv1.NetworkSelectors{{
		NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks,
		ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{
			NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
		},
	}}
}

// connects lists the connects of the cluster.
func (h *harness) connects() []ovnkv1.ClusterNetworkConnect {
	h.t.Helper()
	var list ovnkv1.ClusterNetworkConnectList
	if err := h.c.List(h.ctx(), &list); err != nil {
		h.t.Fatal(err)
	}
	return list.Items
}

// getConnect reads the connect name, failing the test if it does not exist.
func (h *harness) getConnect(name string) *ovnkv1.ClusterNetworkConnect {
	h.t.Helper()
	cnc := &ovnkv1.ClusterNetworkConnect{}
	if err := h.c.Get(h.ctx(), client.ObjectKey{Name: name}, cnc); err != nil {
		h.t.Fatalf("get connect %s: %v", name, err)
	}
	return cnc
}

// cudnLabels reads a ClusterUserDefinedNetwork's labels.
func (h *harness) cudnLabels(name string) map[string]string {
	h.t.Helper()
	c := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := h.c.Get(h.ctx(), client.ObjectKey{Name: name}, c); err != nil {
		h.t.Fatal(err)
	}
	return c.Labels
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// tableRow returns the row of a plain table whose first cell is name, split into its
// cells (cells are at least two spaces apart).
func tableRow(t *testing.T, table, name string) []string {
	t.Helper()
	for _, l := range lines(table) {
		var cells []string
		for _, f := range strings.Split(l, "  ") {
			if f = strings.TrimSpace(f); f != "" {
				cells = append(cells, f)
			}
		}
		if len(cells) > 0 && cells[0] == name {
			return cells
		}
	}
	t.Fatalf("no row %q in:\n%s", name, table)
	return nil
}
