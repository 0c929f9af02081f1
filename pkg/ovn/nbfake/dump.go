package nbfake

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Rows returns every row of table with every column, _uuid included, in OVSDB notation
// (see Format), in no particular order. It reads the database directly, not through a
// client, so it shows what committed and nothing else.
func (nb *NB) Rows(table string) ([]ovsdb.Row, error) {
	models, err := nb.db.List(nb.model.Schema.Name, table)
	if err != nil {
		return nil, fmt.Errorf("list table %s of the fake NB: %w", table, err)
	}
	rows := make([]ovsdb.Row, 0, len(models))
	for _, m := range models {
		row := ovsdb.Row{}
		for name := range nb.model.Schema.Table(table).Columns {
			if row[name], err = columnValue(nb.model, m, name); err != nil {
				return nil, fmt.Errorf("column %s of a row of table %s: %w", name, table, err)
			}
		}
		if row["_uuid"], err = columnValue(nb.model, m, "_uuid"); err != nil {
			return nil, fmt.Errorf("uuid of a row of table %s: %w", table, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Dump renders the whole database with Format: tests compare it with what they expect,
// or print it when they fail.
func (nb *NB) Dump() (string, error) {
	tables := map[string][]ovsdb.Row{}
	for _, table := range slices.Sorted(maps.Keys(nb.model.Schema.Tables)) {
		rows, err := nb.Rows(table)
		if err != nil {
			return "", err
		}
		tables[table] = rows
	}
	return Format(tables), nil
}
