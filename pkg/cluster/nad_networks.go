package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// NADNetworks tells which network each NAD name of k8s.ovn.org/pod-networks attaches a
// pod to, by the ClusterUserDefinedNetworks and UserDefinedNetworks that exist. It is
// the one rule for it: Build reads pods by it, and the plugin names pods' networks by it.
type NADNetworks struct {
	// udns are the UserDefinedNetworks, as "<namespace>/<name>".
	udns map[string]bool
	// cudns are the ClusterUserDefinedNetworks by name, each with the namespaces it
	// serves; nil when its namespace selector does not parse, so that the namespaces it
	// serves cannot be told.
	cudns map[string][]string
}

// NewNADNetworks reads the NAD names of the pods of namespaces (whose labels select
// them for cudns) on cudns and udns.
func NewNADNetworks(cudns []*ovnkv1.ClusterUserDefinedNetwork, udns []*ovnkv1.UserDefinedNetwork, namespaces []corev1.Namespace) *NADNetworks {
	return nadNetworksOf(networkSources(cudns, udns, namespacePtrs(namespaces)))
}

// nadNetworksOf is NewNADNetworks of the objects' sources, as Build reads them.
func nadNetworksOf(srcs []networkSource) *NADNetworks {
	m := &NADNetworks{udns: map[string]bool{}, cudns: map[string][]string{}}
	for _, src := range srcs {
		switch src.owner.Kind {
		case "UserDefinedNetwork":
			m.udns[src.owner.Namespace+"/"+src.owner.Name] = true
		case "ClusterUserDefinedNetwork":
			served := src.namespaces
			if src.err == nil && served == nil {
				served = []string{}
			}
			m.cudns[src.owner.Name] = served
		}
	}
	return m
}

// NotServedError says that a NAD name names a ClusterUserDefinedNetwork that does
// not serve the NAD's namespace.
type NotServedError struct {
	// Network is the ClusterUserDefinedNetwork's network name; CUDN and Namespace
	// what the NAD name names.
	Network, CUDN, Namespace string
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("ClusterUserDefinedNetwork %q does not select namespace %q", e.CUDN, e.Namespace)
}

// Network returns the name of the network nad attaches to: "default" the default
// network; "<ns>/<name>" the UserDefinedNetwork <name> of <ns> if it exists, else the
// ClusterUserDefinedNetwork <name> if it exists and serves <ns> (or its namespace
// selector does not parse, so that which namespaces it serves cannot be told). A NAD
// name of neither form, or of no such network, is an error; of a
// ClusterUserDefinedNetwork that does not serve <ns> a *NotServedError.
func (m *NADNetworks) Network(nad string) (string, error) {
	if nad == DefaultNetworkName {
		return DefaultNetworkName, nil
	}
	ns, name, ok := strings.Cut(nad, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("NAD name %q is neither %q nor <namespace>/<name>", nad, DefaultNetworkName)
	}
	if m.udns[nad] {
		return UDNNetworkName(ns, name), nil
	}
	served, ok := m.cudns[name]
	if !ok {
		return "", fmt.Errorf("no UserDefinedNetwork %q in namespace %q and no ClusterUserDefinedNetwork %q", name, ns, name)
	}
	if served != nil && !slices.Contains(served, ns) {
		return "", &NotServedError{Network: CUDNNetworkName(name), CUDN: name, Namespace: ns}
	}
	return CUDNNetworkName(name), nil
}

// UserName is how users name the network nad attaches to (UserNetworkName of its
// network name): "default", a ClusterUserDefinedNetwork's name, a UserDefinedNetwork's
// "<namespace>/<name>". A NAD name that attaches to no network (its network was
// deleted, or no longer serves the namespace) is its own name.
func (m *NADNetworks) UserName(nad string) string {
	network, err := m.Network(nad)
	if err != nil {
		return nad
	}
	return UserNetworkName(network)
}

// attached is Network, except that a NAD name of a ClusterUserDefinedNetwork that does
// not serve its namespace still names the network, beside the *NotServedError.
func (m *NADNetworks) attached(nad string) (string, error) {
	network, err := m.Network(nad)
	var notServed *NotServedError
	if errors.As(err, &notServed) {
		network = notServed.Network
	}
	return network, err
}
