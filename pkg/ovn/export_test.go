package ovn

// IndexSharing counts the owned rows of a table that the reconciler's index holds, and
// names (by UUID) the ones it holds as the client cache's very row, not a copy.
func (r *Reconciler) IndexSharing(table string) (held int, shared []string) {
	x := r.index
	x.mu.Lock()
	defer x.mu.Unlock()
	cached := x.caches[table].RowsShallow()
	for uuid, e := range x.byUUID {
		if e.t.Name() != table {
			continue
		}
		held++
		if cached[uuid] == e.m {
			shared = append(shared, uuid)
		}
	}
	return held, shared
}
