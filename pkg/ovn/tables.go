package ovn

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// tableMeta tells the reconciler how to treat a modelled table's columns.
type tableMeta struct {
	name string
	// root tables (switches, routers) are deleted explicitly; every other row lives as
	// long as a parent refers to it (OVSDB garbage-collects unreferenced non-root rows).
	root bool
	// plain holds the struct fields compared with and written to the NB.
	plain []int
	// children maps a reference field the reconciler manages to the child table.
	children map[int]string
	// weak maps a reference field to rows planned under another parent.
	weak map[int]string
	// weakTarget: some table refers to this one's rows weakly, so the plan records
	// where each of them is planned.
	weakTarget bool
	// indexed: the schema makes a column of this table unique (a port group's or a
	// meter's name), so a row of another owner can stand in the way of ours.
	indexed bool
}

// columnsOVNWrites are written by OVN itself (northd, ovn-controller), never by ovnk.
var columnsOVNWrites = map[string]bool{
	"Logical_Switch_Port.up":                true,
	"Logical_Switch_Port.dynamic_addresses": true,
	"Logical_Router_Port.status":            true,
}

// managedReferences are the reference columns through which ovnk's rows hang together.
// ovnk adds and removes only its own rows' references in them, by mutation, so rows
// another controller attached to an ovnk row keep their place. Every other reference
// column (load balancers, QoS, …) is left alone.
var managedReferences = map[string]string{
	"Logical_Switch.ports":                "Logical_Switch_Port",
	"Logical_Switch.acls":                 "ACL",
	"Logical_Router.ports":                "Logical_Router_Port",
	"Logical_Router.static_routes":        "Logical_Router_Static_Route",
	"Logical_Router.policies":             "Logical_Router_Policy",
	"Logical_Router.nat":                  "NAT",
	"Logical_Router_Port.gateway_chassis": "Gateway_Chassis",
	"Port_Group.acls":                     "ACL",
	"Meter.bands":                         "Meter_Band",
}

// weakReferences name rows that belong to another parent: a port group lists switch
// ports, which their switches own. The reconciler plans them with their parents and
// only points at them from here.
var weakReferences = map[string]string{
	"Port_Group.ports": "Logical_Switch_Port",
}

var tableByType = map[reflect.Type]*tableMeta{}

func init() {
	schema := nbdb.Schema()
	for _, st := range setTables(&rows.Set{}) {
		t := reflect.TypeOf(st.rows).Elem().Elem().Elem()
		name := st.name
		ts := schema.Tables[name]
		meta := &tableMeta{name: name, root: ts.IsRoot, indexed: len(ts.Indexes) > 0, children: map[int]string{}, weak: map[int]string{}}
		for i := 0; i < t.NumField(); i++ {
			col := t.Field(i).Tag.Get("ovsdb")
			if col == "_uuid" || columnsOVNWrites[name+"."+col] {
				continue
			}
			if child, ok := managedReferences[name+"."+col]; ok {
				meta.children[i] = child
				continue
			}
			if target, ok := weakReferences[name+"."+col]; ok {
				meta.weak[i] = target
				continue
			}
			cs := ts.Column(col)
			if cs == nil {
				panic(fmt.Sprintf("column %s.%s of the models is not in the schema", name, col))
			}
			if ref, _ := cs.TypeObj.Key.RefTable(); ref != "" {
				continue // a reference column ovnk does not manage
			}
			if cs.TypeObj.Value != nil {
				if ref, _ := cs.TypeObj.Value.RefTable(); ref != "" {
					continue
				}
			}
			meta.plain = append(meta.plain, i)
		}
		tableByType[t] = meta
	}
	for _, meta := range tableByType {
		for _, target := range weakReferences {
			meta.weakTarget = meta.weakTarget || meta.name == target
		}
	}
}

func metaOf(m model.Model) *tableMeta {
	meta := tableByType[reflect.TypeOf(m).Elem()]
	if meta == nil {
		panic(fmt.Sprintf("%T is not a table the reconciler manages", m))
	}
	return meta
}

// row is what every managed model offers through its generated getters; calling them
// avoids reflection on the reconciler's hot path.
type row interface {
	GetUUID() string
	GetExternalIDs() map[string]string
}

func uuidOf(m model.Model) string { return m.(row).GetUUID() }

func externalIDsOf(m model.Model) map[string]string { return m.(row).GetExternalIDs() }

// identityOf is the row's identity: its external-ID key, or for a desired row its key.
func identityOf(m model.Model) string { return externalIDsOf(m)[rows.IDKey] }

// refsOf returns the keys held in a reference field.
func refsOf(m model.Model, field int) []string {
	v := reflect.ValueOf(m).Elem().Field(field)
	return v.Interface().([]string)
}

// changedFields returns pointers to the plain fields of cur whose values differ from
// want's, after copying want's values into cur: cur is then ready to be written with
// exactly those columns. Empty and nil maps, slices and pointers compare equal.
func changedFields(cur, want model.Model) []any {
	meta := metaOf(want)
	cv, wv := reflect.ValueOf(cur).Elem(), reflect.ValueOf(want).Elem()
	var fields []any
	for _, i := range meta.plain {
		c, w := cv.Field(i), wv.Field(i)
		if equalColumn(c, w) {
			continue
		}
		c.Set(w)
		fields = append(fields, c.Addr().Interface())
	}
	return fields
}

func equalColumn(a, b reflect.Value) bool {
	// The common column types first, without reflection's generic comparison; scalars
	// are read without boxing them.
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Int:
		return a.Int() == b.Int()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	}
	switch av := a.Interface().(type) {
	case []string:
		return equalStringSets(av, b.Interface().([]string))
	case map[string]string:
		bv := b.Interface().(map[string]string)
		if len(av) != len(bv) {
			return false
		}
		for k, v := range av {
			if w, ok := bv[k]; !ok || w != v {
				return false
			}
		}
		return true
	case *string:
		bv := b.Interface().(*string)
		if av == nil || bv == nil {
			return av == nil && bv == nil
		}
		return *av == *bv
	}
	switch a.Kind() {
	case reflect.Map, reflect.Slice:
		if a.Len() == 0 && b.Len() == 0 {
			return true
		}
		if a.Kind() == reflect.Slice {
			return equalAsSets(a, b)
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return reflect.DeepEqual(a.Elem().Interface(), b.Elem().Interface())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// equalStringSets compares two string set columns: OVSDB keeps no order.
func equalStringSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 1 {
		return a[0] == b[0]
	}
	seen := make(map[string]int, len(a))
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}

// equalAsSets compares two set columns: OVSDB keeps no order.
func equalAsSets(a, b reflect.Value) bool {
	if a.Len() != b.Len() {
		return false
	}
	seen := map[string]int{}
	for i := 0; i < a.Len(); i++ {
		seen[fmt.Sprint(a.Index(i).Interface())]++
	}
	for i := 0; i < b.Len(); i++ {
		k := fmt.Sprint(b.Index(i).Interface())
		if seen[k] == 0 {
			return false
		}
		seen[k]--
	}
	return true
}

// describe names a row for error messages.
func describe(m model.Model) string {
	return strings.TrimSpace(metaOf(m).name + " " + identityOf(m))
}
