package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// ErrLastGoodKept marks the error of a node's malformed annotation for which Build
// used the value of the node's last good version (Inputs.LastGoodNodes) instead: the
// node stays in the State as it was. Test with errors.Is.
var ErrLastGoodKept = errors.New("its last good value is used until it is fixed")

// ErrNotReady marks an error about an object that is not ready yet rather than broken:
// an annotation the leader or the node's agent has not written. Test with errors.Is.
var ErrNotReady = errors.New("not ready")

// Inputs is everything Build reads: the objects the informers hold, and configuration.
// Build neither modifies them nor keeps references into them.
type Inputs struct {
	// Config is copied into the State; an empty DefaultJoinSubnets means the defaults
	// (100.64.0.0/16 and fd98::/64, the families of the default network).
	Config Config
	// DefaultNetwork configures the cluster default network.
	DefaultNetwork DefaultNetworkConfig

	Nodes      []corev1.Node
	Namespaces []corev1.Namespace
	Pods       []corev1.Pod
	CUDNs      []*ovnkv1.ClusterUserDefinedNetwork
	UDNs       []*ovnkv1.UserDefinedNetwork
	CNCs       []*ovnkv1.ClusterNetworkConnect

	// LastGoodNodes are, by name, earlier versions of Nodes whose annotations all
	// parsed (LastGoodAnnotations). A node whose annotation is malformed now is built
	// with that annotation's value from its last good version (same UID), and the error
	// says so (ErrLastGoodKept): a typo on one node must not take the node out of every
	// other zone, whose remote ports to it would go. Nil keeps none.
	LastGoodNodes map[string]*corev1.Node
}

// DefaultNetworkConfig is the cluster default network's configuration, which no object
// holds. Its join subnets are Config.DefaultJoinSubnets.
type DefaultNetworkConfig struct {
	// Subnets are the cluster subnets and each node's prefix length in them, e.g.
	// 10.244.0.0/16 with HostSubnet 24 and fd00:10:244::/48 with HostSubnet 64.
	Subnets []Subnet
	// MTU of the pods' interfaces; 1400 when 0.
	MTU int
	// TransitSubnets address the transit switch; 100.88.0.0/16 and fd97::/64 (the
	// families of Subnets) when empty.
	TransitSubnets []netip.Prefix
}

// Build turns Kubernetes objects into a State. A bad or unready object is left out and
// reported with an *ObjectError naming it, and the others are built anyway (an invalid
// DefaultNetworkConfig is reported with a plain error and leaves the default network
// out, which serves every namespace otherwise):
//
//   - A node without k8s.ovn.org/node-id or k8s.ovn.org/node-chassis-id is not ready
//     for OVN (ErrNotReady); a node with a malformed annotation is left out with one
//     error naming every malformed annotation (and not the missing ones).
//   - A user-defined network without k8s.ovn.org/network-id is waiting for the leader
//     (ErrNotReady) and left out, since every key and name derives from the id; so is
//     an invalid one, and networks whose names collide (all of them: which one is meant
//     cannot be told), and of networks whose OVN names collide (OVNName) all but the
//     oldest (*OVNNameConflictError). Pods' entries on networks left out are dropped
//     without more errors.
//   - Pods that are not scheduled, have finished (Succeeded or Failed) or have no
//     k8s.ovn.org/pod-networks are skipped silently. An entry whose NAD name matches no
//     network is dropped with an error; a pod left with no entries is left out.
//
// Errors come in a deterministic order, and the State is the same whatever the order
// of the inputs.
func Build(in Inputs) (*State, []error) {
	b := &builder{
		networks:    map[string]*Network{},
		unavailable: map[string]bool{},
	}
	st := &State{Config: cloneConfig(in.Config)}

	namespaces := sortedPtrs(in.Namespaces, func(ns *corev1.Namespace) string { return ns.Name })
	if def, err := defaultNetwork(in.DefaultNetwork, st.Config.DefaultJoinSubnets, namespaces); err != nil {
		b.errs = append(b.errs, err)
		b.unavailable[DefaultNetworkName] = true
	} else {
		b.networks[DefaultNetworkName] = def
		st.Config.DefaultJoinSubnets = slices.Clone(def.JoinSubnets)
	}
	b.userDefinedNetworks(in.CUDNs, in.UDNs, namespaces)
	st.Networks = slices.SortedFunc(maps.Values(b.networks), func(a, c *Network) int { return cmp.Compare(a.Name, c.Name) })
	st.Connects = b.connects(in.CNCs, namespaces, in.CUDNs)

	for _, n := range sortedPtrs(in.Nodes, func(n *corev1.Node) string { return n.Name }) {
		if node := b.node(n, in.LastGoodNodes[n.Name]); node != nil {
			st.Nodes = append(st.Nodes, node)
		}
	}
	for _, p := range sortedPtrs(in.Pods, func(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }) {
		if pod := b.pod(p); pod != nil {
			st.Pods = append(st.Pods, pod)
		}
	}
	return st, b.errs
}

// builder holds what Build learnt so far and the errors it found.
type builder struct {
	errs []error
	// networks are the networks in the State, by name.
	networks map[string]*Network
	// unavailable are networks left out with an error; pods on them are dropped quietly.
	unavailable map[string]bool
	// nads maps pods' NAD names to networks, by the objects that exist.
	nads *NADNetworks
}

// sortedPtrs returns pointers to the elements of items, sorted by key.
func sortedPtrs[T any](items []T, key func(*T) string) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	slices.SortStableFunc(out, func(a, b *T) int { return cmp.Compare(key(a), key(b)) })
	return out
}

// cloneConfig copies c without sharing its slices with the caller.
func cloneConfig(c Config) Config {
	out := c
	out.MasqueradeSubnets = slices.Clone(c.MasqueradeSubnets)
	out.DefaultJoinSubnets = slices.Clone(c.DefaultJoinSubnets)
	out.ServiceSubnets = slices.Clone(c.ServiceSubnets)
	out.HostServiceIPs = slices.Clone(c.HostServiceIPs)
	return out
}

// node builds n, falling back for each malformed annotation on its value in lastGood
// (nil when there is none), and records the errors.
func (b *builder) node(n, lastGood *corev1.Node) *Node {
	node, errs, nonFatal := parseNode(n, n.Annotations)
	b.report(nonFatal)
	if node != nil {
		return node
	}
	merged, kept := withLastGood(n, lastGood, errs)
	if merged == nil {
		b.report(errors.Join(errs...))
		return nil
	}
	if node, _, _ = parseNode(n, merged); node == nil {
		// The last good values do not complete the node (it lacks something else).
		b.report(errors.Join(errs...))
		return nil
	}
	b.errs = append(b.errs, kept...)
	return node
}

// withLastGood returns n's annotations with each malformed one (errs, parseNode's)
// replaced by its value in lastGood, an earlier version of the same Node, and the errors
// saying so (ErrLastGoodKept); nil when there is no such version or nothing malformed.
func withLastGood(n, lastGood *corev1.Node, errs []error) (map[string]string, []error) {
	if lastGood == nil || lastGood.UID != n.UID || !slices.ContainsFunc(errs, malformed) {
		return nil, nil
	}
	merged := maps.Clone(n.Annotations)
	var kept []error
	for _, err := range errs {
		var oe *ObjectError
		if !errors.As(err, &oe) || !malformed(err) {
			continue
		}
		if v, ok := lastGood.Annotations[oe.Annotation]; ok {
			merged[oe.Annotation] = v
		} else {
			delete(merged, oe.Annotation)
		}
		kept = append(kept, &ObjectError{Object: oe.Object, Annotation: oe.Annotation, Err: fmt.Errorf("%w; %w", oe.Err, ErrLastGoodKept)})
	}
	return merged, kept
}

// LastGoodAnnotations returns the annotations of n's last good version, given last,
// the one before (nil for none): n's own when they all parse into a node, or else n's
// with each malformed annotation taken from last, when that parses; nil when neither
// does. Build keeps the value of every annotation as of its latest good change, not
// of the latest version that was good throughout. The gateway tunnel ids, which never
// keep a node out, do not count.
func LastGoodAnnotations(n, last *corev1.Node) map[string]string {
	node, errs, _ := parseNode(n, n.Annotations)
	if node != nil {
		return n.Annotations
	}
	merged, _ := withLastGood(n, last, errs)
	if merged == nil {
		return nil
	}
	if node, _, _ = parseNode(n, merged); node == nil {
		return nil
	}
	return merged
}

// report records err unless it is nil.
func (b *builder) report(err error) {
	if err != nil {
		b.errs = append(b.errs, err)
	}
}

// malformed reports whether err is about a malformed annotation rather than one not
// set yet.
func malformed(err error) bool { return err != nil && !errors.Is(err, ErrNotReady) }

// parseNode builds the node n from annotations (n's own, or n's with some taken from
// its last good version). node is nil when errs is not empty; nonFatal is about the
// gateway tunnel ids, whose bad entries cost only their network's entry, not the node:
// the node's other networks do not depend on them.
func parseNode(n *corev1.Node, annotations map[string]string) (node *Node, errs []error, nonFatal error) {
	ref := ObjectRef{Kind: "Node", Name: n.Name}
	node = &Node{
		Name:                  n.Name,
		Layer2TopologyVersion: annotations[AnnotationLayer2TopologyVersion],
		Labels:                maps.Clone(n.Labels),
	}
	var ok bool
	var err error
	if node.ID, ok, err = NodeIDCodec.Lookup(ref, annotations); !ok {
		err = notReady(ref, AnnotationNodeID, "the leader allocates it")
	}
	errs = append(errs, err)
	if node.ChassisID, ok, err = NodeChassisIDCodec.Lookup(ref, annotations); !ok {
		err = notReady(ref, AnnotationNodeChassisID, "the node's agent sets it")
	}
	errs = append(errs, err)
	errs = append(errs,
		lookupInto(&node.Subnets, NodeSubnetsCodec, ref, annotations),
		lookupInto(&node.TransitSwitchIPs, TransitSwitchPortIfAddrCodec, ref, annotations),
		lookupInto(&node.PrimaryIfAddrs, PrimaryIfAddrCodec, ref, annotations),
		lookupInto(&node.HostCIDRs, HostCIDRsCodec, ref, annotations),
		lookupInto(&node.Gateway, L3GatewayConfigCodec, ref, annotations),
	)
	node.Layer2GatewayTunnelIDs, nonFatal = GatewayTunnelIDsOf(ref, annotations)
	// A broken annotation matters more than a missing one: report only those then, so
	// that errors.Is(err, ErrNotReady) means the node just needs time.
	if slices.ContainsFunc(errs, malformed) {
		errs = slices.DeleteFunc(errs, func(err error) bool { return errors.Is(err, ErrNotReady) })
	}
	errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil })
	if len(errs) > 0 {
		return nil, errs, nonFatal
	}
	return node, nil, nonFatal
}

// NodeProblems returns the errors of errs (Build's) about the node named node that
// are not ErrNotReady: its malformed annotations, whether Build left the node out or
// kept their last good values (ErrLastGoodKept). Nil when there are none.
func NodeProblems(errs []error, node string) error {
	var out []error
	for _, err := range errs {
		for _, e := range flatten(err) {
			var oe *ObjectError
			if errors.As(e, &oe) && oe.Object.Kind == "Node" && oe.Object.Name == node && malformed(e) {
				out = append(out, e)
			}
		}
	}
	return errors.Join(out...)
}

// flatten lists the errors an errors.Join holds, or err itself.
func flatten(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}

// lookupInto stores the annotation's value in dst when it is set and valid; an unset
// annotation leaves dst alone.
func lookupInto[T any](dst *T, c Codec[T], ref ObjectRef, annotations map[string]string) error {
	v, ok, err := c.Lookup(ref, annotations)
	if ok && err == nil {
		*dst = v
	}
	return err
}

// notReady reports an annotation that is not set yet.
func notReady(ref ObjectRef, annotation, who string) error {
	return &ObjectError{Object: ref, Annotation: annotation, Err: fmt.Errorf("%w: not set yet (%s)", ErrNotReady, who)}
}

func (b *builder) pod(p *corev1.Pod) *Pod {
	pod, errs := readPod(p, b.resolveNAD)
	b.errs = append(b.errs, errs...)
	return pod
}

// Pod reads p by m's rule, as Build does: its interface on each network it is attached
// to, by network name. It is nil for a pod not on a node yet, on the host's network,
// finished, without k8s.ovn.org/pod-networks, or on no network m knows; errs name the entries that could
// not be read, among them an entry of a ClusterUserDefinedNetwork that does not serve
// the NAD's namespace.
func (m *NADNetworks) Pod(p *corev1.Pod) (pod *Pod, errs []error) {
	return readPod(p, m.attached)
}

// OnPodNetwork reports whether p has addresses on the pod networks: scheduled, not on
// the host's network and not finished. The leader allocates them for such pods alone.
func OnPodNetwork(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && !p.Spec.HostNetwork &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// readPod reads p, mapping each NAD name of its k8s.ovn.org/pod-networks to a network
// name with resolve; "" without an error leaves the entry out.
func readPod(p *corev1.Pod, resolve func(nad string) (string, error)) (*Pod, []error) {
	// A host-network pod has no port of its own, whatever its annotations say.
	if !OnPodNetwork(p) {
		return nil, nil
	}
	value, ok := p.Annotations[AnnotationPodNetworks]
	if !ok {
		return nil, nil
	}
	ref := ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
	ifaces, err := PodNetworksCodec.Parse(ref, value)
	if err != nil {
		return nil, []error{err}
	}
	pod := &Pod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, UID: string(p.UID), Running: running(p), Networks: map[string]PodInterface{}}
	if c := metav1.GetControllerOf(p); c != nil && c.Kind == "DaemonSet" {
		pod.DaemonSet = c.Name
	}
	var errs []error
	nadOf := map[string]string{}
	for _, nad := range slices.Sorted(maps.Keys(ifaces)) {
		network, err := resolve(nad)
		if err == nil && nadOf[network] != "" {
			err = fmt.Errorf("entries %q and %q are both on network %q", nadOf[network], nad, network)
		}
		if err != nil {
			errs = append(errs, &ObjectError{Object: ref, Annotation: AnnotationPodNetworks, Err: fmt.Errorf("entry %q: %w", nad, err)})
			continue
		}
		if network == "" {
			continue
		}
		nadOf[network] = nad
		pod.Networks[network] = ifaces[nad]
	}
	if len(pod.Networks) == 0 {
		return nil, errs
	}
	return pod, errs
}

// running reports whether a pod's phase is Running or any of its containers runs.
func running(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodRunning {
		return true
	}
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range statuses {
			if c.State.Running != nil {
				return true
			}
		}
	}
	return false
}

// resolveNAD maps a NAD name of k8s.ovn.org/pod-networks to a network name, by
// NADNetworks' rule. It returns "" without an error for a network left out of the State
// with an error, whether or not it serves the NAD's namespace.
func (b *builder) resolveNAD(nad string) (string, error) {
	network, err := b.nads.attached(nad)
	if b.unavailable[network] {
		return "", nil
	}
	return network, err
}
