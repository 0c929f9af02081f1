package cluster

import (
	"errors"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

const goodPodNetworks = `{"default":{"ip_addresses":["10.244.1.9/24"],"mac_address":"0a:58:0a:f4:01:09"}`

// mixedInputs has one good object of each kind and many bad or unready ones.
func mixedInputs() Inputs {
	l3 := func(cidr ovnkv1.CIDR, hostSubnet int32) ovnkv1.NetworkSpec {
		return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: layer3(ovnkv1.NetworkRolePrimary, ovnkv1.Layer3Subnet{CIDR: cidr, HostSubnet: hostSubnet})}
	}
	udn := func(spec ovnkv1.NetworkSpec) ovnkv1.UserDefinedNetworkSpec {
		return ovnkv1.UserDefinedNetworkSpec{Topology: spec.Topology, Layer3: spec.Layer3, Layer2: spec.Layer2}
	}
	ns1 := map[string]string{"name": "ns1"}
	badSelector := testCUDN("badsel", nil, l3("10.1.0.0/16", 0), networkAnnotations(10, ""))
	badSelector.Spec.NamespaceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}
	succeeded := testPod("ns1", "done", "n-good", goodPodNetworks+"}")
	succeeded.Status.Phase = corev1.PodSucceeded
	failed := testPod("ns1", "failed", "n-good", "junk")
	failed.Status.Phase = corev1.PodFailed

	good := clusterNode(1)
	good.Name = "n-good"
	noID, noChassis, bad := clusterNode(2), clusterNode(3), clusterNode(4)
	noID.Name, noChassis.Name, bad.Name = "n-noid", "n-nochassis", "n-bad"
	delete(noID.Annotations, AnnotationNodeID)
	delete(noChassis.Annotations, AnnotationNodeChassisID)
	bad.Annotations[AnnotationNodeSubnets] = `{"default":"10.244.4.0/33"}`
	bad.Annotations[AnnotationL3GatewayConfig] = `{"default":{"mode":"shared","mac-address":"02:42:ac:12:00:05:00:01"}}`
	delete(bad.Annotations, AnnotationNodeChassisID) // not reported: the node is broken anyway

	return Inputs{
		DefaultNetwork: DefaultNetworkConfig{Subnets: []Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24}}},
		Namespaces: []corev1.Namespace{
			testNamespace("ns1", ns1), testNamespace("ns2", nil), testNamespace("cluster", nil),
		},
		Nodes: []corev1.Node{good, noID, noChassis, bad},
		CUDNs: []*ovnkv1.ClusterUserDefinedNetwork{
			testCUDN("pending", ns1, l3("10.2.0.0/16", 0), nil),
			badSelector,
			testCUDN("x", ns1, l3("10.3.0.0/16", 0), networkAnnotations(11, "")),
			testCUDN("sel", ns1, l3("10.4.0.0/16", 0), networkAnnotations(12, "")),
		},
		UDNs: []*ovnkv1.UserDefinedNetwork{
			testUDN("ns1", "badsubnet", udn(l3("10.5.0.0/33", 0)), networkAnnotations(13, "")),
			testUDN("ns1", "badkeys", udn(l3("10.6.0.0/16", 0)), networkAnnotations(14, "[0]")),
			testUDN("ns1", "hs", udn(l3("10.7.0.0/16", 8)), networkAnnotations(15, "")),
			testUDN("cluster", "udn_x", udn(l3("10.8.0.0/16", 0)), networkAnnotations(16, "")),
			testUDN("ns1", "ok", ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
				Layer2: layer2(ovnkv1.NetworkRoleSecondary, "10.9.0.0/24")}, networkAnnotations(17, "")),
		},
		Pods: []corev1.Pod{
			testPod("ns1", "good", "n-good", goodPodNetworks+`,"ns1/ok":{"ip_addresses":["10.9.0.5/24"],"mac_address":"0a:58:0a:09:00:05","role":"secondary"}}`),
			testPod("ns1", "unscheduled", "", goodPodNetworks+"}"),
			succeeded, failed,
			testPod("ns1", "no-annotation", "n-good", ""),
			testPod("ns1", "malformed", "n-good", `{"default":`),
			testPod("ns1", "unknown-nad", "n-good", goodPodNetworks+`,"ns1/nope":{"mac_address":"0a:58:00:00:00:01"}}`),
			testPod("ns1", "on-pending", "n-good", goodPodNetworks+`,"ns1/pending":{"mac_address":"0a:58:00:00:00:02"}}`),
			testPod("ns1", "only-bad", "n-good", `{"ns1/nope":{"mac_address":"0a:58:00:00:00:03"}}`),
			testPod("ns1", "bad-nad-name", "n-good", goodPodNetworks+`,"a/b/c":{"mac_address":"0a:58:00:00:00:04"}}`),
			testPod("ns2", "not-selected", "n-good", goodPodNetworks+`,"ns2/sel":{"mac_address":"0a:58:00:00:00:05"}}`),
		},
	}
}

func TestBuildMixedGoodAndBad(t *testing.T) {
	st, errs := Build(mixedInputs())

	cudn := func(name string) ObjectRef { return ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: name} }
	udn := func(ns, name string) ObjectRef {
		return ObjectRef{Kind: "UserDefinedNetwork", Namespace: ns, Name: name}
	}
	node := func(name string) ObjectRef { return ObjectRef{Kind: "Node", Name: name} }
	pod := func(name string) ObjectRef { return ObjectRef{Kind: "Pod", Namespace: "ns1", Name: name} }
	wantErrs := []struct {
		object     ObjectRef
		annotation string
		notReady   bool
		text       string
	}{
		{cudn("badsel"), "", false, `clusteruserdefinednetwork/badsel: spec.namespaceSelector: "Bogus" is not a valid label selector operator`},
		{cudn("pending"), AnnotationNetworkID, true, "clusteruserdefinednetwork/pending: annotation k8s.ovn.org/network-id: not ready: not set yet (ovnk's leader allocates it; upstream OVN-Kubernetes keeps it on the network's NADs)"},
		{cudn("x"), "", false, `clusteruserdefinednetwork/x: network name "cluster_udn_x" is also the name of userdefinednetwork/cluster/udn_x; rename one of them`},
		{udn("cluster", "udn_x"), "", false, `userdefinednetwork/cluster/udn_x: network name "cluster_udn_x" is also the name of clusteruserdefinednetwork/x; rename one of them`},
		{udn("ns1", "badkeys"), AnnotationTunnelKeys, false, "userdefinednetwork/ns1/badkeys: annotation k8s.ovn.org/tunnel-keys: tunnel key 0 is outside 1-16777215"},
		{udn("ns1", "badsubnet"), "", false, `userdefinednetwork/ns1/badsubnet: spec.layer3.subnets: "10.5.0.0/33" is not a CIDR`},
		{udn("ns1", "hs"), "", false, "userdefinednetwork/ns1/hs: spec.layer3.subnets: host subnet /8 does not fit in 10.7.0.0/16: want a prefix length from 17 to 29"},
		{node("n-bad"), AnnotationNodeSubnets, false, `node/n-bad: annotation k8s.ovn.org/node-subnets: network "default": "10.244.4.0/33" is not a CIDR`},
		{node("n-nochassis"), AnnotationNodeChassisID, true, "node/n-nochassis: annotation k8s.ovn.org/node-chassis-id: not ready: not set yet (the node's agent sets it)"},
		{node("n-noid"), AnnotationNodeID, true, "node/n-noid: annotation k8s.ovn.org/node-id: not ready: not set yet (the leader allocates it)"},
		{pod("bad-nad-name"), AnnotationPodNetworks, false, `pod/ns1/bad-nad-name: annotation k8s.ovn.org/pod-networks: entry "a/b/c": NAD name "a/b/c" is neither "default" nor <namespace>/<name>`},
		{pod("malformed"), AnnotationPodNetworks, false, `pod/ns1/malformed: annotation k8s.ovn.org/pod-networks: malformed JSON "{\"default\":"`},
		{pod("only-bad"), AnnotationPodNetworks, false, `pod/ns1/only-bad: annotation k8s.ovn.org/pod-networks: entry "ns1/nope": no UserDefinedNetwork "nope" in namespace "ns1" and no ClusterUserDefinedNetwork "nope"`},
		{pod("unknown-nad"), AnnotationPodNetworks, false, `pod/ns1/unknown-nad: annotation k8s.ovn.org/pod-networks: entry "ns1/nope": no UserDefinedNetwork`},
		{ObjectRef{Kind: "Pod", Namespace: "ns2", Name: "not-selected"}, AnnotationPodNetworks, false,
			`pod/ns2/not-selected: annotation k8s.ovn.org/pod-networks: entry "ns2/sel": ClusterUserDefinedNetwork "sel" does not select namespace "ns2"`},
	}
	if len(errs) != len(wantErrs) {
		t.Errorf("%d errors, want %d:", len(errs), len(wantErrs))
		for _, err := range errs {
			t.Log(err)
		}
	}
	for i := range min(len(errs), len(wantErrs)) {
		err, want := errs[i], wantErrs[i]
		var oe *ObjectError
		if !errors.As(err, &oe) || oe.Object != want.object || oe.Annotation != want.annotation {
			t.Errorf("error %d %q does not name %v, annotation %q", i, err, want.object, want.annotation)
		}
		if errors.Is(err, ErrNotReady) != want.notReady {
			t.Errorf("error %d %q: errors.Is(ErrNotReady) = %v", i, err, !want.notReady)
		}
		if msg := err.Error(); len(msg) < len(want.text) || msg[:len(want.text)] != want.text {
			t.Errorf("error %d =\n%s\nwant it to start with\n%s", i, msg, want.text)
		}
	}
	// The bad node's error names both of its bad annotations.
	if len(errs) > 7 && (!containsAll(errs[7].Error(), "node-subnets", "node/n-bad: annotation k8s.ovn.org/l3-gateway-config", "has 64 bits, want 48") ||
		strings.Contains(errs[7].Error(), "chassis")) {
		t.Errorf("bad node's error %q should name both bad annotations, and not the missing one", errs[7])
	}

	var nodes, networks, pods []string
	for _, n := range st.Nodes {
		nodes = append(nodes, n.Name)
	}
	for _, n := range st.Networks {
		networks = append(networks, n.Name)
	}
	for _, p := range st.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name+":"+strings.Join(slices.Sorted(maps.Keys(p.Networks)), ","))
	}
	wantNodes := []string{"n-good"}
	wantNetworks := []string{"cluster_udn_sel", "default", "ns1_ok"}
	wantPods := []string{"ns1/bad-nad-name:default", "ns1/good:default,ns1_ok", "ns1/on-pending:default", "ns1/unknown-nad:default", "ns2/not-selected:default"}
	if !slices.Equal(nodes, wantNodes) || !slices.Equal(networks, wantNetworks) || !slices.Equal(pods, wantPods) {
		t.Errorf("State has\nnodes %v\nnetworks %v\npods %v\nwant\nnodes %v\nnetworks %v\npods %v",
			nodes, networks, pods, wantNodes, wantNetworks, wantPods)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestBuildWithoutDefaultNetwork(t *testing.T) {
	in := clusterInputs()
	in.DefaultNetwork = DefaultNetworkConfig{}
	st, errs := Build(in)
	if len(errs) != 1 || errs[0].Error() != "default network: no cluster subnets are configured" {
		t.Fatalf("errors = %v, want only the default network's", errs)
	}
	// Pods keep their other networks; the one on the default network alone is left out.
	if len(st.Pods) != 2 || len(st.Pods[0].Networks) != 1 || len(st.Pods[1].Networks) != 1 {
		t.Errorf("pods = %+v, want blue-a/web and green/db on one network each", st.Pods)
	}
	if len(st.Networks) != 2 || len(st.Nodes) != 3 {
		t.Errorf("%d networks and %d nodes, want 2 and 3", len(st.Networks), len(st.Nodes))
	}
}

// TestBuildDeterministic builds the same objects given in many orders.
func TestBuildDeterministic(t *testing.T) {
	in := clusterInputs()
	mixed := mixedInputs()
	mixed.Nodes = append(mixed.Nodes, in.Nodes...)
	mixed.Namespaces = append(mixed.Namespaces, in.Namespaces...)
	mixed.Pods = append(mixed.Pods, in.Pods...)
	mixed.CUDNs = append(mixed.CUDNs, in.CUDNs...)
	mixed.UDNs = append(mixed.UDNs, in.UDNs...)
	want, wantErrs := Build(mixed)
	for seed := range uint64(25) {
		r := rand.New(rand.NewPCG(seed, 42))
		shuffled := mixed
		shuffled.Nodes = shuffledCopy(r, mixed.Nodes)
		shuffled.Namespaces = shuffledCopy(r, mixed.Namespaces)
		shuffled.Pods = shuffledCopy(r, mixed.Pods)
		shuffled.CUDNs = shuffledCopy(r, mixed.CUDNs)
		shuffled.UDNs = shuffledCopy(r, mixed.UDNs)
		got, gotErrs := Build(shuffled)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: the State depends on the input order", seed)
			compareStates(t, got, want)
		}
		if !reflect.DeepEqual(errorStrings(gotErrs), errorStrings(wantErrs)) {
			t.Errorf("seed %d: errors\n%q\nwant\n%q", seed, errorStrings(gotErrs), errorStrings(wantErrs))
		}
	}
}

func shuffledCopy[T any](r *rand.Rand, items []T) []T {
	out := slices.Clone(items)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func errorStrings(errs []error) []string {
	out := make([]string, len(errs))
	for i, err := range errs {
		out[i] = err.Error()
	}
	return out
}
