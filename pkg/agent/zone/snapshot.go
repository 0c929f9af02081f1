package zone

import (
	"errors"
	"maps"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// Snapshot is the cluster state the zone last applied to the Northbound, with what
// the builder and the compiler said about it. It is shared and never modified: the
// next reconcile stores a new one.
type Snapshot struct {
	// State is the cluster state the zone was compiled from.
	State *cluster.State
	// BuildErrors are cluster.Build's errors: the objects (or annotation entries) it
	// left out, each an *cluster.ObjectError naming the object where it has one.
	BuildErrors []error
	// PodIssues are the local pods whose ports the zone could not program, by
	// "namespace/name".
	PodIssues map[string]error
	// Unprogrammed are the networks of State that the zone did not write to the
	// Northbound, by network name, with the reason: the compiler could not compile them
	// (topology.Result.NotCompiled), or another owner's rows hold their names
	// (ovn.NameTakenError). Their pods' ports are not in the Northbound, so a pod on
	// one of them cannot be wired yet, although the rest of the zone is applied.
	Unprogrammed map[string]error
}

// Snapshot returns what the last reconcile that applied the zone compiled it from; nil
// before the first. The pods it holds have their ports in the Northbound, unless they
// are on a network of Unprogrammed: what the CNI endpoint answers from, so a pod is
// never wired before the zone knows it.
func (c *Controller) Snapshot() *Snapshot { return c.snapshot.Load() }

// CanWirePods reports whether the node can wire pods: the last reconcile that applied
// the zone also found the node's own part in order (br-int, the management ports and
// the gateway in place), or the agent has no node part. The agent installs the CNI
// configuration, which makes kubelet call the node's network ready, only then.
func (c *Controller) CanWirePods() bool {
	return c.ready.Load() && c.wirable.Load()
}

// snapshot is what the CNI endpoint needs of this reconcile.
func (z *reconciled) snapshot() *Snapshot {
	unprogrammed := maps.Clone(z.res.NotCompiled)
	if unprogrammed == nil {
		unprogrammed = map[string]error{}
	}
	for network, why := range z.taken {
		if why != "" && unprogrammed[network] == nil {
			unprogrammed[network] = errors.New(why)
		}
	}
	return &Snapshot{State: z.state, BuildErrors: z.buildErrs, PodIssues: z.res.Pods, Unprogrammed: unprogrammed}
}
