package leader

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// What the event-order test checks of a cluster state: the invariants that hold after
// every write whatever the order, and the shape of the final state that a fresh
// leader must reproduce.

// netIndex finds the network objects of a state by network name and by owner key
// (layer3_<id>, as the connects' annotation names networks).
type netIndex struct {
	byName     map[string]client.Object
	byOwnerKey map[string]client.Object
	udns       map[string]bool // namespace/name
}

func newNetIndex(s *snapshot) *netIndex {
	idx := &netIndex{byName: map[string]client.Object{}, byOwnerKey: map[string]client.Object{}, udns: map[string]bool{}}
	add := func(name string, obj client.Object, topology ovnkv1.NetworkTopology) {
		idx.byName[name] = obj
		if id, err := strconv.Atoi(obj.GetAnnotations()[cluster.AnnotationNetworkID]); err == nil {
			idx.byOwnerKey[cluster.NetworkOwnerKeyOf(cluster.Topology(topology), id)] = obj
		}
	}
	for _, c := range s.cudns {
		add(cluster.CUDNNetworkName(c.Name), c, c.Spec.Network.Topology)
	}
	for _, u := range s.udns {
		add(cluster.UDNNetworkName(u.Namespace, u.Name), u, u.Spec.Topology)
		idx.udns[u.Namespace+"/"+u.Name] = true
	}
	return idx
}

// networkOfNAD names the network of a pod-networks entry as the leader resolves it.
func (idx *netIndex) networkOfNAD(nad string) string {
	if nad == cluster.DefaultNetworkName {
		return nad
	}
	if idx.udns[nad] {
		ns, name, _ := strings.Cut(nad, "/")
		return cluster.UDNNetworkName(ns, name)
	}
	_, name, _ := strings.Cut(nad, "/")
	return cluster.CUDNNetworkName(name)
}

// held is a persisted value and who holds it: the object, and the network object it is
// a value of (empty for the default network or none).
type held struct {
	value            string
	holder, network  types.UID
	holderName, what string
}

// invariants checks a cluster state after every write, and remembers what earlier
// states held.
type invariants struct {
	// state is the API server's state: a cache that every check brings up to date
	// (cheaper than listing from the fake, which goes through JSON).
	state *informerCache
	// seen are the values persisted so far, by holder uid, network uid and what.
	seen map[string]held
	// created are the networks that had NetworkCreated True, by uid.
	created map[types.UID]string
	// newcomers are networks that must never get an id (describe names).
	newcomers []string
}

func newInvariants(api *fakeAPI, newcomers ...string) *invariants {
	return &invariants{state: newInformerCache(api), seen: map[string]held{}, created: map[types.UID]string{}, newcomers: newcomers}
}

// check reads the API server's state and checks, whatever the order of events:
//
//   - no value is held twice: network ids; tunnel keys of networks and connect
//     routers (one pool); node ids and transit addresses; each network's node subnets,
//     pod addresses and Layer2 tunnel ids (pods' and nodes' gateway ports share a
//     pool); each connect's blocks;
//   - nothing is used before it is persisted: a node subnet, gateway tunnel id, pod
//     entry or connect block of a network only while the network object holds its id
//     and keys, and a pod address only inside its node's persisted subnet of the
//     network; NetworkCreated True only with the id and keys it names persisted;
//   - a persisted value never changes, and is not removed while its holder and its
//     network live (a finished pod no longer holds anything);
//   - a network once created stays created (none of the scenario's changes may take
//     that away), and the newcomers never get an id;
//   - no pod in a namespace that asks for a primary user-defined network gets the
//     default network as its primary;
//   - conditions never observe a generation the object has not reached;
//   - a NAD of a live network never shows an id its network object does not hold,
//     and a NAD that is no network's never changes.
func (inv *invariants) check(ctx context.Context) error {
	for _, kind := range inv.state.pending() {
		inv.state.deliver(kind)
	}
	s, err := (&reconciler{c: inv.state}).snapshot(ctx, true)
	if err != nil {
		return err
	}
	idx := newNetIndex(s)
	var errs []error
	errorf := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	owners := map[string]string{} // pool and value -> holder
	claim := func(pool, value string, holder client.Object) {
		key := pool + " " + value
		if other, dup := owners[key]; dup && other != describe(holder) {
			errorf("%s is held by %s and %s", key, other, describe(holder))
		}
		owners[key] = describe(holder)
	}
	now := map[string]held{}
	hold := func(holder client.Object, network client.Object, what, value string) {
		h := held{value: value, holder: holder.GetUID(), holderName: describe(holder), what: what}
		if network != nil {
			h.network = network.GetUID()
			h.what += " of " + describe(network)
		}
		now[fmt.Sprintf("%s %s %s", h.holder, h.network, h.what)] = h
	}
	alive := map[types.UID]bool{}
	// networkFor returns the live network object named, and whether the value may be
	// checked: false for a network gone (its entries leave at a later pass).
	networkFor := func(holder client.Object, network, what string) (client.Object, bool) {
		if network == cluster.DefaultNetworkName {
			return nil, true
		}
		obj := idx.byName[network]
		if obj == nil {
			return nil, false
		}
		a := obj.GetAnnotations()
		if a[cluster.AnnotationNetworkID] == "" || a[cluster.AnnotationTunnelKeys] == "" {
			errorf("%s has %s of network %q, which has no id and keys persisted", describe(holder), what, network)
		}
		return obj, true
	}

	for _, obj := range slices.Concat(objectsOf(s.cudns), objectsOf(s.udns)) {
		alive[obj.GetUID()] = true
		a := obj.GetAnnotations()
		if v, ok := a[cluster.AnnotationNetworkID]; ok {
			claim("network id", v, obj)
			hold(obj, nil, "network id", v)
			if slices.Contains(inv.newcomers, describe(obj)) {
				errorf("the newcomer %s got network id %s", describe(obj), v)
			}
		}
		if v, ok := a[cluster.AnnotationTunnelKeys]; ok {
			keys, err := cluster.TunnelKeysCodec.Parse(cluster.ObjectRef{Name: obj.GetName()}, v)
			if err != nil {
				errorf("%s: %v", describe(obj), err)
			}
			for _, k := range keys {
				claim("tunnel key", strconv.Itoa(k), obj)
			}
			hold(obj, nil, "tunnel keys", v)
		}
		for _, c := range conditionsOf(obj) {
			if c.ObservedGeneration > obj.GetGeneration() {
				errorf("%s: condition %s observed generation %d of %d", describe(obj), c.Type, c.ObservedGeneration, obj.GetGeneration())
			}
		}
		created := meta.FindStatusCondition(conditionsOf(obj), ovnkv1.ConditionNetworkCreated)
		switch {
		case created != nil && created.Status == metav1.ConditionTrue:
			want := fmt.Sprintf("network id %s, tunnel keys %s", a[cluster.AnnotationNetworkID],
				strings.NewReplacer("[", "", "]", "", ",", ", ").Replace(a[cluster.AnnotationTunnelKeys]))
			if !strings.HasPrefix(created.Message, want) {
				errorf("%s: NetworkCreated True %q, but its annotations say %q", describe(obj), created.Message, want)
			}
			inv.created[obj.GetUID()] = describe(obj)
		case inv.created[obj.GetUID()] != "":
			errorf("%s was created, and is not any more: %+v", describe(obj), created)
		}
	}

	nodeSubnets := map[string]map[string][]netip.Prefix{}
	for _, n := range s.nodes {
		alive[n.UID] = true
		ref := cluster.ObjectRef{Kind: "Node", Name: n.Name}
		if v, ok := n.Annotations[cluster.AnnotationNodeID]; ok {
			claim("node id", v, n)
			hold(n, nil, "node id", v)
		}
		if v, ok := n.Annotations[cluster.AnnotationNodeTransitSwitchPortIfAddr]; ok {
			claim("transit addresses", v, n)
			hold(n, nil, "transit addresses", v)
		}
		subnets, _, err := cluster.NodeSubnetsCodec.Lookup(ref, n.Annotations)
		if err != nil {
			errorf("%v", err)
		}
		nodeSubnets[n.Name] = subnets
		for network, prefixes := range subnets {
			netObj, ok := networkFor(n, network, "node subnets")
			if !ok {
				continue
			}
			for _, p := range prefixes {
				claim("subnet of "+network, p.String(), n)
			}
			hold(n, netObj, "node subnets", fmt.Sprint(prefixes))
		}
		ids, err := cluster.GatewayTunnelIDsOf(ref, n.Annotations)
		if err != nil {
			errorf("%v", err)
		}
		for network, id := range ids {
			if netObj, ok := networkFor(n, network, "a gateway tunnel id"); ok {
				claim("tunnel id on "+network, strconv.Itoa(id), n)
				hold(n, netObj, "gateway tunnel id", strconv.Itoa(id))
			}
		}
	}

	namespaces := map[string]*corev1.Namespace{}
	for i := range s.namespaces {
		namespaces[s.namespaces[i].Name] = &s.namespaces[i]
	}
	for _, p := range s.pods {
		if !cluster.OnPodNetwork(p) {
			continue // a finished pod holds nothing, whatever its annotation says
		}
		alive[p.UID] = true
		ifaces, _, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, p.Annotations)
		if err != nil {
			errorf("%v", err)
		}
		if ns := namespaces[p.Namespace]; ns != nil && ifaces[cluster.DefaultNetworkName].Role == cluster.PodRolePrimary {
			if _, required := ns.Labels[cluster.LabelPrimaryUDN]; required {
				errorf("%s has the default network as its primary, in a namespace that asks for a primary user-defined network", describe(p))
			}
		}
		for nad, iface := range ifaces {
			network := idx.networkOfNAD(nad)
			netObj, ok := networkFor(p, network, "an entry")
			if !ok {
				continue
			}
			layer3 := network == cluster.DefaultNetworkName || topologyOf(netObj) == ovnkv1.NetworkTopologyLayer3
			for _, ip := range iface.IPs {
				claim("address on "+network, ip.Addr().String(), p)
				if subnets, ok := nodeSubnets[p.Spec.NodeName]; ok && layer3 &&
					!slices.ContainsFunc(subnets[network], func(s netip.Prefix) bool { return s.Contains(ip.Addr()) }) {
					errorf("%s has %s on %s, outside its node's subnets %v", describe(p), ip, network, subnets[network])
				}
			}
			hold(p, netObj, "addresses", fmt.Sprint(iface.IPs))
			if iface.TunnelID != 0 {
				claim("tunnel id on "+network, strconv.Itoa(iface.TunnelID), p)
				hold(p, netObj, "tunnel id", strconv.Itoa(iface.TunnelID))
			}
		}
	}

	for _, c := range s.cncs {
		alive[c.UID] = true
		if v, ok := c.Annotations[cluster.AnnotationConnectRouterTunnelKey]; ok {
			claim("tunnel key", v, c)
			hold(c, nil, "router tunnel key", v)
		}
		blocks, _, err := cluster.ConnectSubnetsCodec.Lookup(connectRef(c), c.Annotations)
		if err != nil {
			errorf("%v", err)
		}
		for ownerKey, prefixes := range blocks {
			netObj := idx.byOwnerKey[ownerKey]
			if netObj == nil {
				continue // the network is gone, or its entry is stale
			}
			for _, p := range prefixes {
				claim("block of "+describe(c), p.String(), c)
			}
			hold(c, netObj, "blocks", fmt.Sprint(prefixes))
		}
	}

	networksByUID := map[types.UID]client.Object{}
	for _, obj := range slices.Concat(objectsOf(s.cudns), objectsOf(s.udns)) {
		networksByUID[obj.GetUID()] = obj
	}
	for _, nad := range s.nads {
		alive[nad.UID] = true
		c := cluster.NetworkController(nad)
		if c == nil {
			hold(nad, nil, "content, not a network's", nad.ResourceVersion)
			continue
		}
		network := networksByUID[c.UID]
		if network == nil {
			continue // its network is gone: the NAD goes at a later pass
		}
		if id, ok := nad.Annotations[cluster.AnnotationNetworkID]; ok && id != network.GetAnnotations()[cluster.AnnotationNetworkID] {
			errorf("%s shows network id %s; its network %s holds %q", describe(nad), id, describe(network), network.GetAnnotations()[cluster.AnnotationNetworkID])
		}
	}

	for key, h := range now {
		if old, ok := inv.seen[key]; ok && old.value != h.value {
			errorf("%s: %s changed from %s to %s", h.holderName, h.what, old.value, h.value)
		}
	}
	for key, old := range inv.seen {
		if _, ok := now[key]; ok {
			continue
		}
		if alive[old.holder] && (old.network == "" || alive[old.network]) {
			errorf("%s lost its %s %s", old.holderName, old.what, old.value)
		}
		delete(inv.seen, key)
	}
	maps.Copy(inv.seen, now)
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

func objectsOf[T client.Object](objs []T) []client.Object {
	out := make([]client.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func topologyOf(obj client.Object) ovnkv1.NetworkTopology {
	switch o := obj.(type) {
	case *ovnkv1.ClusterUserDefinedNetwork:
		return o.Spec.Network.Topology
	case *ovnkv1.UserDefinedNetwork:
		return o.Spec.Topology
	}
	return ""
}

// Allocated values inside condition messages, which stateShape replaces by "#".
var (
	allocatedIDs   = regexp.MustCompile(`network id \d+, tunnel keys \d+(, \d+)*`)
	allocatedKey   = regexp.MustCompile(`tunnel key \d+`)
	allocatedBlock = regexp.MustCompile(`("[^"]+") [0-9a-f.:]+/\d+( and [0-9a-f.:]+/\d+)?`)
)

func normalizeMessage(m string) string {
	m = allocatedIDs.ReplaceAllString(m, "network id #, tunnel keys #")
	m = allocatedKey.ReplaceAllString(m, "tunnel key #")
	return allocatedBlock.ReplaceAllString(m, "$1 #")
}

// stateShape prints what the leader wrote, one object per line, with the allocated
// values left out: they are the lowest free when the holder came, so they follow the
// order of events, as they must (a value never changes once persisted). What is left
// is what the order must not change: which objects hold which allocations, on which
// networks and how many (a node's subnets per network, a pod's entries with their
// roles and address counts, a connect's networks), and every condition, whole but for
// the values in its message. That the values themselves are consistent (derived ones
// right, none outside its range or held twice) a new leader's first pass checks: it
// rewrites any value it would not reserve as it is.
func stateShape(s *snapshot) string {
	idx := newNetIndex(s)
	var lines []string
	line := func(obj client.Object, parts []string) {
		if len(parts) > 0 {
			lines = append(lines, describe(obj)+" "+strings.Join(parts, " "))
		}
	}
	present := func(obj client.Object, keys ...string) []string {
		var out []string
		for _, k := range keys {
			if _, ok := obj.GetAnnotations()[k]; ok {
				out = append(out, strings.TrimPrefix(k, "k8s.ovn.org/"))
			}
		}
		return out
	}
	for _, n := range s.nodes {
		parts := present(n, cluster.AnnotationNodeID, cluster.AnnotationNodeTransitSwitchPortIfAddr)
		subnets, _, _ := cluster.NodeSubnetsCodec.Lookup(cluster.ObjectRef{Name: n.Name}, n.Annotations)
		for _, network := range slices.Sorted(maps.Keys(subnets)) {
			parts = append(parts, fmt.Sprintf("subnets[%s]×%d", network, len(subnets[network])))
		}
		ids, _ := cluster.GatewayTunnelIDsOf(cluster.ObjectRef{Name: n.Name}, n.Annotations)
		for _, network := range slices.Sorted(maps.Keys(ids)) {
			parts = append(parts, fmt.Sprintf("gateway-tunnel-id[%s]", network))
		}
		line(n, parts)
	}
	for _, obj := range slices.Concat(objectsOf(s.cudns), objectsOf(s.udns)) {
		parts := present(obj, cluster.AnnotationNetworkID)
		if keys, ok, _ := cluster.TunnelKeysCodec.Lookup(cluster.ObjectRef{}, obj.GetAnnotations()); ok {
			parts = append(parts, fmt.Sprintf("tunnel-keys×%d", len(keys)))
		}
		line(obj, parts)
		lines = append(lines, conditionLines(obj)...)
	}
	for _, p := range s.pods {
		if !cluster.OnPodNetwork(p) {
			// A finished pod keeps whatever it had when it finished, if anything: that
			// depends on whether it was wired first, and nothing reads it.
			lines = append(lines, describe(p)+" finished")
			continue
		}
		ifaces, _, _ := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Name: p.Name}, p.Annotations)
		var parts []string
		for _, nad := range slices.Sorted(maps.Keys(ifaces)) {
			iface := ifaces[nad]
			part := fmt.Sprintf("%s(%s, addresses×%d", nad, iface.Role, len(iface.IPs))
			if iface.TunnelID != 0 {
				part += ", tunnel id"
			}
			parts = append(parts, part+")")
		}
		line(p, parts)
	}
	for _, nad := range s.nads {
		lines = append(lines, nadShape(nad, s))
	}
	for _, c := range s.cncs {
		parts := present(c, cluster.AnnotationConnectRouterTunnelKey)
		blocks, _, _ := cluster.ConnectSubnetsCodec.Lookup(connectRef(c), c.Annotations)
		var names []string
		for ownerKey, prefixes := range blocks {
			name := "unknown network " + ownerKey
			if obj := idx.byOwnerKey[ownerKey]; obj != nil {
				name = describe(obj)
			}
			names = append(names, fmt.Sprintf("blocks[%s]×%d", name, len(prefixes)))
		}
		slices.Sort(names)
		line(c, append(parts, names...))
		lines = append(lines, conditionLines(c)...)
		if c.Status.Status != "" {
			lines = append(lines, describe(c)+" status "+string(c.Status.Status))
		}
	}
	return strings.Join(lines, "\n")
}

// nadShape prints a NAD: whose it is, and for a network's whether its ids are its
// network's; its metadata and configuration, which follow from the network, whole.
func nadShape(nad *nadv1.NetworkAttachmentDefinition, s *snapshot) string {
	owner := "no network's"
	ids := ""
	if c := cluster.NetworkController(nad); c != nil {
		owner = c.Kind + " " + c.Name + "'s"
		for _, obj := range slices.Concat(objectsOf(s.cudns), objectsOf(s.udns)) {
			if obj.GetUID() != c.UID {
				continue
			}
			owner = describe(obj) + "'s"
			a := obj.GetAnnotations()
			ids = fmt.Sprintf(" network-id is its network's: %t; tunnel-keys %s",
				nad.Annotations[cluster.AnnotationNetworkID] == a[cluster.AnnotationNetworkID], tunnelKeysShape(nad.Annotations[cluster.AnnotationTunnelKeys]))
		}
	}
	return fmt.Sprintf("%s %s labels=%v finalizers=%v network-name=%q%s config=%s", describe(nad), owner, nad.Labels, nad.Finalizers,
		nad.Annotations[cluster.AnnotationNetworkName], ids, nad.Spec.Config)
}

// tunnelKeysShape counts the keys of a tunnel-keys annotation.
func tunnelKeysShape(value string) string {
	keys, err := cluster.TunnelKeysCodec.Parse(cluster.ObjectRef{}, value)
	if err != nil {
		return fmt.Sprintf("%q", value)
	}
	return fmt.Sprintf("×%d", len(keys))
}

// conditionLines prints an object's conditions, the values in their messages
// replaced.
func conditionLines(obj client.Object) []string {
	var out []string
	for _, c := range conditionsOf(obj) {
		out = append(out, fmt.Sprintf("%s %s %s %s (generation %d of %d): %s", describe(obj), c.Type, c.Status, c.Reason,
			c.ObservedGeneration, obj.GetGeneration(), normalizeMessage(c.Message)))
	}
	return out
}
