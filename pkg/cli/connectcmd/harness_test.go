package connectcmd

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
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
	*clitest.Harness
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{clitest.NewHarness(t, func(f *cmdutil.Factory, now func() time.Time) []*cobra.Command {
		return []*cobra.Command{newConnectCmd(f), newDisconnectCmd(f), newConnectionsCmd(f, now)}
	})}
	// The cluster's ranges come from an agent installed with install's default config.
	h.AgentConfig(manifests.DefaultAgentConfig)
	// Whatever a test connects goes when it ends, so the next one sees none of it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.C.DeleteAllOf(ctx, &ovnkv1.ClusterNetworkConnect{}); err != nil {
			t.Errorf("delete the connects: %v", err)
		}
	})
	return h
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
	h.T.Helper()
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
	h.Create(c)
	return c
}

// udn creates a UserDefinedNetwork in ns.
func (h *harness) udn(ns, name string, topology ovnkv1.NetworkTopology, subnets []string, opts ...netOpt) *ovnkv1.UserDefinedNetwork {
	h.T.Helper()
	s := spec(topology, subnets...)
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	for _, o := range opts {
		o(&s, &meta)
	}
	u := &ovnkv1.UserDefinedNetwork{ObjectMeta: meta, Spec: ovnkv1.UserDefinedNetworkSpec{Topology: s.Topology, Layer3: s.Layer3, Layer2: s.Layer2}}
	h.Create(u)
	return u
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
	h.T.Helper()
	var list ovnkv1.ClusterNetworkConnectList
	if err := h.C.List(h.Ctx(), &list); err != nil {
		h.T.Fatal(err)
	}
	return list.Items
}

// getConnect reads the connect name, failing the test if it does not exist.
func (h *harness) getConnect(name string) *ovnkv1.ClusterNetworkConnect {
	h.T.Helper()
	cnc := &ovnkv1.ClusterNetworkConnect{}
	if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: name}, cnc); err != nil {
		h.T.Fatalf("get connect %s: %v", name, err)
	}
	return cnc
}

// cudnLabels reads a ClusterUserDefinedNetwork's labels.
func (h *harness) cudnLabels(name string) map[string]string {
	h.T.Helper()
	c := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: name}, c); err != nil {
		h.T.Fatal(err)
	}
	return c.Labels
}
