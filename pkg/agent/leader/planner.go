package leader

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// snapshot is what one pass reads: the informers' objects, each list sorted by name
// (pods by namespace, then name). The objects are the cache's own and are never
// modified.
type snapshot struct {
	nodes      []*corev1.Node
	namespaces []corev1.Namespace
	pods       []*corev1.Pod
	cudns      []*ovnkv1.ClusterUserDefinedNetwork
	udns       []*ovnkv1.UserDefinedNetwork
	ras        []*ovnkv1.RouteAdvertisements
	cncs       []*ovnkv1.ClusterNetworkConnect
	// nads are the NetworkAttachmentDefinitions, sorted by namespace and name, when
	// nadsServed: the API server serves them and the leader watches them.
	nads       []*nadv1.NetworkAttachmentDefinition
	nadsServed bool
}

// plan is what one pass decided to write, in the order it must be written: networks'
// ids and keys before the node subnets of those networks, nodes' subnets before the
// pod addresses in them (each of those only plans on what is already persisted, so a
// value is written before anything uses it), connects' blocks and keys, the networks'
// NADs (with ids already persisted), and statuses last.
type plan struct {
	annotations []annotationWrite
	nads        []nadWrite
	statuses    []statusWrite
	// warnings are problems of single nodes and pods, reported as Warning events.
	warnings []warning
}

// annotationWrite sets (a non-nil value) or removes (nil) annotations of one object.
type annotationWrite struct {
	obj     client.Object
	changes map[string]*string
	// owner is set for the allocations whose status waits for this write: a network's
	// id and keys (the network name), or a connect's blocks and key (connectOwner).
	owner string
}

// statusWrite sets conditions of a ClusterUserDefinedNetwork, UserDefinedNetwork or
// ClusterNetworkConnect.
type statusWrite struct {
	obj        client.Object
	owner      string // as in annotationWrite
	conditions []metav1.Condition
	// connectStatus is a ClusterNetworkConnect's status.status; "" removes it.
	connectStatus ovnkv1.ConnectStatus
}

// warning is a problem worth a Warning event on an object.
type warning struct {
	obj            client.Object
	reason, action string
	message        string
}

// problem is why a network is not (fully) created: a NetworkCreated reason and message.
type problem struct {
	reason, message string
}

// Reasons of a NetworkCreated condition that is False.
const (
	// ReasonInvalidSpec: the spec is wrong in a way the API server's validation cannot
	// see, or the network's name collides with another's.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonSubnetOverlap: a subnet overlaps a cluster subnet or another network serving
	// one of the same namespaces.
	ReasonSubnetOverlap = "SubnetOverlap"
	// ReasonPrimaryNetworkConflict: a namespace would get two primary networks.
	ReasonPrimaryNetworkConflict = "PrimaryNetworkConflict"
	// ReasonOVNNameConflict: the network's OVN name is an older network's (names
	// that differ only in "-" against "."), whose OVN rows it would share.
	ReasonOVNNameConflict = "OVNNameConflict"
	// ReasonUnusableSubnet: a subnet cannot carry pods: a special-purpose range, no
	// room for pod addresses, or an IP family the cluster does not have.
	ReasonUnusableSubnet = "UnusableSubnet"
	// ReasonNetworkIDsExhausted: every network id is in use.
	ReasonNetworkIDsExhausted = "NetworkIDsExhausted"
	// ReasonTunnelKeysExhausted: every allocated tunnel key is in use.
	ReasonTunnelKeysExhausted = "TunnelKeysExhausted"
	// ReasonSubnetsExhausted: some nodes get no subnet of the network.
	ReasonSubnetsExhausted = "SubnetsExhausted"
	// ReasonForeignNAD: a NetworkAttachmentDefinition the network would write exists
	// and is not the network's (upstream reports it as a "foreign
	// NetworkAttachmentDefinition"); the network goes on without it.
	ReasonForeignNAD = "ForeignNetworkAttachmentDefinition"
	// ReasonNetworkIDConflict: the ids upstream left on the network's
	// NetworkAttachmentDefinitions are another network's.
	ReasonNetworkIDConflict = "NetworkIDConflict"
	// ReasonUnreadableNADIDs: the ids on the network's NetworkAttachmentDefinitions are
	// malformed, or its NADs disagree.
	ReasonUnreadableNADIDs = "UnreadableNetworkAttachmentDefinitionIDs"
)

// planner decides what the leader writes. It holds every allocator for as long as this
// replica leads: they remember what it handed out even before the informers show the
// written annotations. It does no I/O and is used by one goroutine at a time.
type planner struct {
	defaultNet *cluster.Network
	config     cluster.Config

	nodeIDs    *alloc.IDAllocator
	networkIDs *alloc.IDAllocator
	tunnelKeys *alloc.TunnelKeyAllocator
	// subnets are the node subnet allocators of the default network and of every
	// Layer3 primary network, by network name.
	subnets map[string]*networkSubnets
	pods    *podPools
	// connects are the ClusterNetworkConnects' blocks, by name; their router keys are
	// in tunnelKeys.
	connects map[string]*heldConnect

	// heldNodes and heldNetworks are the owners holding node and network ids and keys,
	// so that the ones gone are released.
	heldNodes    map[string]bool
	heldNetworks map[string]bool
}

// newPlanner returns a planner with empty allocators. It fails when the default
// network's configuration is invalid.
func newPlanner(s Settings) (*planner, error) {
	st, errs := cluster.Build(cluster.Inputs{Config: s.Cluster, DefaultNetwork: s.DefaultNetwork})
	if len(errs) > 0 {
		return nil, fmt.Errorf("leader settings: %w", errs[0])
	}
	p := &planner{
		config:       st.Config,
		nodeIDs:      alloc.NewIDAllocator("node", alloc.MinNodeID, alloc.MaxNodeID),
		networkIDs:   alloc.NewIDAllocator("network", alloc.MinNetworkID, alloc.MaxNetworkID),
		tunnelKeys:   alloc.NewTunnelKeyAllocator(),
		subnets:      map[string]*networkSubnets{},
		pods:         newPodPools(),
		connects:     map[string]*heldConnect{},
		heldNodes:    map[string]bool{},
		heldNetworks: map[string]bool{},
	}
	for _, n := range st.Networks {
		if n.IsDefault() {
			p.defaultNet = n
		}
	}
	def, err := newNetworkSubnets(p.defaultNet.Subnets)
	if err != nil {
		return nil, fmt.Errorf("leader settings: default network: %w", err)
	}
	p.subnets[cluster.DefaultNetworkName] = def
	return p, nil
}

// plan decides one pass: it releases what owners that are gone held, reserves every
// persisted value in sorted owner order, then allocates what is missing, also in sorted
// owner order, so that the same persisted state always leads to the same result.
func (p *planner) plan(s *snapshot) *plan {
	out := &plan{}
	nets := p.planNetworks(s, out)
	p.planNodes(s, nets, out)
	p.planPods(s, nets, out)
	p.planConnects(s, nets, out)
	p.planNADs(s, nets, out)
	p.planStatuses(s, nets, out)
	return out
}

// reserveOrRelease records that owner holds a persisted value with reserve; when the
// allocator has another value for owner (an annotation edited by hand, or written by
// an earlier leader) that one is released first. It reports whether owner now holds the
// persisted value; if not, owner holds nothing and is allocated anew.
func reserveOrRelease(reserve func() error, release func()) bool {
	if reserve() == nil {
		return true
	}
	release()
	return reserve() == nil
}

// setIfChanged adds key=value to changes unless the object's annotation already has it.
func setIfChanged(changes map[string]*string, annotations map[string]string, key, value string) {
	if have, ok := annotations[key]; !ok || have != value {
		changes[key] = &value
	}
}

// removeIfSet adds the removal of key to changes if the object has the annotation.
func removeIfSet(changes map[string]*string, annotations map[string]string, key string) {
	if _, ok := annotations[key]; ok {
		changes[key] = nil
	}
}
