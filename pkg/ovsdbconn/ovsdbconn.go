// Package ovsdbconn connects libovsdb clients to OVSDB servers (the OVN Northbound and
// Southbound databases, the node's Open_vSwitch database) in one way: reconnecting on
// its own, and monitoring exactly the modelled tables and columns.
//
// Monitoring only the columns of the schema the models were generated from is what lets
// a client run against newer releases whose schemas have grown: the server never sends
// a column the models cannot hold.
package ovsdbconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Config says how to reach a database.
type Config struct {
	// Name names the database in errors ("NB", "SB", "OVS").
	Name string
	// Endpoints in OVSDB connection format (unix:/run/ovn/ovnnb_db.sock,
	// tcp:127.0.0.1:6641, ssl:…). With several, the first that connects is used.
	Endpoints []string
	// LeaderOnly treats followers of a clustered database as down, so writes always go
	// to the leader; it is harmless against a standalone server.
	LeaderOnly bool
	// InactivityProbe is how long a quiet connection may stay silent before it is
	// echoed and, if the echo fails, reconnected. Zero disables the probe.
	InactivityProbe time.Duration
	// ConnectTimeout bounds each connection attempt, the first and every reconnect;
	// zero means 10 s.
	ConnectTimeout time.Duration
}

// Database is what a client is built from: the models and the schema they were
// generated from.
type Database struct {
	Model  model.ClientDBModel
	Schema ovsdb.DatabaseSchema
}

// Connect connects to the database and monitors the modelled columns of every modelled
// table. The client keeps reconnecting (and re-monitoring) for as long as it lives.
func Connect(ctx context.Context, cfg Config, db Database) (client.Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("no %s endpoint configured", cfg.Name)
	}
	where := strings.Join(cfg.Endpoints, ",")
	timeout := cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	retry := backoff.NewExponentialBackOff()
	retry.MaxElapsedTime = 0 // keep trying: an agent outlives any database restart
	opts := []client.Option{
		client.WithLeaderOnly(cfg.LeaderOnly),
		client.WithReconnect(timeout, retry),
	}
	for _, ep := range cfg.Endpoints {
		opts = append(opts, client.WithEndpoint(ep))
	}
	if cfg.InactivityProbe > 0 {
		opts = append(opts, client.WithInactivityCheck(cfg.InactivityProbe, timeout, backoff.NewExponentialBackOff()))
	}
	c, err := client.NewOVSDBClient(db.Model, opts...)
	if err != nil {
		return nil, fmt.Errorf("create %s client for %s: %w", cfg.Name, where, err)
	}
	connectCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Connect(connectCtx); err != nil {
		return nil, fmt.Errorf("connect to %s %s: %w", cfg.Name, where, cause(err))
	}
	if _, err := c.Monitor(ctx, modelledMonitor(c, db)); err != nil {
		c.Close()
		return nil, fmt.Errorf("monitor %s %s: %w", cfg.Name, where, err)
	}
	return c, nil
}

// Connected reports whether c is connected to its server now. libovsdb's own
// Connected stays true from the loss of the server until a reconnect succeeds (it is
// cleared only by Disconnect and Close), while the client drops the lost connection
// at once: it then names no endpoint it is connected to.
func Connected(c client.Client) bool { return c.Connected() && c.CurrentEndpoint() != "" }

// cause is what is left of a connection error once the endpoint is named: libovsdb
// names the endpoint again, and the dial error a third time, so of a dial error only
// the operation and why remain. Other errors are returned as they are.
func cause(err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return fmt.Errorf("%s: %w", opErr.Op, opErr.Err)
	}
	return err
}

// modelledMonitor asks for every modelled table, restricted to the columns of the
// schema the models were generated from.
func modelledMonitor(c client.Client, db Database) *client.Monitor {
	tables := make([]string, 0, len(db.Model.Types()))
	for name := range db.Model.Types() {
		tables = append(tables, name)
	}
	sort.Strings(tables)
	m := c.NewMonitor()
	for _, name := range tables {
		m.Tables = append(m.Tables, client.TableMonitor{Table: name, Fields: Columns(db.Schema, name)})
	}
	return m
}

// Columns lists, sorted, the columns of table in schema, without the _uuid and
// _version every row has; nil for a table the schema lacks.
func Columns(schema ovsdb.DatabaseSchema, table string) []string {
	t, ok := schema.Tables[table]
	if !ok {
		return nil
	}
	cols := make([]string, 0, len(t.Columns))
	for name := range t.Columns {
		if strings.HasPrefix(name, "_") {
			continue
		}
		cols = append(cols, name)
	}
	sort.Strings(cols)
	return cols
}

// Transact commits ops as one transaction. OVSDB reports a failed operation in the
// results rather than as a transport error, so both are checked here.
func Transact(ctx context.Context, c client.Client, ops []ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	results, err := c.Transact(ctx, ops...)
	if err != nil {
		return nil, fmt.Errorf("transact %d operations: %w", len(ops), err)
	}
	if _, err := ovsdb.CheckOperationResults(results, ops); err != nil {
		return results, fmt.Errorf("transaction of %d operations failed: %w", len(ops), err)
	}
	return results, nil
}
