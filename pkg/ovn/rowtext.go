package ovn

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// WriteRows prints every row of s whole: each column ovnk manages (every plain column
// and the references it keeps), one per line, tables in the registry's order and rows
// by key. Sets are sorted, so the text of a compiled zone and of an OwnedSnapshot of
// the NB holding it are equal exactly when the rows are. Columns OVN writes and
// references ovnk leaves to others are not printed.
func WriteRows(w io.Writer, s *rows.Set) error {
	var b strings.Builder
	for _, t := range rows.Tables {
		models := t.Models(s)
		slices.SortFunc(models, func(a, b model.Model) int { return strings.Compare(uuidOf(a), uuidOf(b)) })
		names, refCols := t.Columns(), t.Refs()
		for _, m := range models {
			fmt.Fprintf(&b, "%s %s\n", t.Name(), uuidOf(m))
			cols := make([]string, 0, len(names)+len(refCols))
			for i, v := range t.Values(m) {
				cols = append(cols, fmt.Sprintf("    %s: %s", names[i], columnText(reflect.ValueOf(v))))
			}
			for i, rc := range refCols {
				cols = append(cols, fmt.Sprintf("    %s: %s", rc.Name, columnText(reflect.ValueOf(*t.RefField(m, i)))))
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
