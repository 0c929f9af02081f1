package leader

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// The networks' NetworkAttachmentDefinitions. The leader keeps, for every network it
// accepted and gave its ids, the NADs upstream's cluster manager would
// (cluster.NetworkNAD): tools that read NADs (Multus, and those reading the ids there)
// see on an ovnk cluster what they see on an upstream one. It deletes the NADs its
// networks no longer want (the network is gone or being deleted, or a
// ClusterUserDefinedNetwork no longer serves the namespace), and never touches a NAD that is not a network's: a
// network whose NAD name such a NAD holds is reported (ReasonForeignNAD) and goes on
// without it. A network object without ids adopts those upstream left on its NADs
// (cluster.ReadNetworkIDs) unless another network holds them.

// nadOp is what a nadWrite does.
type nadOp int

const (
	nadCreate nadOp = iota
	nadUpdate
	// nadRelease lets a NAD go: the leader's finalizer comes off, and the NAD is deleted
	// unless its deletion has begun already.
	nadRelease
)

// nadWrite creates, updates or releases one NAD.
type nadWrite struct {
	op nadOp
	// nad is the NAD to create, or the cache's NAD to update or release.
	nad *nadv1.NetworkAttachmentDefinition
	// An update's changes: labels and annotations to set (a value) or remove (nil), the
	// new finalizers (nil: unchanged) and the new spec.config (nil: unchanged).
	labels, annotations map[string]*string
	finalizers          []string
	config              *string
}

// nadKey names a NAD.
type nadKey = types.NamespacedName

// adoptNADIDs gives a network object without a network id the ids upstream annotated on
// its NADs, if another network does not hold them; they are written onto the object
// like allocated ones (allocateNetwork). A collision, or NADs whose ids cannot be
// read, refuse the network: allocating new ids would give the network's OVN objects,
// which upstream built with the NADs' ids, other keys.
func (p *planner) adoptNADIDs(e *netEntry, nads []*nadv1.NetworkAttachmentDefinition) {
	ids, ok, err := cluster.NADNetworkIDs(e.obj.GetUID(), nads)
	switch {
	case !ok:
		return
	case err != nil:
		e.problem = &problem{ReasonUnreadableNADIDs, err.Error() + "; fix or remove the annotation for the leader to use the NAD's ids or allocate new ones"}
		return
	}
	// What an earlier pass allocated the network and never wrote gives way first.
	p.releaseNetwork(e.name)
	err = p.networkIDs.Reserve(e.name, ids.ID)
	if err == nil && len(ids.TunnelKeys) > 0 {
		if err = p.tunnelKeys.Reserve(e.name, ids.TunnelKeys); err != nil {
			p.releaseNetwork(e.name)
		}
	}
	if err != nil {
		e.problem = &problem{ReasonNetworkIDConflict, fmt.Sprintf("the ids on NetworkAttachmentDefinition %s cannot be adopted: %v", ids.NAD, err)}
		return
	}
	// The object's annotations do not show them yet: persisted stays false, and
	// allocateNetwork writes them (its keys derived again, the NADs' reserved).
	e.hasID, e.id = true, ids.ID
	p.heldNetworks[e.name] = true
}

// nadClaim is a NAD a network wants.
type nadClaim struct {
	e  *netEntry
	ns string
}

// nadNamespaces are the namespaces a network wants NADs in: the UserDefinedNetwork's
// own, or those the ClusterUserDefinedNetwork serves.
func nadNamespaces(e *netEntry) []string {
	if e.cudn == nil {
		return []string{e.obj.GetNamespace()}
	}
	return e.net.Namespaces
}

// claimNADs returns the NADs the networks want, by name: those of every network whose
// spec is valid, that was not refused and whose object is not being deleted. A UserDefinedNetwork's NAD name is its own; a
// ClusterUserDefinedNetwork serving the namespace with its name too goes without a NAD
// there (the message is noted in taken), as a pod's "<namespace>/<name>" means the
// UserDefinedNetwork.
func claimNADs(nets *networks, taken map[*netEntry][]string) map[nadKey]nadClaim {
	claims := map[nadKey]nadClaim{}
	for _, udnFirst := range []bool{true, false} {
		for _, e := range nets.entries {
			if e.net == nil || e.problem != nil || e.deleting() || (e.cudn == nil) != udnFirst {
				continue
			}
			for _, ns := range nadNamespaces(e) {
				key := nadKey{Namespace: ns, Name: e.obj.GetName()}
				if other, ok := claims[key]; ok {
					taken[e] = append(taken[e], fmt.Sprintf("NetworkAttachmentDefinition %s is %s's", key, describe(other.e.obj)))
					continue
				}
				claims[key] = nadClaim{e: e, ns: ns}
			}
		}
	}
	return claims
}

// planNADs plans the writes that make the NADs what the networks want, and notes on
// each network the NADs another holds (nadProblem). A network gets its NADs once its ids
// are persisted, so that each is written once, with them; until then its NADs are left
// as they are, and so are those of a network whose spec cannot be read or that was
// refused. A network whose object is being deleted has its NADs released. NADs are not created in namespaces being deleted, which refuse them.
func (p *planner) planNADs(s *snapshot, nets *networks, out *plan) {
	if !s.nadsServed {
		return
	}
	taken := map[*netEntry][]string{}
	claims := claimNADs(nets, taken)
	byUID := map[types.UID]*netEntry{}
	for _, e := range nets.entries {
		byUID[e.obj.GetUID()] = e
	}
	// wants reports whether network e wants the NAD key now.
	wants := func(e *netEntry, key nadKey) bool { c, ok := claims[key]; return ok && c.e == e }
	exists := map[nadKey]bool{}
	for _, nad := range s.nads {
		key := client.ObjectKeyFromObject(nad)
		exists[key] = true
		claim, claimed := claims[key]
		c := cluster.NetworkController(nad)
		var owner *netEntry
		if c != nil {
			owner = byUID[c.UID]
		}
		switch {
		case c == nil:
			if claimed {
				taken[claim.e] = append(taken[claim.e], fmt.Sprintf("NetworkAttachmentDefinition %s exists and is not a network's", key))
			}
		case claimed && claim.e == owner:
			if !claim.e.persisted {
				continue // its ids are on their way: the NAD gets them with the rest
			}
			if nad.DeletionTimestamp != nil {
				// Deleted by someone: let it go, and write it again once it is gone.
				if w, ok := releaseNAD(nad); ok {
					out.nads = append(out.nads, w)
				}
				continue
			}
			want, err := claim.e.nad(claim.ns)
			if err != nil {
				taken[claim.e] = append(taken[claim.e], err.Error())
				continue
			}
			if w, ok := nadChanges(nad, want); ok {
				out.nads = append(out.nads, w)
			}
		case owner == nil || owner.deleting() || (owner.net != nil && owner.problem == nil && !wants(owner, key)):
			// Its network is gone or being deleted, or serves the namespace no more, or
			// another network has the name there: it goes, and the one wanted comes once
			// it is gone. A network being deleted wants none, whatever its spec: were
			// its NAD written again, a foreground deletion's garbage collector would
			// delete it again, and the object would wait on it for ever.
			if w, ok := releaseNAD(nad); ok {
				out.nads = append(out.nads, w)
			}
		case claimed:
			// Another live network's, which cannot say what it wants now.
			taken[claim.e] = append(taken[claim.e], fmt.Sprintf("NetworkAttachmentDefinition %s is %s's", key, describe(owner.obj)))
		}
	}
	terminating := map[string]bool{}
	for i := range s.namespaces {
		if ns := &s.namespaces[i]; ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
			terminating[ns.Name] = true
		}
	}
	for _, key := range slices.SortedFunc(maps.Keys(claims), compareNADKeys) {
		claim := claims[key]
		if exists[key] || terminating[key.Namespace] || !claim.e.persisted {
			continue
		}
		want, err := claim.e.nad(claim.ns)
		if err != nil {
			taken[claim.e] = append(taken[claim.e], err.Error())
			continue
		}
		out.nads = append(out.nads, nadWrite{op: nadCreate, nad: want})
	}
	for e, msgs := range taken {
		slices.Sort(msgs)
		e.nadProblem = &problem{ReasonForeignNAD, strings.Join(msgs, "; ") +
			": the leader never writes over a NetworkAttachmentDefinition that is not the network's; delete or rename it for the network's own to be written"}
	}
}

func compareNADKeys(a, b nadKey) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// nad returns the NAD network e wants in namespace ns, with its persisted ids.
func (e *netEntry) nad(ns string) (*nadv1.NetworkAttachmentDefinition, error) {
	return cluster.NetworkNAD(e.net, e.obj, ns, &cluster.NetworkIDs{ID: e.id, TunnelKeys: e.keys})
}

// nadChanges returns the update that turns have into want, if they differ: want's
// labels exactly, want's annotations with have's other OVN-Kubernetes ones kept, the
// leader's finalizer, and want's configuration. The owner references are left as they
// are: have is already controlled by want's network.
func nadChanges(have, want *nadv1.NetworkAttachmentDefinition) (nadWrite, bool) {
	w := nadWrite{op: nadUpdate, nad: have, labels: map[string]*string{}, annotations: map[string]*string{}}
	for k, v := range want.Labels {
		setIfChanged(w.labels, have.Labels, k, v)
	}
	for k := range have.Labels {
		if _, ok := want.Labels[k]; !ok {
			w.labels[k] = nil
		}
	}
	for k, v := range want.Annotations {
		setIfChanged(w.annotations, have.Annotations, k, v)
	}
	for k := range have.Annotations {
		if _, ok := want.Annotations[k]; !ok && !cluster.OVNAnnotation(k) {
			w.annotations[k] = nil
		}
	}
	if !slices.Contains(have.Finalizers, cluster.FinalizerUserDefinedNetwork) {
		w.finalizers = append(slices.Clone(have.Finalizers), cluster.FinalizerUserDefinedNetwork)
	}
	if have.Spec.Config != want.Spec.Config {
		w.config = &want.Spec.Config
	}
	changed := len(w.labels) > 0 || len(w.annotations) > 0 || w.finalizers != nil || w.config != nil
	return w, changed
}

// releaseNAD returns the write that lets a network's NAD go, unless there is nothing
// left to do: its deletion has begun and the leader's finalizer is off.
func releaseNAD(nad *nadv1.NetworkAttachmentDefinition) (nadWrite, bool) {
	if nad.DeletionTimestamp != nil && !slices.Contains(nad.Finalizers, cluster.FinalizerUserDefinedNetwork) {
		return nadWrite{}, false
	}
	return nadWrite{op: nadRelease, nad: nad}, true
}
