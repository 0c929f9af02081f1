package nbfake

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/ovn-kubernetes/libovsdb/database"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
	"github.com/ovn-kubernetes/libovsdb/ovsdb/serverdb"
)

// serverDatabase is the name of the database in which an OVSDB server describes the
// databases it serves.
const serverDatabase = "_Server"

// announceDatabase writes the _Server database's row for the database named name: a
// standalone, connected database, which is the leader by definition. A client that asks
// for the leader only (ovn.NBConfig.LeaderOnly) reads that row before anything else.
func announceDatabase(db database.Database, name string) error {
	row := ovsdb.Row{"name": name, "model": serverdb.DatabaseModelStandalone, "connected": true, "leader": true}
	results, update := db.NewTransaction(serverDatabase).Transact(ovsdb.Operation{
		Op: ovsdb.OperationInsert, Table: serverdb.DatabaseTable, Row: row,
	})
	if err := firstError(results); err != nil {
		return fmt.Errorf("announce database %s in %s: %w", name, serverDatabase, err)
	}
	return db.Commit(serverDatabase, uuid.New(), update)
}

// firstError is the error of the first failed operation result, or nil.
func firstError(results []*ovsdb.OperationResult) error {
	for _, r := range results {
		if r != nil && r.Error != "" {
			return fmt.Errorf("%s: %s", r.Error, r.Details)
		}
	}
	return nil
}
