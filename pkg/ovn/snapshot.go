package ovn

import (
	"context"
	"fmt"
	"reflect"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Snapshot copies the tables of rows.Set from the client's cache. The rows keep their
// real UUIDs, so references between them resolve within the set. The copy is taken
// table by table from a cache that may be updating: callers that need one consistent
// view take it while no transaction is expected, or compare two snapshots.
func Snapshot(ctx context.Context, c client.Client) (*rows.Set, error) {
	s := &rows.Set{}
	for _, t := range setTables(s) {
		if err := c.List(ctx, t.rows); err != nil {
			return nil, fmt.Errorf("snapshot NB table %s: %w", t.name, err)
		}
	}
	s.Sort()
	return s, nil
}

// setTable is a table a rows.Set holds: its OVSDB name, and a pointer to the set's
// slice of its rows.
type setTable struct {
	name string
	rows any
}

// setTables are the tables of s, for filling it from a cache or a dump. It is the one
// list of the tables ovnk manages: the reconciler's column rules and the tables it
// reads are derived from it, so a table is added here and in rows.Set.
func setTables(s *rows.Set) []setTable {
	return []setTable{
		{"Logical_Switch", &s.Switches},
		{"Logical_Switch_Port", &s.SwitchPorts},
		{"Logical_Router", &s.Routers},
		{"Logical_Router_Port", &s.RouterPorts},
		{"Logical_Router_Static_Route", &s.Routes},
		{"Logical_Router_Policy", &s.Policies},
		{"NAT", &s.NATs},
		{"Gateway_Chassis", &s.GatewayChassis},
		{"ACL", &s.ACLs},
		{"Port_Group", &s.PortGroups},
		{"Meter", &s.Meters},
		{"Meter_Band", &s.MeterBands},
	}
}

// OwnedSnapshot returns the rows ovnk owns, keyed by identity like the compiler's output:
// printed with package nbctl, a zone's OwnedSnapshot and its compiled rows give the same
// text exactly when the NB holds what the compiler wants. References to rows ovnk does
// not own are left out.
func OwnedSnapshot(ctx context.Context, c client.Client) (*rows.Set, error) {
	owned, err := ownedRows(ctx, c)
	if err != nil {
		return nil, err
	}
	identity := make(map[string]string, len(owned))
	for _, m := range owned {
		identity[uuidOf(m)] = identityOf(m)
	}
	s := &rows.Set{}
	slices := map[reflect.Type]reflect.Value{}
	for _, t := range setTables(s) {
		v := reflect.ValueOf(t.rows).Elem()
		slices[v.Type().Elem().Elem()] = v
	}
	for _, m := range owned {
		cp := reflect.New(reflect.TypeOf(m).Elem())
		cp.Elem().Set(reflect.ValueOf(m).Elem())
		cp.Elem().FieldByName("UUID").SetString(identity[uuidOf(m)])
		meta := metaOf(m)
		for _, refFields := range []map[int]string{meta.children, meta.weak} {
			for field := range refFields {
				var keys []string
				for _, ref := range refsOf(m, field) {
					if id, ok := identity[ref]; ok {
						keys = append(keys, id)
					}
				}
				cp.Elem().Field(field).Set(reflect.ValueOf(keys))
			}
		}
		list := slices[cp.Type().Elem()]
		list.Set(reflect.Append(list, cp))
	}
	s.Sort()
	return s, nil
}
