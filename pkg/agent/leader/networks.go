package leader

import (
	"cmp"
	"errors"
	"slices"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// netEntry is one ClusterUserDefinedNetwork or UserDefinedNetwork as the leader sees it.
type netEntry struct {
	name string // the network name, e.g. cluster_udn_blue
	ref  cluster.ObjectRef
	obj  client.Object
	// cudn is the object when it is a ClusterUserDefinedNetwork.
	cudn *ovnkv1.ClusterUserDefinedNetwork
	// net is the network the spec describes; nil when the spec is invalid.
	net *cluster.Network
	// hasID and hasKeys say that the object's annotations hold a network id and tunnel
	// keys that the allocators now hold for it.
	hasID, hasKeys bool
	// id and keys are what the network holds: persisted, or allocated in this pass.
	id   int
	keys []int
	// persisted says that the object's annotations show id and keys: only then do node
	// subnets and pod addresses get allocated on the network.
	persisted bool
	// problem keeps the network from being created: nothing more is allocated for it.
	problem *problem
	// subnetProblem reports nodes without a subnet of the network; the others go on.
	subnetProblem *problem
	// nadProblem reports NADs of the network that another holds; the network goes on
	// without them.
	nadProblem *problem
}

// deleting reports whether the network's object is being deleted (it has a
// deletionTimestamp, and finalizers or foreground deletion hold it): it then wants no
// NADs, so that the garbage collector can delete them and the object can go.
func (e *netEntry) deleting() bool { return e.obj.GetDeletionTimestamp() != nil }

// usable reports whether node subnets and pod addresses may be allocated on the network.
func (e *netEntry) usable() bool { return e.net != nil && e.problem == nil && e.persisted }

// networks indexes the pass's network entries.
type networks struct {
	entries []*netEntry // sorted by network name, then object
	// byName holds the valid networks: invalid ones' names may collide.
	byName map[string]*netEntry
	byRef  map[cluster.ObjectRef]*netEntry
	// primaries are the valid networks with role Primary serving each namespace.
	primaries map[string][]*netEntry
}

// networkEntries reads every network object of the snapshot.
func networkEntries(s *snapshot) *networks {
	specs, errs := cluster.SpecNetworks(cluster.Inputs{Namespaces: s.namespaces, CUDNs: s.cudns, UDNs: s.udns})
	invalid := map[cluster.ObjectRef]string{}
	for _, err := range errs {
		var oe *cluster.ObjectError
		if errors.As(err, &oe) {
			invalid[oe.Object] = joinMessage(invalid[oe.Object], oe.Err.Error())
		}
	}
	byOwner := map[cluster.ObjectRef]*cluster.Network{}
	for _, n := range specs {
		byOwner[n.Owner] = n
	}
	out := &networks{byName: map[string]*netEntry{}, byRef: map[cluster.ObjectRef]*netEntry{}, primaries: map[string][]*netEntry{}}
	add := func(e *netEntry) {
		out.byRef[e.ref] = e
		e.net = byOwner[e.ref]
		if msg, bad := invalid[e.ref]; bad || e.net == nil {
			e.net = nil
			e.problem = &problem{ReasonInvalidSpec, cmp.Or(msg, "the spec is invalid")}
		} else {
			out.byName[e.name] = e
		}
		out.entries = append(out.entries, e)
	}
	for _, c := range s.cudns {
		add(&netEntry{name: cluster.CUDNNetworkName(c.Name), ref: cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: c.Name}, obj: c, cudn: c})
	}
	for _, u := range s.udns {
		add(&netEntry{name: cluster.UDNNetworkName(u.Namespace, u.Name), ref: cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: u.Namespace, Name: u.Name}, obj: u})
	}
	slices.SortFunc(out.entries, func(a, b *netEntry) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.ref.String(), b.ref.String()))
	})
	for _, e := range out.entries {
		if e.net != nil && e.net.Role == cluster.Primary {
			for _, ns := range e.net.Namespaces {
				out.primaries[ns] = append(out.primaries[ns], e)
			}
		}
	}
	return out
}

// joinMessage joins two messages about one object with "; ".
func joinMessage(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// planNetworks allocates network ids and tunnel keys and plans their annotations. The
// persisted ids and keys of every network are reserved, even of one that cannot be
// created now (its spec became invalid, or it conflicts with another network), so that
// nobody else gets them. Of objects whose network names collide, only the oldest with
// a persisted id reserves it.
func (p *planner) planNetworks(s *snapshot, out *plan) *networks {
	nets := networkEntries(s)
	owners := nameOwners(nets.entries)
	for name := range p.heldNetworks {
		if owners[name] == nil {
			p.releaseNetwork(name)
		}
	}
	for _, e := range nets.entries {
		if owners[e.name] == e {
			p.reserveNetwork(e)
		}
	}
	// Connect routers' keys come from the same pool: reserve them before any key is
	// allocated, so that a new leader gives none of them to a network.
	p.reserveConnectKeys(s.cncs)
	// Then the ids upstream left on NADs, of network objects that have none: the
	// persisted values of ovnk's own objects come first.
	if s.nadsServed {
		for _, e := range nets.entries {
			// An object being deleted adopts nothing: its NADs are going.
			if _, has := e.obj.GetAnnotations()[cluster.AnnotationNetworkID]; !has && owners[e.name] == e && e.problem == nil && !e.deleting() {
				p.adoptNADIDs(e, s.nads)
			}
		}
	}
	p.validate(nets.entries)
	for _, e := range nets.entries {
		if e.problem != nil {
			if !e.hasID && owners[e.name] == e {
				p.releaseNetwork(e.name) // whatever an earlier pass allocated and never wrote
			}
			continue
		}
		if w, ok := p.allocateNetwork(e); ok {
			out.annotations = append(out.annotations, w)
		}
	}
	return nets
}

// nameOwners picks, for each network name, the object whose allocations the name's
// allocations are: the only one, or among objects whose names collide the oldest with
// a network id annotation (else the oldest).
func nameOwners(entries []*netEntry) map[string]*netEntry {
	out := map[string]*netEntry{}
	for _, e := range seniority(entries, func(e *netEntry) bool {
		_, ok := e.obj.GetAnnotations()[cluster.AnnotationNetworkID]
		return ok
	}) {
		if out[e.name] == nil {
			out[e.name] = e
		}
	}
	return out
}

// releaseNetwork frees a network's id and keys.
func (p *planner) releaseNetwork(name string) {
	p.networkIDs.Release(name)
	p.tunnelKeys.Release(name)
	delete(p.heldNetworks, name)
}

// reserveNetwork reserves the id and keys persisted on the network's object.
func (p *planner) reserveNetwork(e *netEntry) {
	annotations := e.obj.GetAnnotations()
	if id, ok, err := cluster.NetworkIDCodec.Lookup(e.ref, annotations); ok && err == nil {
		e.hasID = reserveOrRelease(func() error { return p.networkIDs.Reserve(e.name, id) }, func() { p.networkIDs.Release(e.name) })
		if e.hasID {
			e.id = id
			p.heldNetworks[e.name] = true
		}
	}
	if keys, ok, err := cluster.TunnelKeysCodec.Lookup(e.ref, annotations); ok && err == nil {
		e.hasKeys = reserveOrRelease(func() error { return p.tunnelKeys.Reserve(e.name, keys) }, func() { p.tunnelKeys.Release(e.name) })
		if e.hasKeys {
			e.keys = keys
			p.heldNetworks[e.name] = true
		}
	}
	e.persisted = e.hasID && e.hasKeys
}

// allocateNetwork gives a valid network its id and keys, and returns the write of both
// (together, so that no network ever has an id without its keys) if they differ from
// the object's annotations.
func (p *planner) allocateNetwork(e *netEntry) (annotationWrite, bool) {
	id, err := p.networkIDs.Allocate(e.name)
	if err != nil {
		e.problem = &problem{ReasonNetworkIDsExhausted, err.Error()}
		p.releaseNetwork(e.name) // it held no id, so its keys were never written with one
		return annotationWrite{}, false
	}
	p.heldNetworks[e.name] = true
	keys, err := alloc.NetworkTunnelKeys(p.tunnelKeys, e.name, id, string(e.net.Topology), e.net.Role == cluster.Primary)
	if err != nil {
		e.problem = &problem{ReasonTunnelKeysExhausted, err.Error()}
		if !e.hasID {
			p.releaseNetwork(e.name)
		}
		return annotationWrite{}, false
	}
	e.id, e.keys = id, keys
	changes := map[string]*string{}
	annotations := e.obj.GetAnnotations()
	setIfChanged(changes, annotations, cluster.AnnotationNetworkID, strconv.Itoa(id))
	if v, err := cluster.TunnelKeysCodec.Format(keys); err == nil {
		setIfChanged(changes, annotations, cluster.AnnotationTunnelKeys, v)
	}
	e.persisted = len(changes) == 0
	if e.persisted {
		return annotationWrite{}, false
	}
	return annotationWrite{obj: e.obj, changes: changes, owner: e.name}, true
}

// seniority orders entries (sorted by name) for conflicts: those for which holds is
// true first, then the older ones, then by name (cluster.CompareSeniority).
func seniority(entries []*netEntry, holds func(*netEntry) bool) []*netEntry {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b *netEntry) int {
		return cluster.CompareSeniority(holds(a), a.obj.GetCreationTimestamp().Time, holds(b), b.obj.GetCreationTimestamp().Time)
	})
	return out
}

// reservedRanges are the cluster's own ranges, of the configuration the planner was
// built from (cluster.RangesOf): kubectl ovnk reads the same configuration from the
// agent's ConfigMap and checks against the same ranges.
func (p *planner) reservedRanges() []cluster.ReservedRange {
	return cluster.RangesOf(p.config, p.defaultNet).Reserved()
}

// validate finds the valid networks that cannot be created: an OVN name an older
// network has, a subnet that cannot carry pods, a subnet overlapping the cluster's own
// ranges or the network's own join subnets, or a conflict with another network serving
// one of its namespaces (overlapping subnets, or two primary networks).
// In a conflict the network that holds an id wins, then the older one, then the one
// first by name, so an established network never loses to a newcomer. The rules are
// pkg/cluster's, which kubectl ovnk network create applies too.
func (p *planner) validate(entries []*netEntry) {
	var ordered []*cluster.Network
	byNetwork := map[*cluster.Network]*netEntry{}
	for _, e := range seniority(entries, func(e *netEntry) bool { return e.hasID }) {
		if e.net != nil && e.problem == nil { // a refused network takes nothing from others
			ordered = append(ordered, e.net)
			byNetwork[e.net] = e
		}
	}
	for n, err := range cluster.AcceptNetworks(ordered, p.reservedRanges()) {
		byNetwork[n].problem = &problem{refusalReason(err), err.Error()}
	}
}

// refusalReason is the NetworkCreated reason of an error of cluster.AcceptNetworks.
func refusalReason(err error) string {
	var (
		primary *cluster.PrimaryConflictError
		ovnName *cluster.OVNNameConflictError
		subnet  *cluster.UnusableSubnetError
	)
	switch {
	case errors.As(err, &primary):
		return ReasonPrimaryNetworkConflict
	case errors.As(err, &ovnName):
		return ReasonOVNNameConflict
	case errors.As(err, &subnet):
		return ReasonUnusableSubnet
	}
	return ReasonSubnetOverlap
}
