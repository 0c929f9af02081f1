package ovn

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// DumpSchemaVersion names the format of Dump. A change that is not backwards compatible
// gets a new version, so a plugin can read dumps of agents of another release.
const DumpSchemaVersion = "ovnk.dump/v1"

// Dump is a zone's NB contents as `ovnk-agent dump` prints them: every row of the tables
// ovnk programs or inspects, ovnk's and everyone else's. Each row is an object keyed by
// OVSDB column name ("_uuid", "name", "external_ids", …); a set is an array, a map an
// object, an optional value the value or null; references are UUIDs.
type Dump struct {
	SchemaVersion string                      `json:"schemaVersion"`
	Node          string                      `json:"node,omitempty"`
	Tables        map[string][]map[string]any `json:"tables"`
}

// dumpTables are the tables a dump holds, with the slice type each is listed into:
// every table of a row set, and the address sets ACL matches name.
var dumpTables = func() map[string]any {
	out := map[string]any{"Address_Set": []*nbdb.AddressSet{}}
	for _, t := range rows.Tables {
		out[t.Name()] = reflect.ValueOf(t.Slice(&rows.Set{})).Elem().Interface()
	}
	return out
}()

// TakeDump copies the dump tables from the client's cache. Rows are sorted by UUID.
func TakeDump(ctx context.Context, c client.Client, node string) (*Dump, error) {
	d := &Dump{SchemaVersion: DumpSchemaVersion, Node: node, Tables: map[string][]map[string]any{}}
	for table, empty := range dumpTables {
		list := reflect.New(reflect.TypeOf(empty))
		if err := c.List(ctx, list.Interface()); err != nil {
			return nil, fmt.Errorf("dump NB table %s: %w", table, err)
		}
		rowsOut := make([]map[string]any, 0, list.Elem().Len())
		for i := 0; i < list.Elem().Len(); i++ {
			rowsOut = append(rowsOut, columns(list.Elem().Index(i).Elem()))
		}
		sort.Slice(rowsOut, func(i, j int) bool { return rowsOut[i]["_uuid"].(string) < rowsOut[j]["_uuid"].(string) })
		d.Tables[table] = rowsOut
	}
	return d, nil
}

// columns maps a model's fields to their OVSDB column names, with nil sets and maps
// written as empty ones so every row of a table has the same shape.
func columns(v reflect.Value) map[string]any {
	out := make(map[string]any, v.NumField())
	t := v.Type()
	for i := 0; i < v.NumField(); i++ {
		col := t.Field(i).Tag.Get("ovsdb")
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.Slice && f.IsNil():
			out[col] = reflect.MakeSlice(f.Type(), 0, 0).Interface()
		case f.Kind() == reflect.Map && f.IsNil():
			out[col] = reflect.MakeMap(f.Type()).Interface()
		default:
			out[col] = f.Interface()
		}
	}
	return out
}

// Rows reads the dump's tables back into a row set, for the same printers and walkers
// that read compiled zones. Tables the set has no place for (address sets) are left
// out; DecodeTable reads them. A dump of another format version is refused, naming both.
func (d *Dump) Rows() (*rows.Set, error) {
	if d.SchemaVersion != DumpSchemaVersion {
		return nil, fmt.Errorf("dump format %q is not %q: use a kubectl ovnk of the agent's release", d.SchemaVersion, DumpSchemaVersion)
	}
	s := &rows.Set{}
	for _, t := range rows.Tables {
		if err := decodeRows(d.Tables[t.Name()], t.Slice(s)); err != nil {
			return nil, fmt.Errorf("dump table %s: %w", t.Name(), err)
		}
	}
	return s, nil
}

// DecodeTable fills *into, a slice of pointers to the table's model (such as
// *[]*nbdb.ACL), from the dump's rows of table. A table the dump lacks leaves it empty.
func (d *Dump) DecodeTable(table string, into any) error {
	if err := decodeRows(d.Tables[table], into); err != nil {
		return fmt.Errorf("dump table %s: %w", table, err)
	}
	return nil
}

// decodeRows fills *into, a slice of model pointers, from rows keyed by column name.
func decodeRows(in []map[string]any, into any) error {
	slice := reflect.ValueOf(into).Elem()
	elem := slice.Type().Elem().Elem()
	fields := map[string]int{}
	for i := 0; i < elem.NumField(); i++ {
		fields[elem.Field(i).Tag.Get("ovsdb")] = i
	}
	out := reflect.MakeSlice(slice.Type(), 0, len(in))
	for n, row := range in {
		v := reflect.New(elem)
		for col, val := range row {
			i, ok := fields[col]
			if !ok {
				continue // a column of a newer schema: nothing shows it yet
			}
			raw, err := json.Marshal(val)
			if err != nil {
				return fmt.Errorf("row %d column %s: %w", n, col, err)
			}
			if err := json.Unmarshal(raw, v.Elem().Field(i).Addr().Interface()); err != nil {
				return fmt.Errorf("row %d column %s: %w", n, col, err)
			}
		}
		out = reflect.Append(out, v)
	}
	slice.Set(out)
	return nil
}
