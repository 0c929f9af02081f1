package nbfake

import (
	"slices"

	"github.com/ovn-kubernetes/libovsdb/database"
	"github.com/ovn-kubernetes/libovsdb/database/inmemory"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
	"github.com/ovn-kubernetes/libovsdb/updates"
)

// validatingDatabase is libovsdb's in-memory database whose transactions also check
// what ovsdb-server checks and libovsdb does not.
type validatingDatabase struct {
	database.Database
	models map[string]model.DatabaseModel // by database name
}

func newValidatingDatabase(models ...model.DatabaseModel) *validatingDatabase {
	clients := make(map[string]model.ClientDBModel, len(models))
	byName := make(map[string]model.DatabaseModel, len(models))
	for _, m := range models {
		clients[m.Schema.Name] = m.Client()
		byName[m.Schema.Name] = m
	}
	return &validatingDatabase{Database: inmemory.NewDatabase(clients, nil), models: byName}
}

func (db *validatingDatabase) NewTransaction(name string) database.Transaction {
	return &validatingTransaction{inner: db.Database.NewTransaction(name), db: db, name: name, model: db.models[name]}
}

// validatingTransaction checks every operation before libovsdb executes any (see
// checkOperation), and what mutations leave in their columns after (checkMutated).
// libovsdb's server commits a transaction only when no result holds an error, so a
// failed check leaves the database as it was.
type validatingTransaction struct {
	inner database.Transaction
	db    *validatingDatabase
	name  string
	model model.DatabaseModel
}

func (t *validatingTransaction) Transact(ops ...ovsdb.Operation) ([]*ovsdb.OperationResult, database.Update) {
	// The checks add defaults to inserts: the caller's operations stay as they were.
	checked := slices.Clone(ops)
	inserted := map[string]bool{} // UUIDs inserts of this transaction ask for
	for i := range checked {
		err := checkOperation(&t.model.Schema, &checked[i])
		if err == nil {
			err = t.checkInsertUUID(checked[i], inserted)
		}
		if err != nil {
			return failedAt(len(ops), i, err), updates.NewDatabaseUpdate(updates.ModelUpdates{}, nil)
		}
	}
	results, update := t.transactWithoutNoOps(checked)
	if firstError(results) != nil {
		return results, update
	}
	shapeSelects(&t.model.Schema, checked, results)
	if err := checkMutated(t.model, checked, update); err != nil {
		// RFC 7047: a transaction that cannot commit gets one result more than it has
		// operations, holding the error.
		return append(results, resultOf(err)), update
	}
	return results, update
}

// checkInsertUUID refuses an insert under a UUID a row of its table has, or another
// insert of the transaction asked for. libovsdb would accept it, tell the monitors of
// a second row under that UUID, and fail only when committing it.
func (t *validatingTransaction) checkInsertUUID(op ovsdb.Operation, inserted map[string]bool) error {
	if op.Op != ovsdb.OperationInsert || op.UUID == "" {
		return nil
	}
	key := op.Table + "/" + op.UUID
	if existing, err := t.db.Get(t.name, op.Table, op.UUID); inserted[key] || (err == nil && existing != nil) {
		return &opError{kindDuplicateUUID, "UUID " + op.UUID + " would duplicate a UUID already present in table " + op.Table}
	}
	inserted[key] = true
	return nil
}

// transactWithoutNoOps has libovsdb execute ops but their comments and commits, which
// it does not support and which change nothing in memory (ovsdb-server logs a comment,
// and a commit asks it to write to disk); their results are empty.
func (t *validatingTransaction) transactWithoutNoOps(ops []ovsdb.Operation) ([]*ovsdb.OperationResult, database.Update) {
	var executed []ovsdb.Operation
	var at []int // index in ops of each executed operation
	results := make([]*ovsdb.OperationResult, len(ops))
	for i, op := range ops {
		if op.Op == ovsdb.OperationComment || op.Op == ovsdb.OperationCommit {
			results[i] = &ovsdb.OperationResult{}
			continue
		}
		executed = append(executed, op)
		at = append(at, i)
	}
	inner, update := t.inner.Transact(executed...)
	for j, r := range inner {
		if j < len(at) {
			results[at[j]] = r
		} else {
			results = append(results, r) // the error of a transaction that cannot commit
		}
	}
	return results, update
}

// failedAt is the results of n operations of which operation i failed with err and
// none was executed. libovsdb's server reads every result before the failed one, so
// none may be nil; the others are empty, as a client decodes ovsdb-server's nulls.
func failedAt(n, i int, err error) []*ovsdb.OperationResult {
	results := make([]*ovsdb.OperationResult, n)
	for j := range results {
		results[j] = &ovsdb.OperationResult{}
	}
	results[i] = resultOf(err)
	return results
}

// resultOf is the operation result that reports err.
func resultOf(err error) *ovsdb.OperationResult {
	if e, ok := err.(*opError); ok {
		return e.result()
	}
	r := ovsdb.ResultFromError(err)
	return &r
}

// checkMutated checks, in every row the transaction changes, the columns that its
// mutations name: a mutation may leave a set too small or too large, or a number out
// of its range, which ovsdb-server refuses as a constraint violation.
//
// libovsdb's update does not say which rows a mutation changed, so every changed row
// is checked in those columns. That differs from ovsdb-server in one corner: a row
// inserted in the same transaction with such a column left at a default the schema
// does not allow (an enum's "", a 0 below a minimum) is refused too.
func checkMutated(m model.DatabaseModel, ops []ovsdb.Operation, update database.Update) error {
	mutated := map[string][]string{} // columns by table
	for _, op := range ops {
		if op.Op != ovsdb.OperationMutate {
			continue
		}
		for _, mu := range op.Mutations {
			if !slices.Contains(mutated[op.Table], mu.Column) {
				mutated[op.Table] = append(mutated[op.Table], mu.Column)
			}
		}
	}
	for table, columns := range mutated {
		err := update.ForEachModelUpdate(table, func(_ string, _, row model.Model) error {
			if row == nil {
				return nil
			}
			for _, name := range columns {
				v, err := columnValue(m, row, name)
				if err != nil {
					return err
				}
				if err := checkStored(name, m.Schema.Table(table).Column(name), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// columnValue is a row's value in column name, in OVSDB notation.
func columnValue(m model.DatabaseModel, row model.Model, name string) (any, error) {
	info, err := m.NewModelInfo(row)
	if err != nil {
		return nil, err
	}
	native, err := info.FieldByColumn(name)
	if err != nil {
		return nil, err
	}
	return ovsdb.NativeToOvs(info.Metadata.TableSchema.Column(name), native)
}
