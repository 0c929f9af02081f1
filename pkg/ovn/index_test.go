package ovn

import (
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

func ownedSwitch(uuid, id string) *nbdb.LogicalSwitch {
	return &nbdb.LogicalSwitch{UUID: uuid, Name: id, ExternalIDs: map[string]string{
		rows.OwnerControllerKey: rows.OwnerController, rows.IDKey: id}}
}

// modelOf keeps a missing row nil as an interface, as the cache hands it over.
func modelOf(s *nbdb.LogicalSwitch) model.Model {
	if s == nil {
		return nil
	}
	return s
}

// currentUUID is the UUID the index says holds id, "" for none.
func currentUUID(x *ownedIndex, id string) string {
	e, ok := x.current(id)
	if !ok {
		return ""
	}
	return e.uuid()
}

// TestIndexFollowsTheCachesEvents replays the cache's events as libovsdb hands them
// over, including those queued before a rebuild that read their rows already.
func TestIndexFollowsTheCachesEvents(t *testing.T) {
	const table = "Logical_Switch"
	x := emptyIndex()
	steps := []struct {
		what      string
		old, m    *nbdb.LogicalSwitch
		wantID    string // identity to look up
		wantUUID  string // "" when no row holds it
		wantDirty bool
		wantRoots int
	}{
		{"insert", nil, ownedSwitch("u2", "LS:a"), "LS:a", "u2", true, 1},
		{"a duplicate of lower UUID takes over", nil, ownedSwitch("u1", "LS:a"), "LS:a", "u1", true, 2},
		{"the lower one goes: the other holds it again", ownedSwitch("u1", "LS:a"), nil, "LS:a", "u2", true, 1},
		{"another owner takes the row over", ownedSwitch("u2", "LS:a"), &nbdb.LogicalSwitch{UUID: "u2", Name: "LS:a"}, "LS:a", "", true, 0},
		{"a foreign row changes", &nbdb.LogicalSwitch{UUID: "u2", Name: "LS:a"}, &nbdb.LogicalSwitch{UUID: "u2", Name: "x"}, "LS:a", "", false, 0},
		{"identity changes", nil, ownedSwitch("u3", "LS:b"), "LS:b", "u3", true, 1},
		{"… to another", ownedSwitch("u3", "LS:b"), ownedSwitch("u3", "LS:c"), "LS:b", "", true, 1},
		{"an update of a row never seen is one gone before a rebuild", ownedSwitch("u9", "LS:z"), ownedSwitch("u9", "LS:z"), "LS:z", "", false, 1},
		{"so is its delete", ownedSwitch("u9", "LS:z"), nil, "LS:z", "", false, 1},
	}
	for _, s := range steps {
		x.clean()
		x.event(table, modelOf(s.old), modelOf(s.m))
		if got := currentUUID(x, s.wantID); got != s.wantUUID {
			t.Errorf("%s: %s is held by %q, want %q", s.what, s.wantID, got, s.wantUUID)
		}
		if dirty := len(x.dirty) > 0; dirty != s.wantDirty {
			t.Errorf("%s: %d identities dirty, want dirty = %t", s.what, len(x.dirty), s.wantDirty)
		}
		if len(x.roots) != s.wantRoots {
			t.Errorf("%s: %d owned roots, want %d", s.what, len(x.roots), s.wantRoots)
		}
	}
	if got := len(x.seen[table]); got != 2 {
		t.Errorf("the index counts %d rows of %s, want 2 (u2, u3)", got, table)
	}

	// An insert queued before a rebuild that already read the row counts it once.
	x.event(table, nil, ownedSwitch("u3", "LS:c"))
	if got := len(x.seen[table]); got != 2 {
		t.Errorf("a replayed insert: the index counts %d rows, want 2", got)
	}
	if x.duplicate(x.byUUID["u3"]) {
		t.Error("a replayed insert made its own row a duplicate")
	}
}

// TestIndexTakesEventsForRowsItReadNewer: an update queued before a rebuild arrives after
// it, naming the row's identity before the change the rebuild already read. The index
// follows the row it holds, and leaves another holder of the old identity alone.
func TestIndexTakesEventsForRowsItReadNewer(t *testing.T) {
	const table = "Logical_Switch"
	tbl := tableByName[table]
	x := emptyIndex()
	for _, sw := range []*nbdb.LogicalSwitch{ownedSwitch("u1", "LS:b"), ownedSwitch("u2", "LS:a")} {
		x.seen[table][sw.UUID] = true
		x.add(entry{sw, tbl}, false)
	}
	x.clean()
	x.event(table, ownedSwitch("u1", "LS:a"), ownedSwitch("u1", "LS:b"))
	if got := currentUUID(x, "LS:b"); got != "u1" {
		t.Errorf("LS:b is held by %q, want u1", got)
	}
	if got := currentUUID(x, "LS:a"); got != "u2" {
		t.Errorf("LS:a, held by u2 all along, is held by %q", got)
	}

	// The same with nobody else holding the old identity: nothing to trip on.
	x = emptyIndex()
	x.seen[table]["u1"] = true
	x.add(entry{ownedSwitch("u1", "LS:b"), tbl}, false)
	x.event(table, ownedSwitch("u1", "LS:a"), ownedSwitch("u1", "LS:b"))
	if got := currentUUID(x, "LS:b"); got != "u1" {
		t.Errorf("LS:b is held by %q, want u1", got)
	}
}

// TestIndexKeepsWhatWasAppliedThroughAnUpdate: an update of a row that stays ovnk's
// under its identity (northd writing a port's up, say) marks it changed but keeps the
// identity's record; a duplicate updated in place stays one entry.
func TestIndexKeepsWhatWasAppliedThroughAnUpdate(t *testing.T) {
	const table = "Logical_Switch"
	tbl := tableByName[table]
	x := emptyIndex()
	x.event(table, nil, ownedSwitch("u1", "LS:a"))
	x.event(table, nil, ownedSwitch("u2", "LS:a"))
	want := ownedSwitch("LS:a", "LS:a") // a desired row: its key is its identity
	x.applied([]entry{{want, tbl}}, nil)
	x.clean()
	changed := ownedSwitch("u1", "LS:a")
	changed.OtherConfig = map[string]string{"subnet": "10.0.0.0/24"}
	x.event(table, ownedSwitch("u1", "LS:a"), changed)
	h := x.byID["LS:a"]
	if h == nil {
		t.Fatal("an update of a row under its identity dropped the identity's record")
	}
	if h.applied != want || !h.dirty || h.e.m != changed {
		t.Fatalf("after an update: applied %v, dirty %t, row %v; want the record kept, dirty, holding the new row", h.applied, h.dirty, h.e.m)
	}
	x.event(table, ownedSwitch("u2", "LS:a"), ownedSwitch("u2", "LS:a"))
	if got := x.dups["LS:a"]; len(got) != 2 {
		t.Errorf("duplicates of LS:a: %v, want u1 and u2 once each", got)
	}
}
