package nbfake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
	"github.com/ovn-kubernetes/libovsdb/ovsdb/serverdb"
	"github.com/ovn-kubernetes/libovsdb/server"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// NB is a Northbound database in memory, served on a unix socket.
type NB struct {
	socket string
	db     *validatingDatabase
	model  model.DatabaseModel
	server *server.OvsdbServer
	// served is closed when the server has stopped accepting connections; err says why.
	served chan struct{}
	err    error
}

// readyTimeout bounds how long the server may take to listen.
const readyTimeout = 10 * time.Second

// Start starts an empty Northbound on a socket in a temporary directory of the test
// and stops it when the test ends. Connect to it with ovn.ConnectNB and Endpoint.
func Start(tb testing.TB) *NB {
	tb.Helper()
	// A unix socket path is limited to about 100 bytes, which a deep test name in
	// t.TempDir() can exceed; os.MkdirTemp gives a short one.
	dir, err := os.MkdirTemp("", "nbfake-")
	if err != nil {
		tb.Fatalf("directory for the fake NB's socket: %v", err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	nb, err := New(filepath.Join(dir, "nb.sock"))
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(nb.Close)
	return nb
}

// New serves an empty Northbound on the unix socket at path, which must not exist,
// until Close.
func New(path string) (*NB, error) {
	nbModel, err := databaseModel(nbdb.FullDatabaseModel, nbdb.Schema())
	if err != nil {
		return nil, err
	}
	serverModel, err := databaseModel(serverdb.FullDatabaseModel, serverdb.Schema())
	if err != nil {
		return nil, err
	}
	db := newValidatingDatabase(nbModel, serverModel)
	srv, err := server.NewOvsdbServer(db, nil, nbModel, serverModel)
	if err != nil {
		return nil, fmt.Errorf("create the fake NB's server: %w", err)
	}
	if err := announceDatabase(db, nbModel.Schema.Name); err != nil {
		return nil, err
	}
	nb := &NB{socket: path, db: db, model: nbModel, server: srv, served: make(chan struct{})}
	go func() {
		nb.err = srv.Serve("unix", path)
		close(nb.served)
	}()
	if err := nb.waitReady(); err != nil {
		srv.Close()
		return nil, err
	}
	return nb, nil
}

// waitReady waits until the server listens, or says why it never will.
func (nb *NB) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for !nb.server.Ready() {
		select {
		case <-nb.served:
			return fmt.Errorf("serve the fake NB on %s: %w", nb.socket, nb.err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the fake NB did not listen on %s within %v", nb.socket, readyTimeout)
		}
	}
	return nil
}

// databaseModel pairs a database's client model with its schema, as the server needs.
func databaseModel(clientModel func() (model.ClientDBModel, error), schema ovsdb.DatabaseSchema) (model.DatabaseModel, error) {
	cm, err := clientModel()
	if err != nil {
		return model.DatabaseModel{}, fmt.Errorf("model of database %s: %w", schema.Name, err)
	}
	dm, errs := model.NewDatabaseModel(schema, cm)
	if len(errs) > 0 {
		return model.DatabaseModel{}, fmt.Errorf("model of database %s: %w", schema.Name, errors.Join(errs...))
	}
	return dm, nil
}

// Endpoint is the fake's OVSDB connection string, unix:PATH.
func (nb *NB) Endpoint() string { return "unix:" + nb.socket }

// Close stops accepting connections; it may be called more than once. Connections
// already open stay until their clients close them: libovsdb's server does not track
// them.
func (nb *NB) Close() {
	nb.server.Close()
	<-nb.served
}
