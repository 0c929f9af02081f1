package nbfake

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Format renders the rows of a database, table by table, as text that does not depend
// on the rows' UUIDs: two databases with the same content render the same, whichever
// server holds them and whatever UUIDs it picked. A reference reads as the referenced
// row's label, TABLE#N, N being the row's place in its table when rows are ordered by
// their content without references. A column holding its default (no members, or the
// one default atom of a column that must hold one) is left out, so a row reads the
// same whether its server lists every column or only those set; _version is left out
// too, as only ovsdb-server has it.
//
// Values are in the form a libovsdb client or server decodes them to (ovsdb.OvsSet,
// ovsdb.OvsMap, ovsdb.UUID, atoms), and a set of one element renders as that element,
// since OVSDB writes such a set either way.
func Format(tables map[string][]ovsdb.Row) string {
	labels := map[string]string{}
	ordered := map[string][]ovsdb.Row{}
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		type keyed struct {
			key string
			row ovsdb.Row
		}
		rows := make([]keyed, 0, len(tables[table]))
		for _, row := range tables[table] {
			rows = append(rows, keyed{formatRow(table, row, nil), row})
		}
		slices.SortStableFunc(rows, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
		for i, r := range rows {
			if u, ok := r.row["_uuid"].(ovsdb.UUID); ok {
				labels[u.GoUUID] = fmt.Sprintf("%s#%d", table, i)
			}
			ordered[table] = append(ordered[table], r.row)
		}
	}
	var b strings.Builder
	for _, table := range slices.Sorted(maps.Keys(ordered)) {
		for i, row := range ordered[table] {
			fmt.Fprintf(&b, "%s#%d %s\n", table, i, formatRow(table, row, labels))
		}
	}
	return b.String()
}

// formatRow renders a row's columns in name order. With nil labels every reference
// reads "*", which is how rows are ordered before they have labels.
func formatRow(table string, row ovsdb.Row, labels map[string]string) string {
	schema := nbSchema().Table(table)
	var cols []string
	for _, name := range slices.Sorted(maps.Keys(row)) {
		if name == "_uuid" || name == "_version" {
			continue
		}
		if schema != nil && isDefault(schema.Column(name), row[name]) {
			continue
		}
		cols = append(cols, name+"="+formatValue(row[name], labels))
	}
	return strings.Join(cols, " ")
}

// nbSchema is the schema the models were generated from, parsed once.
var nbSchema = sync.OnceValue(func() *ovsdb.DatabaseSchema {
	s := nbdb.Schema()
	return &s
})

// isDefault reports whether v is the value an insert that leaves col out gives it.
func isDefault(col *ovsdb.ColumnSchema, v any) bool {
	if col == nil {
		return false
	}
	switch v := v.(type) {
	case ovsdb.OvsSet:
		if len(v.GoSet) != 1 {
			return len(v.GoSet) == 0
		}
		return isDefault(col, v.GoSet[0])
	case ovsdb.OvsMap:
		return len(v.GoMap) == 0
	}
	d, ok := defaultDatum(col)
	return ok && normalized(d) == normalized(v)
}

// formatValue renders a value; labels as for formatRow.
func formatValue(v any, labels map[string]string) string {
	switch v := v.(type) {
	case ovsdb.OvsSet:
		if len(v.GoSet) == 1 {
			return formatValue(v.GoSet[0], labels)
		}
		elems := make([]string, 0, len(v.GoSet))
		for _, e := range v.GoSet {
			elems = append(elems, formatValue(e, labels))
		}
		slices.Sort(elems)
		return "[" + strings.Join(elems, " ") + "]"
	case ovsdb.OvsMap:
		pairs := make([]string, 0, len(v.GoMap))
		for k, e := range v.GoMap {
			pairs = append(pairs, formatValue(k, labels)+":"+formatValue(e, labels))
		}
		slices.Sort(pairs)
		return "{" + strings.Join(pairs, " ") + "}"
	case ovsdb.UUID:
		if labels == nil {
			return "*"
		}
		if l, ok := labels[v.GoUUID]; ok {
			return l
		}
		return "dangling:" + v.GoUUID
	case string:
		return fmt.Sprintf("%q", v)
	case float64:
		// JSON numbers decode as float64; an integer column's value prints as one.
		if v == math.Trunc(v) {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return fmt.Sprint(v)
	default:
		return fmt.Sprint(v)
	}
}
