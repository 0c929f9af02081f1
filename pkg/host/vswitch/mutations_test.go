package vswitch

import (
	"fmt"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// TestMapMutations pins the merge of a map column, including the case the real-server
// tests can only meet by chance: a key the cache does not have yet may already be on the
// server, so it is deleted before it is inserted (a map insert never overwrites).
func TestMapMutations(t *testing.T) {
	cases := []struct {
		name             string
		current, want    map[string]string
		wantDel, wantIns string // fmt of the values, "" for no such mutation
	}{
		{"absent from the cache", nil, map[string]string{"k": "v"}, "[k]", "map[k:v]"},
		{"same value", map[string]string{"k": "v"}, map[string]string{"k": "v"}, "", ""},
		{"new value", map[string]string{"k": "v"}, map[string]string{"k": "w"}, "[k]", "map[k:w]"},
		{"deleted", map[string]string{"k": "v", "o": "x"}, map[string]string{"k": ""}, "[k]", ""},
		{"deleting an absent key", map[string]string{"o": "x"}, map[string]string{"k": ""}, "", ""},
		{"others untouched", map[string]string{"o": "x"}, map[string]string{"b": "2", "a": "1"}, "[a b]", "map[a:1 b:2]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var field map[string]string
			var del, ins string
			for _, m := range mapMutations(&field, tc.current, tc.want) {
				switch m.Mutator {
				case ovsdb.MutateOperationDelete:
					del = fmt.Sprint(m.Value)
				case ovsdb.MutateOperationInsert:
					ins = fmt.Sprint(m.Value)
				default:
					t.Errorf("unexpected mutator %s", m.Mutator)
				}
			}
			if del != tc.wantDel || ins != tc.wantIns {
				t.Errorf("delete %q insert %q, want delete %q insert %q", del, ins, tc.wantDel, tc.wantIns)
			}
		})
	}
}
