package vswitch

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/host/vswitch/vswitchdb"
)

// ExternalIDs returns a copy of the Open_vSwitch row's external_ids, waiting for the row
// of a fresh database as SetExternalIDs does.
func (c *Client) ExternalIDs(ctx context.Context) (map[string]string, error) {
	row, err := c.root(ctx)
	if err != nil {
		return nil, err
	}
	return maps.Clone(row.ExternalIDs), nil
}

// SetExternalIDs merges ids into the Open_vSwitch row's external_ids, where
// ovn-controller reads its configuration (system-id, ovn-remote, ovn-encap-ip,
// ovn-bridge-mappings, …): each given key gets its value, a key given with value ""
// is removed, and every other key stays as it is, whoever set it. It reports whether
// anything changed; nothing is sent when nothing would. Without the row (a database
// OVS has not initialised yet) it waits for it until the context's deadline, or 10 s.
func (c *Client) SetExternalIDs(ctx context.Context, ids map[string]string) (bool, error) {
	if err := checkKeys("Open_vSwitch external_ids", ids); err != nil {
		return false, err
	}
	row, err := c.root(ctx)
	if err != nil {
		return false, err
	}
	m := &vswitchdb.OpenvSwitch{UUID: row.UUID}
	muts := mapMutations(&m.ExternalIDs, row.ExternalIDs, ids)
	if len(muts) == 0 {
		return false, nil
	}
	ops, err := c.ovs.Where(m).Mutate(m, muts...)
	if err != nil {
		return false, fmt.Errorf("build update of Open_vSwitch external_ids %v: %w", ids, err)
	}
	if err := c.transact(ctx, fmt.Sprintf("set Open_vSwitch external_ids %v", ids), ops); err != nil {
		return false, err
	}
	return true, nil
}

// mapMutations returns the mutations of a map column (field points into the model being
// mutated) that merge want into current, the cached value: keys wanted "" are deleted,
// keys whose value differs are deleted and inserted, and nothing else is touched.
// Mutating rather than replacing the column keeps keys another client writes meanwhile.
// No mutations means nothing to do.
//
// A key to insert is always deleted first, even when the cache says it is absent: an
// OVSDB map insert leaves an existing key's value alone, so if another client set the
// key a moment ago (the cache not having seen it yet), a bare insert would be silently
// ignored. (Tests met exactly this: ovs-vsctl set a key just before our first call.)
func mapMutations(field *map[string]string, current, want map[string]string) []model.Mutation {
	var del []string
	ins := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v := want[k]
		cur, ok := current[k]
		switch {
		case v == "" && ok:
			del = append(del, k)
		case v != "" && (!ok || cur != v):
			del = append(del, k)
			ins[k] = v
		}
	}
	var muts []model.Mutation
	if len(del) > 0 {
		muts = append(muts, model.Mutation{Field: field, Mutator: ovsdb.MutateOperationDelete, Value: del})
	}
	if len(ins) > 0 {
		muts = append(muts, model.Mutation{Field: field, Mutator: ovsdb.MutateOperationInsert, Value: ins})
	}
	return muts
}

// mergeMap returns current with want applied as mapMutations would apply it.
func mergeMap(current, want map[string]string) map[string]string {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range want {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// checkKeys rejects an empty key, which OVSDB would store but no reader could mean.
func checkKeys(what string, m map[string]string) error {
	if _, ok := m[""]; ok {
		return fmt.Errorf("%s: empty key (with value %q)", what, m[""])
	}
	return nil
}
