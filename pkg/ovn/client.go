// Package ovn talks to OVN Northbound databases: it connects a libovsdb client that
// monitors exactly the tables and columns of the generated models.
package ovn

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
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
// columns. The client reconnects by itself and re-monitors after a reconnect.
//
// Monitoring only our columns, rather than every column the server has, is what lets
// this client run against newer OVN releases whose schema has grown: the server never
// sends a column our models cannot hold.
func ConnectNB(ctx context.Context, cfg NBConfig) (client.Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("no Northbound endpoint configured: give one such as %s", DefaultNBEndpoint)
	}
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build NB database model: %w", err)
	}
	timeout := cfg.ConnectTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	retry := backoff.NewExponentialBackOff()
	retry.MaxElapsedTime = 0 // keep trying: an agent outlives any NB restart
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
	c, err := client.NewOVSDBClient(dbModel, opts...)
	if err != nil {
		return nil, fmt.Errorf("create NB client for %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	connectCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Connect(connectCtx); err != nil {
		return nil, fmt.Errorf("connect to NB %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	if _, err := c.Monitor(ctx, modelledMonitor(c)); err != nil {
		c.Close()
		return nil, fmt.Errorf("monitor NB %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return c, nil
}

// modelledMonitor asks for every modelled table, restricted to the columns of the
// schema the models were generated from.
func modelledMonitor(c client.Client) *client.Monitor {
	schema := nbdb.Schema()
	m := c.NewMonitor()
	tables := make([]string, 0, len(schema.Tables))
	for name := range schema.Tables {
		tables = append(tables, name)
	}
	sort.Strings(tables)
	for _, name := range tables {
		m.Tables = append(m.Tables, client.TableMonitor{Table: name, Fields: ModelledColumns(name)})
	}
	return m
}

// ModelledColumns lists, sorted, the columns of table that the models hold.
func ModelledColumns(table string) []string {
	t, ok := nbdb.Schema().Tables[table]
	if !ok {
		return nil
	}
	cols := make([]string, 0, len(t.Columns))
	for name := range t.Columns {
		if strings.HasPrefix(name, "_") { // _uuid and _version come with every row
			continue
		}
		cols = append(cols, name)
	}
	sort.Strings(cols)
	return cols
}

// Transact commits ops as one OVSDB transaction. OVSDB reports a failed operation in
// the results rather than as a transport error, so both are checked here.
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
