package zone

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

// inputsKey names what a compile of the zone reads: the version of every object listed
// for it and of every last good Node, and the Layer2 footprint read from the Northbound. The configuration is the
// agent's own and does not change while it runs. Two reconciles with one key compile the
// same zone, so the second reuses the first's rows (and the reconciler, finding them as
// it applied them, compares only what the Northbound changed since).
func inputsKey(in cluster.Inputs, fp l2upgrade.Footprint) string {
	h := sha256.New()
	objects := func(kind string, objs []client.Object) {
		// The informers' cache lists in no particular order.
		lines := make([]string, len(objs))
		for i, o := range objs {
			lines[i] = o.GetNamespace() + "/" + o.GetName() + " " + string(o.GetUID()) + " " + o.GetResourceVersion()
		}
		slices.Sort(lines)
		write(h, kind)
		write(h, lines...)
	}
	objects("Node", pointers(in.Nodes))
	objects("Namespace", pointers(in.Namespaces))
	objects("Pod", pointers(in.Pods))
	objects("ClusterUserDefinedNetwork", asObjects(in.CUDNs))
	objects("UserDefinedNetwork", asObjects(in.UDNs))
	objects("ClusterNetworkConnect", asObjects(in.CNCs))
	// The last good versions Build falls back on for malformed node annotations.
	objects("LastGoodNode", asObjects(slices.Collect(maps.Values(in.LastGoodNodes))))
	for _, part := range []map[string]bool{fp.Legacy, fp.TransitRouter, fp.Upgrade} {
		write(h, "footprint")
		names := make([]string, 0, len(part))
		for name, in := range part {
			if in {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		write(h, names...)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// write adds fields to h, each ended by a NUL so that no two lists run together.
func write(h hash.Hash, fields ...string) {
	for _, f := range fields {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
}

// pointers lists the objects of a typed list (Nodes, Pods) as client.Objects.
func pointers[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

func asObjects[P client.Object](items []P) []client.Object {
	out := make([]client.Object, len(items))
	for i, o := range items {
		out[i] = o
	}
	return out
}
