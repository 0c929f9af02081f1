// Package ovn talks to OVN Northbound databases: it connects a libovsdb client that
// monitors exactly the tables and columns of the generated models.
package ovn

import (
	"context"
	"fmt"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovsdbconn"
)

// NBConfig says how to reach a Northbound database.
type NBConfig struct {
	// Endpoints in OVSDB connection format (unix:/run/ovn/ovnnb_db.sock, tcp:127.0.0.1:6641,
	// ssl:…). With several, the first that connects is used.
	Endpoints []string
	// LeaderOnly treats followers of a clustered database as down, so writes always go to
	// the leader; it is harmless against a standalone server.
	LeaderOnly bool
	// InactivityProbe is how long a quiet connection may stay silent before it is echoed
	// and, if the echo fails, reconnected. Zero disables the probe.
	InactivityProbe time.Duration
	// ConnectTimeout bounds each connection attempt, the first and every reconnect.
	ConnectTimeout time.Duration
}

// DefaultNBEndpoint is where ovn-central listens on a node.
const DefaultNBEndpoint = "unix:/var/run/ovn/ovnnb_db.sock"

// ConnectNB connects to the Northbound database and starts monitoring the modelled
// columns (see package ovsdbconn). The client reconnects by itself and re-monitors
// after a reconnect.
func ConnectNB(ctx context.Context, cfg NBConfig) (client.Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("no Northbound endpoint configured: give one such as %s", DefaultNBEndpoint)
	}
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build NB database model: %w", err)
	}
	return ovsdbconn.Connect(ctx, ovsdbconn.Config{
		Name:            "NB",
		Endpoints:       cfg.Endpoints,
		LeaderOnly:      cfg.LeaderOnly,
		InactivityProbe: cfg.InactivityProbe,
		ConnectTimeout:  cfg.ConnectTimeout,
	}, ovsdbconn.Database{Model: dbModel, Schema: nbdb.Schema()})
}

// ModelledColumns lists, sorted, the columns of table that the models hold.
func ModelledColumns(table string) []string { return ovsdbconn.Columns(nbdb.Schema(), table) }

// Transact commits ops as one OVSDB transaction, checking every operation's result.
func Transact(ctx context.Context, c client.Client, ops []ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	return ovsdbconn.Transact(ctx, c, ops)
}
