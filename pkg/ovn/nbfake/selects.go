package nbfake

import (
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// shapeSelects gives the rows a select returns the columns ovsdb-server gives them:
// those the select names, or every column when it names none, each at its value or
// its default (libovsdb returns every column but those at their default). _uuid stays
// in every row, named or not: libovsdb's server reads the rows of a new monitor
// through a select of the monitored columns and needs it. No row has _version:
// libovsdb keeps no row versions.
func shapeSelects(schema *ovsdb.DatabaseSchema, ops []ovsdb.Operation, results []*ovsdb.OperationResult) {
	for i, op := range ops {
		if op.Op != ovsdb.OperationSelect || i >= len(results) || results[i] == nil {
			continue
		}
		table := schema.Table(op.Table)
		columns := []string{"_uuid"}
		if len(op.Columns) > 0 {
			columns = append(columns, op.Columns...)
		} else {
			for name := range table.Columns {
				columns = append(columns, name)
			}
		}
		for j, row := range results[i].Rows {
			shaped := make(ovsdb.Row, len(columns))
			for _, name := range columns {
				if v, ok := row[name]; ok {
					shaped[name] = v
				} else if col := table.Column(name); col != nil {
					shaped[name] = emptyDatum(col)
				}
			}
			results[i].Rows[j] = shaped
		}
	}
}

// emptyDatum is a column's value when nothing was written to it.
func emptyDatum(col *ovsdb.ColumnSchema) any {
	if d, ok := defaultDatum(col); ok {
		return d
	}
	if col.Type == ovsdb.TypeMap {
		return ovsdb.OvsMap{GoMap: map[any]any{}}
	}
	return ovsdb.OvsSet{GoSet: []any{}}
}
