package cluster

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// TestNADNetworks maps pods' attachment names to networks and to the names users know
// them by: a UserDefinedNetwork's attachment is its own NAMESPACE/NAME, a
// ClusterUserDefinedNetwork's is named after it in each namespace it serves, and an
// attachment of no network that exists keeps its own name.
func TestNADNetworks(t *testing.T) {
	cudn := func(name string, sel metav1.LabelSelector) *ovnkv1.ClusterUserDefinedNetwork {
		c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}
		c.Spec.NamespaceSelector = sel
		return c
	}
	team := func(v string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{"team": v}}
	}
	udn := func(ns, name string) *ovnkv1.UserDefinedNetwork {
		return &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	namespace := func(name, team string) corev1.Namespace {
		return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": team}}}
	}
	bogus := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Bogus"}}}
	m := NewNADNetworks(
		[]*ovnkv1.ClusterUserDefinedNetwork{cudn("green", team("green")), cudn("red", team("red")), cudn("broken", bogus)},
		[]*ovnkv1.UserDefinedNetwork{udn("ns-a", "blue"), udn("other", "green"), udn("ns-a", "red")},
		[]corev1.Namespace{namespace("ns-a", "green"), namespace("ns-b", "green"), namespace("ns-c", "red"), namespace("other", "none")},
	)
	for _, c := range []struct {
		nad, network, user string
		err                string // a part of the error, "" for none
		notServed          bool
	}{
		{nad: "default", network: "default", user: "default"},
		{nad: "ns-a/blue", network: "ns-a_blue", user: "ns-a/blue"},
		// One CUDN's attachments in two namespaces are one network.
		{nad: "ns-a/green", network: "cluster_udn_green", user: "green"},
		{nad: "ns-b/green", network: "cluster_udn_green", user: "green"},
		// A UDN of another namespace with the CUDN's name is that UDN only.
		{nad: "other/green", network: "other_green", user: "other/green"},
		// A UDN of the namespace comes before a CUDN of its name that selects it (Build's rule).
		{nad: "ns-a/red", network: "ns-a_red", user: "ns-a/red"},
		{nad: "ns-c/red", network: "cluster_udn_red", user: "red"},
		// Which namespaces a selector that does not parse serves cannot be told.
		{nad: "ns-a/broken", network: "cluster_udn_broken", user: "broken"},
		// The network was deleted, or never existed.
		{nad: "ns-a/gone", user: "ns-a/gone", err: `no UserDefinedNetwork "gone" in namespace "ns-a" and no ClusterUserDefinedNetwork "gone"`},
		// The CUDN no longer serves the namespace (its labels changed).
		{nad: "ns-c/green", user: "ns-c/green", err: `ClusterUserDefinedNetwork "green" does not select namespace "ns-c"`, notServed: true},
		{nad: "a/b/c", user: "a/b/c", err: `NAD name "a/b/c" is neither "default" nor <namespace>/<name>`},
		{nad: "plain", user: "plain", err: `NAD name "plain" is neither`},
	} {
		network, err := m.Network(c.nad)
		switch {
		case c.err == "" && (err != nil || network != c.network):
			t.Errorf("Network(%q) = %q, %v; want %q", c.nad, network, err, c.network)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || network != ""):
			t.Errorf("Network(%q) = %q, %v; want no network and an error with %q", c.nad, network, err, c.err)
		}
		var notServed *NotServedError
		if errors.As(err, &notServed) != c.notServed || c.notServed && notServed.Network != "cluster_udn_green" {
			t.Errorf("Network(%q): error %v, want a *NotServedError of cluster_udn_green: %t", c.nad, err, c.notServed)
		}
		if user := m.UserName(c.nad); user != c.user {
			t.Errorf("UserName(%q) = %q, want %q", c.nad, user, c.user)
		}
	}
}
