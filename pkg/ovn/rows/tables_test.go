package rows

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// modelType is the struct type of t's rows.
func modelType(t Table) reflect.Type {
	return reflect.TypeOf(t.Slice(&Set{})).Elem().Elem().Elem()
}

// fieldOf returns the field of struct v whose ovsdb tag is column.
func fieldOf(v reflect.Value, column string) reflect.Value {
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Tag.Get("ovsdb") == column {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// The columns OVN writes (northd, ovn-controller) and the references to rows another
// parent owns: pinned here, since an entry that moved a column among them would
// silently change what ovnk writes.
var (
	writtenByOVN = map[string]bool{"Logical_Switch_Port.up": true, "Logical_Switch_Port.dynamic_addresses": true, "Logical_Router_Port.status": true}
	weakRefs     = map[string]bool{"Port_Group.ports": true}
)

// TestEveryColumnOnce holds every entry to the NB schema the models come from: each
// modelled column is named exactly once, as a plain column, a managed reference, a
// reference left to others or a column OVN writes; plain columns are no references,
// managed references point at the table they name, and only references are left to
// others.
func TestEveryColumnOnce(t *testing.T) {
	seenTables := map[string]bool{}
	seenOVN := map[string]bool{}
	defer func() {
		for c := range writtenByOVN {
			if !seenOVN[c] {
				t.Errorf("%s is written by OVN, but its entry has ovnk manage it", c)
			}
		}
	}()
	for _, table := range Tables {
		name := table.Name()
		if seenTables[name] {
			t.Errorf("table %s has two entries", name)
		}
		seenTables[name] = true
		ts, ok := schema.Tables[name]
		if !ok {
			t.Errorf("table %s is not in the schema", name)
			continue
		}
		refTable := func(column string) string {
			cs := ts.Column(column)
			if cs == nil {
				return ""
			}
			if ref, _ := cs.TypeObj.Key.RefTable(); ref != "" {
				return ref
			}
			if cs.TypeObj.Value != nil {
				ref, _ := cs.TypeObj.Value.RefTable()
				return ref
			}
			return ""
		}
		named := map[string]string{}
		name1 := func(column, role string) {
			if prev, dup := named[column]; dup {
				t.Errorf("%s.%s is named twice: %s and %s", name, column, prev, role)
			}
			named[column] = role
			if ts.Column(column) == nil {
				t.Errorf("%s.%s (%s) is not in the schema", name, column, role)
			}
		}
		for _, c := range table.Columns() {
			name1(c, "plain")
			if ref := refTable(c); ref != "" {
				t.Errorf("%s.%s is a plain column, but the schema makes it a reference to %s", name, c, ref)
			}
		}
		for _, r := range table.Refs() {
			name1(r.Name, "reference")
			if ref := refTable(r.Name); ref != r.Table {
				t.Errorf("%s.%s refers to %q in the schema, the entry says %q", name, r.Name, ref, r.Table)
			}
		}
		others, ovn := table.ignored()
		for _, c := range others {
			name1(c, "left to others")
			if refTable(c) == "" {
				t.Errorf("%s.%s is left to others, but it is no reference", name, c)
			}
		}
		for _, c := range ovn {
			name1(c, "written by OVN")
			seenOVN[name+"."+c] = true
			if !writtenByOVN[name+"."+c] {
				t.Errorf("%s.%s is said to be written by OVN: ovnk would stop managing it", name, c)
			}
		}
		for _, r := range table.Refs() {
			if r.Weak != weakRefs[name+"."+r.Name] {
				t.Errorf("%s.%s: weak %t, want %t", name, r.Name, r.Weak, !r.Weak)
			}
		}
		mt := modelType(table)
		for i := 0; i < mt.NumField(); i++ {
			col := mt.Field(i).Tag.Get("ovsdb")
			if _, ok := named[col]; !ok && col != "_uuid" {
				t.Errorf("%s.%s is in the model but its entry does not say what it is to ovnk", name, col)
			}
		}
	}
}

// nonZero returns a value of type typ that differs from its zero value.
func nonZero(typ reflect.Type) reflect.Value {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(typ.Elem()))
		v.Elem().Set(nonZero(typ.Elem()))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(typ, 0, 1), nonZero(typ.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(typ))
		v.SetMapIndex(nonZero(typ.Key()), nonZero(typ.Elem()))
	default:
		panic(fmt.Sprintf("no value for %s", typ))
	}
	return v
}

// TestColumnsReachTheirFields changes one column at a time in a row and requires
// Changed to report exactly that column's field, copied, and Values to read it; every
// reference to point at its own field; SetUUID to set _uuid; Clone to copy.
func TestColumnsReachTheirFields(t *testing.T) {
	for _, table := range Tables {
		mt := modelType(table)
		newRow := func() (model.Model, reflect.Value) {
			v := reflect.New(mt)
			return v.Interface().(model.Model), v.Elem()
		}
		for i, col := range table.Columns() {
			cur, cv := newRow()
			want, wv := newRow()
			fieldOf(wv, col).Set(nonZero(fieldOf(wv, col).Type()))
			if got := table.Values(want)[i]; !reflect.DeepEqual(got, fieldOf(wv, col).Interface()) {
				t.Errorf("%s.%s: Values reads %v, the field holds %v", table.Name(), col, got, fieldOf(wv, col).Interface())
			}
			changed := table.Changed(cur, want)
			if len(changed) != 1 || reflect.ValueOf(changed[0]).Pointer() != fieldOf(cv, col).Addr().Pointer() {
				t.Errorf("%s.%s: Changed returns %v, want the column's field alone", table.Name(), col, changed)
				continue
			}
			if !reflect.DeepEqual(cv.Interface(), wv.Interface()) {
				t.Errorf("%s.%s: Changed did not copy the value", table.Name(), col)
			}
			if again := table.Changed(cur, want); len(again) != 0 {
				t.Errorf("%s.%s: equal rows still differ in %v", table.Name(), col, again)
			}
		}
		for i, r := range table.Refs() {
			m, v := newRow()
			if got, want := table.RefField(m, i), fieldOf(v, r.Name).Addr().Interface().(*[]string); got != want {
				t.Errorf("%s.%s: RefField points elsewhere", table.Name(), r.Name)
			}
		}
		m, v := newRow()
		table.SetUUID(m, "u1")
		if got := fieldOf(v, "_uuid").String(); got != "u1" {
			t.Errorf("%s: SetUUID set %q", table.Name(), got)
		}
		c := table.Clone(m)
		table.SetUUID(c, "u2")
		if fieldOf(v, "_uuid").String() != "u1" || reflect.ValueOf(c).Elem().Type() != mt {
			t.Errorf("%s: Clone is not a copy", table.Name())
		}
	}
}

// TestSetsAndEmptiness: sets compare without order and with repetition, and an empty
// set, map or optional value equals a nil one.
func TestSetsAndEmptiness(t *testing.T) {
	for _, tc := range []struct {
		a, b  []string
		equal bool
	}{
		{nil, []string{}, true},
		{[]string{"a", "b"}, []string{"b", "a"}, true},
		{[]string{"a", "a", "b"}, []string{"a", "b", "b"}, false},
		{[]string{"a"}, []string{"b"}, false},
		{[]string{"a"}, nil, false},
	} {
		if got := SameSet(tc.a, tc.b); got != tc.equal {
			t.Errorf("SameSet(%q, %q) = %t", tc.a, tc.b, got)
		}
	}
	if !equalMaps(nil, map[string]string{}) || equalMaps(map[string]string{"a": "1"}, map[string]string{"a": "2"}) {
		t.Error("equalMaps")
	}
	cur, want := &nbdb.LogicalSwitchPort{}, &nbdb.LogicalSwitchPort{Addresses: []string{}, Options: map[string]string{}}
	if changed := switchPortTable.Changed(cur, want); len(changed) != 0 {
		t.Errorf("empty and nil differ: %v", changed)
	}
	x, y := "x", "x"
	if changed := switchPortTable.Changed(&nbdb.LogicalSwitchPort{Peer: &x}, &nbdb.LogicalSwitchPort{Peer: &y}); len(changed) != 0 {
		t.Errorf("two pointers to equal values differ: %v", changed)
	}
	if !slices.Equal(switchTable.Columns(), []string{"external_ids", "name", "other_config"}) {
		t.Errorf("switch columns %v", switchTable.Columns())
	}
}
