package cluster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// The NetworkAttachmentDefinitions (NADs) of user-defined networks, as upstream
// OVN-Kubernetes' cluster manager keeps them and ovnk's leader writes them: for a
// UserDefinedNetwork one NAD of its name in its namespace, for a
// ClusterUserDefinedNetwork one NAD of its name in every namespace it serves. Each is
// controlled by its network object (an owner reference with controller and
// blockOwnerDeletion), labelled LabelUserDefinedNetwork, protected by
// FinalizerUserDefinedNetwork, annotated with the network's name, id and tunnel keys,
// and holds the network's CNI configuration.
const (
	// LabelUserDefinedNetwork marks a NAD written for a network object; its value is
	// empty.
	LabelUserDefinedNetwork = "k8s.ovn.org/user-defined-network"
	// FinalizerUserDefinedNetwork keeps a network's NAD until the leader lets it go.
	FinalizerUserDefinedNetwork = "k8s.ovn.org/user-defined-network-protection"
	// AnnotationNetworkName is a NAD's network: its name as OVN knows it, e.g.
	// cluster_udn_blue or ns1_red.
	AnnotationNetworkName = "k8s.ovn.org/network-name"
	// NADPluginType is the CNI plugin type of OVN-Kubernetes' NADs.
	NADPluginType = "ovn-k8s-cni-overlay"
	// nadCNIVersion is the CNI version of the NADs' configurations.
	nadCNIVersion = "1.0.0"
	// ovnAnnotationPrefix marks the annotations that are OVN-Kubernetes' own: those a
	// network object does not pass on to its NADs, and those a NAD keeps when its
	// network rewrites it.
	ovnAnnotationPrefix = "k8s.ovn.org"
	// lastAppliedAnnotation is kubectl apply's record of the object it applied. The
	// network object's would tell kubectl apply of a NAD wrong things about the NAD,
	// so it is not passed on (upstream passes it).
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// NADConfig is the CNI configuration of an OVN-Kubernetes NAD, a NAD's spec.config.
// The fields are in the order of their JSON names, so that the JSON is byte for byte
// upstream's (which marshals a map).
type NADConfig struct {
	// AllowPersistentIPs: the Layer2 network keeps addresses in IPAMClaims.
	AllowPersistentIPs bool   `json:"allowPersistentIPs,omitempty"`
	CNIVersion         string `json:"cniVersion"`
	// JoinSubnet lists a primary network's join subnets, comma-separated: its own, or
	// both defaults (100.65.0.0/16,fd99::/64) whatever the network's families.
	JoinSubnet string `json:"joinSubnet,omitempty"`
	// MTU is the network object's own, when it sets one.
	MTU int `json:"mtu,omitempty"`
	// Name is the network's OVN name (Network.Name).
	Name string `json:"name"`
	// NADName is "<namespace>/<name>" of the NAD itself.
	NADName string `json:"netAttachDefName"`
	// Role and Topology are the network object's, in lower case.
	Role string `json:"role"`
	// Subnets lists the network's subnets as its object spells them, comma-separated; a
	// Layer3 subnet with a host subnet length as "<cidr>/<length>".
	Subnets  string `json:"subnets,omitempty"`
	Topology string `json:"topology"`
	// TransitSubnet lists a primary Layer2 network's transit router subnets
	// (Network.TransitSubnets), comma-separated, in the order of its subnets' families.
	TransitSubnet string `json:"transitSubnet,omitempty"`
	Type          string `json:"type"`
}

// NetworkNAD returns the NAD of network n in namespace ns: n as SpecNetworks built it
// from obj, its *ovnkv1.UserDefinedNetwork or *ovnkv1.ClusterUserDefinedNetwork (whose
// uid the owner reference holds). The NAD carries obj's labels and its annotations but
// OVN-Kubernetes' own (and kubectl's last-applied-configuration), and, when ids is not
// nil, the network's id and tunnel keys as upstream writes them (TunnelKeys in its
// form, see ReadNetworkIDs). It fails for another kind of object.
func NetworkNAD(n *Network, obj metav1.Object, ns string, ids *NetworkIDs) (*nadv1.NetworkAttachmentDefinition, error) {
	spec, err := networkSpecOf(obj)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(nadConfig(n, spec, ns+"/"+obj.GetName()))
	if err != nil {
		return nil, fmt.Errorf("NAD %s/%s: %w", ns, obj.GetName(), err)
	}
	labels := map[string]string{LabelUserDefinedNetwork: ""}
	maps.Copy(labels, obj.GetLabels())
	annotations := map[string]string{AnnotationNetworkName: n.Name}
	for k, v := range obj.GetAnnotations() {
		if !OVNAnnotation(k) && k != lastAppliedAnnotation {
			annotations[k] = v
		}
	}
	if ids != nil {
		annotations[AnnotationNetworkID] = strconv.Itoa(ids.ID)
		keys, err := TunnelKeysCodec.Format(nadTunnelKeys(n, ids.TunnelKeys))
		if err != nil {
			return nil, fmt.Errorf("NAD %s/%s: %w", ns, obj.GetName(), err)
		}
		annotations[AnnotationTunnelKeys] = keys
	}
	return &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      obj.GetName(),
			Labels:    labels,
			// A NAD is its network's: the garbage collector deletes it with the
			// network, and a foreground deletion of the network waits for it.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         ovnkv1.SchemeGroupVersion.String(),
				Kind:               n.Owner.Kind,
				Name:               obj.GetName(),
				UID:                obj.GetUID(),
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
			Annotations: annotations,
			Finalizers:  []string{FinalizerUserDefinedNetwork},
		},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: string(config)},
	}, nil
}

// OVNAnnotation reports whether an annotation is OVN-Kubernetes' own (k8s.ovn.org…):
// a network object does not pass those on to its NADs, and a NAD keeps those that
// another component wrote when its network's own are written again.
func OVNAnnotation(key string) bool { return strings.HasPrefix(key, ovnAnnotationPrefix) }

// networkSpecOf returns the network description of a UserDefinedNetwork or
// ClusterUserDefinedNetwork.
func networkSpecOf(obj metav1.Object) (ovnkv1.NetworkSpec, error) {
	switch o := obj.(type) {
	case *ovnkv1.UserDefinedNetwork:
		return ovnkv1.NetworkSpec{Topology: o.Spec.Topology, Layer3: o.Spec.Layer3, Layer2: o.Spec.Layer2}, nil
	case *ovnkv1.ClusterUserDefinedNetwork:
		return o.Spec.Network, nil
	}
	return ovnkv1.NetworkSpec{}, fmt.Errorf("%T is not a UserDefinedNetwork or ClusterUserDefinedNetwork", obj)
}

// nadConfig is the CNI configuration of network n's NAD nadName, spec n's object's.
func nadConfig(n *Network, spec ovnkv1.NetworkSpec, nadName string) NADConfig {
	c := NADConfig{CNIVersion: nadCNIVersion, Type: NADPluginType, Name: n.Name, NADName: nadName,
		Topology: strings.ToLower(string(spec.Topology))}
	var role ovnkv1.NetworkRole
	var join ovnkv1.DualStackCIDRs
	var subnets []string
	switch {
	case spec.Layer3 != nil:
		role, join, c.MTU = spec.Layer3.Role, spec.Layer3.JoinSubnets, int(spec.Layer3.MTU)
		for _, s := range spec.Layer3.Subnets {
			if s.HostSubnet > 0 {
				subnets = append(subnets, fmt.Sprintf("%s/%d", s.CIDR, s.HostSubnet))
			} else {
				subnets = append(subnets, string(s.CIDR))
			}
		}
	case spec.Layer2 != nil:
		role, join, c.MTU = spec.Layer2.Role, spec.Layer2.JoinSubnets, int(spec.Layer2.MTU)
		c.AllowPersistentIPs = spec.Layer2.IPAM != nil && spec.Layer2.IPAM.Lifecycle == ovnkv1.IPAMLifecyclePersistent
		for _, s := range spec.Layer2.Subnets {
			subnets = append(subnets, string(s))
		}
		if role == ovnkv1.NetworkRolePrimary {
			c.TransitSubnet = transitInOrder(n.TransitSubnets, spec.Layer2.Subnets)
		}
	}
	c.Role = strings.ToLower(string(role))
	c.Subnets = strings.Join(subnets, ",")
	if role == ovnkv1.NetworkRolePrimary {
		joins := make([]string, 0, 2)
		for _, j := range join {
			joins = append(joins, string(j))
		}
		if len(joins) == 0 {
			for _, p := range UDNJoinSubnets() {
				joins = append(joins, p.String())
			}
		}
		c.JoinSubnet = strings.Join(joins, ",")
	}
	return c
}

// transitInOrder lists the transit subnets of the families of subnets, in their order.
func transitInOrder(transit []netip.Prefix, subnets ovnkv1.DualStackCIDRs) string {
	var out []string
	for _, s := range subnets {
		p, err := netip.ParsePrefix(string(s))
		if err != nil {
			continue
		}
		if i := slices.IndexFunc(transit, func(t netip.Prefix) bool { return t.Addr().Is4() == p.Addr().Is4() }); i >= 0 {
			out = append(out, transit[i].String())
		}
	}
	return strings.Join(out, ",")
}

// nadTunnelKeys is a network's k8s.ovn.org/tunnel-keys as upstream annotates a NAD,
// given the network object's keys: a primary Layer2 network's two (its switch's and its
// transit router's), and none for the others, whose one key derives from the id.
func nadTunnelKeys(n *Network, keys []int) []int {
	if n.Topology == Layer2 && n.Role == Primary {
		return keys
	}
	return []int{}
}

// NetworkIDs are a network's id and tunnel keys, and where they were read.
type NetworkIDs struct {
	ID int
	// TunnelKeys are the keys as annotated. The network object holds every network's
	// (TunnelKeysCodec); a NAD holds upstream's list, which has a primary Layer2
	// network's two keys (its switch's, derived from the id, and its transit router's)
	// and none for the other networks, and is absent on a NAD from a release before the
	// Layer2 transit router.
	TunnelKeys []int
	// HasTunnelKeys says that the tunnel keys annotation is set.
	HasTunnelKeys bool
	// NAD is the NAD ("<namespace>/<name>") the ids were read from; empty when they are
	// the network object's own.
	NAD string
}

// ReadNetworkIDs returns the ids of the network object obj (ref names it): its own
// k8s.ovn.org/network-id and k8s.ovn.org/tunnel-keys, or, when it has no network id,
// those upstream's cluster manager annotated on its NADs (NADNetworkIDs). ok is false
// when neither has a network id. This is the one rule by which ovnk reads a network's
// ids: the leader adopts the ids of a NAD onto the network object, and the plugin
// reads a cluster run by upstream OVN-Kubernetes, whose network objects have none.
// The error is an *ObjectError naming the object or NAD whose annotation is
// malformed, or the two NADs that disagree.
func ReadNetworkIDs(ref ObjectRef, obj metav1.Object, nads []*nadv1.NetworkAttachmentDefinition) (NetworkIDs, bool, error) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[AnnotationNetworkID]; !ok {
		return NADNetworkIDs(obj.GetUID(), nads)
	}
	id, _, err := NetworkIDCodec.Lookup(ref, annotations)
	if err != nil {
		return NetworkIDs{}, true, err
	}
	keys, hasKeys, err := TunnelKeysCodec.Lookup(ref, annotations)
	return NetworkIDs{ID: id, TunnelKeys: keys, HasTunnelKeys: hasKeys}, true, err
}

// NADNetworkIDs returns the ids annotated on the NADs of the network object whose uid is
// owner: those of nads controlled by it (an owner reference with controller set and that
// uid). ok is false when none has a k8s.ovn.org/network-id. Every NAD that has one must
// have the same id and tunnel keys; the ids come from the first by namespace.
func NADNetworkIDs(owner types.UID, nads []*nadv1.NetworkAttachmentDefinition) (NetworkIDs, bool, error) {
	var found []*nadv1.NetworkAttachmentDefinition
	for _, nad := range nads {
		if c := metav1.GetControllerOfNoCopy(nad); c != nil && c.UID == owner && nad.Annotations[AnnotationNetworkID] != "" {
			found = append(found, nad)
		}
	}
	slices.SortFunc(found, func(a, b *nadv1.NetworkAttachmentDefinition) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var first NetworkIDs
	for i, nad := range found {
		ref := ObjectRef{Kind: "NetworkAttachmentDefinition", Namespace: nad.Namespace, Name: nad.Name}
		id, _, err := NetworkIDCodec.Lookup(ref, nad.Annotations)
		if err != nil {
			return NetworkIDs{}, true, err
		}
		keys, hasKeys, err := TunnelKeysCodec.Lookup(ref, nad.Annotations)
		if err != nil {
			return NetworkIDs{}, true, err
		}
		ids := NetworkIDs{ID: id, TunnelKeys: keys, HasTunnelKeys: hasKeys, NAD: nad.Namespace + "/" + nad.Name}
		if i == 0 {
			first = ids
			continue
		}
		if ids.ID != first.ID || !slices.Equal(ids.TunnelKeys, first.TunnelKeys) {
			return NetworkIDs{}, true, &ObjectError{Object: ref, Annotation: AnnotationNetworkID, Err: fmt.Errorf(
				"network id %d and tunnel keys %v differ from NetworkAttachmentDefinition %s's %d and %v: the NADs of one network must agree",
				ids.ID, ids.TunnelKeys, first.NAD, first.ID, first.TunnelKeys)}
		}
	}
	return first, len(found) > 0, nil
}

// NetworkController returns the network object controlling nad: its controller
// reference when that is a UserDefinedNetwork or ClusterUserDefinedNetwork of
// k8s.ovn.org, as on the NADs the leader (or upstream's cluster manager) writes; nil for
// a NAD that is no network's.
func NetworkController(nad *nadv1.NetworkAttachmentDefinition) *metav1.OwnerReference {
	c := metav1.GetControllerOfNoCopy(nad)
	if c == nil || (c.Kind != "UserDefinedNetwork" && c.Kind != "ClusterUserDefinedNetwork") {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(c.APIVersion); err != nil || gv.Group != ovnkv1.GroupName {
		return nil
	}
	return c
}
