package ovn

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// WriteRows prints every row of s whole: each column ovnk manages (every plain column
// and the references it keeps), one per line, tables in the registry's order and rows
// by key. Sets are sorted, so the text of a compiled zone and of an OwnedSnapshot of
// the NB holding it are equal exactly when the rows are. Columns OVN writes and
// references ovnk leaves to others are not printed.
func WriteRows(w io.Writer, s *rows.Set) error {
	var b strings.Builder
	for _, t := range setTables(s) {
		list := reflect.ValueOf(t.rows).Elem()
		keyed := make([]reflect.Value, list.Len())
		for i := range keyed {
			keyed[i] = list.Index(i).Elem()
		}
		slices.SortFunc(keyed, func(a, b reflect.Value) int {
			return strings.Compare(a.FieldByName("UUID").String(), b.FieldByName("UUID").String())
		})
		for _, v := range keyed {
			meta := tableByType[v.Type()]
			fmt.Fprintf(&b, "%s %s\n", t.name, v.FieldByName("UUID").String())
			var fields []int
			fields = append(fields, meta.plain...)
			for f := range meta.children {
				fields = append(fields, f)
			}
			for f := range meta.weak {
				fields = append(fields, f)
			}
			cols := make([]string, 0, len(fields))
			for _, f := range fields {
				cols = append(cols, fmt.Sprintf("    %s: %s", v.Type().Field(f).Tag.Get("ovsdb"), columnText(v.Field(f))))
			}
			slices.Sort(cols)
			for _, c := range cols {
				b.WriteString(c + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// columnText writes one column's value as ovn-nbctl list would: strings quoted, sets in
// brackets and maps in braces, both sorted; an empty optional value is [].
func columnText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return "[]"
		}
		return columnText(v.Elem())
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = columnText(v.Index(i))
		}
		slices.Sort(items)
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Map:
		items := make([]string, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			items = append(items, columnText(it.Key())+"="+columnText(it.Value()))
		}
		slices.Sort(items)
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v.Interface())
}
