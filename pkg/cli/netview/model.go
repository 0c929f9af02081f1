package netview

import (
	"errors"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Model is the networks as pkg/cluster reads them from their specs (SpecNetworks), the
// leader's view: the plugin checks and selects networks through it, by the leader's
// rules, rather than with a copy of them.
type Model struct {
	networks   []*cluster.Network
	byName     map[string]*cluster.Network
	invalid    map[cluster.ObjectRef]error
	namespaces []corev1.Namespace
	cudns      []*ovnkv1.ClusterUserDefinedNetwork
}

// NewModel reads nets, whose namespaces' labels nsLabels holds (a namespace missing
// from it serves and selects nothing).
func NewModel(nets []Network, nsLabels map[string]map[string]string) *Model {
	m := &Model{byName: map[string]*cluster.Network{}, invalid: map[cluster.ObjectRef]error{}, namespaces: namespaceObjects(nsLabels)}
	var udns []*ovnkv1.UserDefinedNetwork
	for _, n := range nets {
		if n.Cluster() {
			m.cudns = append(m.cudns, n.CUDN)
		} else {
			udns = append(udns, n.UDN)
		}
	}
	var errs []error
	m.networks, errs = cluster.SpecNetworks(cluster.Inputs{Namespaces: m.namespaces, CUDNs: m.cudns, UDNs: udns})
	for _, n := range m.networks {
		m.byName[n.Name] = n
	}
	for _, err := range errs {
		var oe *cluster.ObjectError
		if errors.As(err, &oe) && m.invalid[oe.Object] == nil {
			m.invalid[oe.Object] = oe.Err
		}
	}
	return m
}

// namespaceObjects are the namespaces nsLabels holds the labels of, sorted by name: what
// pkg/cluster reads them from.
func namespaceObjects(nsLabels map[string]map[string]string) []corev1.Namespace {
	out := make([]corev1.Namespace, 0, len(nsLabels))
	for _, name := range slices.Sorted(maps.Keys(nsLabels)) {
		out = append(out, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nsLabels[name]}})
	}
	return out
}

// Network is n as the leader reads it, or nil with why when the leader would not
// create it for its spec alone (an invalid spec, or a network name that another
// object's network has too).
func (m *Model) Network(n Network) (*cluster.Network, error) {
	if cn := m.byName[n.OVNName()]; cn != nil && cn.Owner == n.Owner() {
		return cn, nil
	}
	if err := m.invalid[n.Owner()]; err != nil {
		return nil, err
	}
	return nil, errors.New("the network is not in the model")
}

// Networks are the valid networks, sorted by name.
func (m *Model) Networks() []*cluster.Network { return m.networks }

// Connect is cnc as the leader reads it from its spec (cluster.ConnectSpec): its
// subnets, and the connectable networks its selectors pick among the valid ones.
func (m *Model) Connect(cnc *ovnkv1.ClusterNetworkConnect) (*cluster.Connect, error) {
	return cluster.ConnectSpec(cnc, m.networks, m.namespaces, m.cudns)
}

// Selected names the networks (by OVN name) cnc's selectors pick, connectable or not.
// None when a selector does not parse: the leader connects nothing then.
func (m *Model) Selected(cnc *ovnkv1.ClusterNetworkConnect) map[string]bool {
	names, err := cluster.SelectNetworks(cnc.Spec.NetworkSelectors, m.networks, m.namespaces, m.cudns)
	if err != nil {
		return nil
	}
	out := make(map[string]bool, len(names))
	for _, name := range names {
		out[name] = true
	}
	return out
}
