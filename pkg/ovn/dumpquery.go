package ovn

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// A Dump can also be taken without a libovsdb client: by one read-only transaction that
// any OVSDB client runs (`ovsdb-client query SERVER TRANSACTION`), whose results are then
// decoded here. That is how the plugin reads a zone served by a container that has
// ovsdb-client but no ovnk agent.

// dumpTableNames are the dump's tables, sorted: the order of DumpQuery's selects and so
// of the results DumpFromQuery reads.
var dumpTableNames = slices.Sorted(func(yield func(string) bool) {
	for t := range dumpTables {
		if !yield(t) {
			return
		}
	}
})

// DumpQuery returns the parameters of an OVSDB "transact" request (RFC 7047 4.1.3),
// ["OVN_Northbound", op, …], that selects every row of every table a Dump holds, one
// select per table, in one transaction. It only reads. The selects ask for all columns,
// so a server whose schema has more or fewer columns than the models answers all the
// same; DumpFromQuery keeps the modelled ones.
func DumpQuery() ([]byte, error) {
	params := []any{nbdb.Schema().Name}
	for _, t := range dumpTableNames {
		params = append(params, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: t})
	}
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode the NB dump query: %w", err)
	}
	return data, nil
}

// DumpFromQuery decodes the result of DumpQuery as a server returned it (the array of
// operation results, in OVSDB's wire format of ["uuid", …], ["set", …], ["map", …]) into
// the Dump TakeDump would have taken of the same database: the same tables, rows and
// column values. A failed select, or a result that does not answer DumpQuery, is an
// error naming the table.
func DumpFromQuery(node string, result []byte) (*Dump, error) {
	var results []*ovsdb.OperationResult
	if err := json.Unmarshal(result, &results); err != nil {
		return nil, fmt.Errorf("decode the NB's answer to the dump query: %w", err)
	}
	// A failed transaction answers with one result per operation, null after the one
	// that failed; more results than operations is not an answer to this query.
	if len(results) != len(dumpTableNames) {
		return nil, fmt.Errorf("the NB answered the dump query of %d tables with %d results", len(dumpTableNames), len(results))
	}
	db, err := nbDatabaseModel()
	if err != nil {
		return nil, err
	}
	d := &Dump{SchemaVersion: DumpSchemaVersion, Node: node, Tables: map[string][]map[string]any{}}
	for i, table := range dumpTableNames {
		r := results[i]
		switch {
		case r == nil:
			return nil, fmt.Errorf("the NB did not run the select of table %s: an earlier operation failed", table)
		case r.Error != "":
			return nil, fmt.Errorf("the NB refused the select of table %s: %s: %s", table, r.Error, r.Details)
		}
		out := make([]map[string]any, 0, len(r.Rows))
		for n := range r.Rows {
			m, err := modelFromRow(db, table, r.Rows[n])
			if err != nil {
				return nil, fmt.Errorf("NB table %s row %d: %w", table, n, err)
			}
			out = append(out, columns(reflect.ValueOf(m).Elem()))
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["_uuid"].(string) < out[j]["_uuid"].(string) })
		d.Tables[table] = out
	}
	return d, nil
}

// modelFromRow builds the model of a row as libovsdb's cache would, from its columns
// and its UUID.
func modelFromRow(db model.DatabaseModel, table string, row ovsdb.Row) (model.Model, error) {
	id, ok := row["_uuid"].(ovsdb.UUID)
	if !ok {
		return nil, fmt.Errorf("no _uuid: %v", row["_uuid"])
	}
	return model.CreateModel(db, table, &row, id.GoUUID)
}

// nbDatabaseModel is the models bound to the schema they were generated from, built
// once.
var nbDatabaseModel = sync.OnceValues(func() (model.DatabaseModel, error) {
	client, err := nbdb.FullDatabaseModel()
	if err != nil {
		return model.DatabaseModel{}, fmt.Errorf("build NB database model: %w", err)
	}
	db, errs := model.NewDatabaseModel(nbdb.Schema(), client)
	if len(errs) > 0 {
		return model.DatabaseModel{}, fmt.Errorf("bind the NB models to their schema: %v", errs)
	}
	return db, nil
})
