package nbfake

import (
	"maps"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// checkOperation checks an operation against the schema as ovsdb-server does when it
// parses it, before anything is executed: the columns it names, the values it writes,
// the values it compares with and the mutations it asks for. An insert gets the
// default of every column that must hold a value and is left out, as ovsdb-server
// gives it; libovsdb would leave such a column empty.
func checkOperation(schema *ovsdb.DatabaseSchema, op *ovsdb.Operation) error {
	switch op.Op {
	case ovsdb.OperationInsert, ovsdb.OperationSelect, ovsdb.OperationUpdate,
		ovsdb.OperationMutate, ovsdb.OperationDelete, ovsdb.OperationWait:
	case ovsdb.OperationAbort:
		// libovsdb does not know it; ovsdb-server fails the transaction there.
		return &opError{kindAborted, "aborted by request"}
	case ovsdb.OperationAssert:
		// libovsdb's server has no locks (no lock method), so no client holds one.
		if op.Lock == nil {
			return syntaxError("assert names no lock")
		}
		return &opError{kindNotOwner, "asserted lock " + *op.Lock + " not held"}
	default:
		return nil
	}
	table := schema.Table(op.Table)
	if table == nil {
		return syntaxError("no table named %s", op.Table)
	}
	if err := checkConditions(op.Table, table, op.Where); err != nil {
		return err
	}
	switch op.Op {
	case ovsdb.OperationInsert:
		if err := checkRow(op.Table, table, op.Row); err != nil {
			return err
		}
		op.Row = withDefaults(table, op.Row)
	case ovsdb.OperationUpdate:
		return checkRow(op.Table, table, op.Row)
	case ovsdb.OperationMutate:
		for _, m := range op.Mutations {
			if err := checkMutation(op.Table, table, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRow checks the columns an insert or an update writes.
func checkRow(tableName string, table *ovsdb.TableSchema, row ovsdb.Row) error {
	for name, v := range row {
		col, err := writableColumn(tableName, table, name)
		if err != nil {
			return err
		}
		if err := checkDatum(name, col, v); err != nil {
			return err
		}
	}
	return nil
}

// writableColumn is the schema of a column an operation may write.
func writableColumn(tableName string, table *ovsdb.TableSchema, name string) (*ovsdb.ColumnSchema, error) {
	if name == "_uuid" || name == "_version" {
		return nil, constraintViolation("column %s of table %s is read-only", name, tableName)
	}
	col := table.Column(name)
	if col == nil {
		return nil, syntaxError("table %s has no column %s", tableName, name)
	}
	return col, nil
}

// withDefaults is row with the default of each column that must hold a value and that
// row leaves out.
func withDefaults(table *ovsdb.TableSchema, row ovsdb.Row) ovsdb.Row {
	out := maps.Clone(row)
	if out == nil {
		out = ovsdb.Row{}
	}
	for name, col := range table.Columns {
		if _, ok := out[name]; ok {
			continue
		}
		if v, ok := defaultDatum(col); ok {
			out[name] = v
		}
	}
	return out
}

// checkConditions checks that every condition names a column and compares it with
// atoms the column may hold: ovsdb-server refuses to compare a column with a value
// outside its enum as it refuses to store one.
func checkConditions(tableName string, table *ovsdb.TableSchema, where []ovsdb.Condition) error {
	for _, c := range where {
		if c.Column == "_uuid" || c.Column == "_version" {
			if err := checkAtomKind(c.Column, ovsdb.TypeUUID, c.Value); err != nil {
				return err
			}
			continue
		}
		col := table.Column(c.Column)
		if col == nil {
			return syntaxError("table %s has no column %s", tableName, c.Column)
		}
		elems, err := elements(c.Column, col, c.Value)
		if err != nil {
			return err
		}
		for _, e := range elems {
			if err := checkAtom(c.Column, col.TypeObj.Key, e.key); err != nil {
				return err
			}
			if col.Type == ovsdb.TypeMap {
				if err := checkAtom(c.Column, col.TypeObj.Value, e.value); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkMutation checks a mutation's column, mutator and argument. What the mutation
// leaves in the column is checked after the transaction (checkStored).
func checkMutation(tableName string, table *ovsdb.TableSchema, m ovsdb.Mutation) error {
	col, err := writableColumn(tableName, table, m.Column)
	if err != nil {
		return err
	}
	// libovsdb holds such a column in a pointer, and its mutations take the pointer for
	// a wrong type; refusing them here says so instead of a confusing type error.
	if col.Type != ovsdb.TypeMap && col.TypeObj.Min() == 0 && col.TypeObj.Max() == 1 {
		return notSupported("the fake cannot mutate column %s of table %s, which holds at most one value: write it with update", m.Column, tableName)
	}
	switch m.Mutator {
	case ovsdb.MutateOperationInsert, ovsdb.MutateOperationDelete:
		arg := *col
		// A deletion from a map may name only the keys.
		if col.Type == ovsdb.TypeMap && m.Mutator == ovsdb.MutateOperationDelete {
			if _, isMap := m.Value.(ovsdb.OvsMap); !isMap {
				arg = ovsdb.ColumnSchema{Type: ovsdb.TypeSet, TypeObj: &ovsdb.ColumnType{Key: col.TypeObj.Key}}
			}
		}
		elems, err := elements(m.Column, &arg, m.Value)
		if err != nil {
			return err
		}
		return checkElements(m.Column, &arg, elems)
	default:
		// Arithmetic takes one number, applied to each member of the column.
		if col.Type == ovsdb.TypeMap || (col.TypeObj.Key.Type != ovsdb.TypeInteger && col.TypeObj.Key.Type != ovsdb.TypeReal) {
			return syntaxError("type mismatch: %q may not be applied to column %s", m.Mutator, m.Column)
		}
		return checkAtomKind(m.Column, col.TypeObj.Key.Type, m.Value)
	}
}
