// Package vswitch configures the node's Open vSwitch through its OVSDB database (the
// Open_vSwitch schema), as ovnkube-node does and never by running ovs-vsctl: the
// Open_vSwitch row's external_ids that ovn-controller reads, bridges, and the ports the
// agent plugs into them.
//
// Every call compares the desired state with the client's cache of the database and
// commits the difference as one transaction; a call that would change nothing sends
// nothing and says so (changed == false). Reading the cache right after a write is safe:
// ovsdb-server sends a transaction's update notification before its reply, and libovsdb
// handles notifications in arrival order, so the change is cached when Transact returns.
//
// Ports the agent creates carry Port external_ids ovnk.io/owner=ovnk-agent; the agent
// modifies and deletes only those, and OwnedPorts finds them for a resync. A client of
// another owner (ConnectAs: the CNI plugin's pod ports are ovnk-cni's) creates, modifies,
// deletes and finds only its own, so neither can ever remove the other's ports.
package vswitch

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/host/vswitch/vswitchdb"
	"github.com/ovnk/ovnk/pkg/ovsdbconn"
	"github.com/ovnk/ovnk/pkg/poll"
)

const (
	// DefaultEndpoint is where a node's ovsdb-server serves the Open_vSwitch database.
	DefaultEndpoint = "unix:/var/run/openvswitch/db.sock"
	// OwnerKey is the external_ids key that marks rows the agent created.
	OwnerKey = "ovnk.io/owner"
	// OwnerValue is OwnerKey's value on rows the agent created.
	OwnerValue = "ovnk-agent"
)

// rootRowWait is how long a call waits for the Open_vSwitch row of a fresh database when
// its context has no deadline: ovs-ctl creates the row (`ovs-vsctl init`) a moment after
// it starts ovsdb-server, and the agent may start in between.
const rootRowWait = 10 * time.Second

// Client configures one Open vSwitch. It is safe for concurrent use; calls that touch
// the same rows from several goroutines race like any two OVSDB clients would (each
// call is one transaction, and a lost race is reported as an error).
type Client struct {
	ovs      client.Client
	endpoint string
	// owner is OwnerKey's value on the ports this client creates and may touch.
	owner string
	// txns counts the transactions sent, so tests can prove a no-op sends nothing.
	txns atomic.Uint64
}

// Connect connects to the Open_vSwitch database at endpoint (OVSDB connection syntax,
// e.g. DefaultEndpoint) and monitors the Open_vSwitch, Bridge, Port and Interface tables.
// The client reconnects by itself until Close. Its ports are the agent's (OwnerValue).
func Connect(ctx context.Context, endpoint string) (*Client, error) {
	return ConnectAs(ctx, endpoint, OwnerValue)
}

// ConnectAs is Connect for a client whose ports carry OwnerKey=owner instead of the
// agent's OwnerValue: EnsurePort, DeletePort and OwnedPorts then see that owner's ports
// as theirs and every other port, the agent's too, as foreign.
func ConnectAs(ctx context.Context, endpoint, owner string) (*Client, error) {
	if owner == "" {
		return nil, errors.New("connect to the OVS database: no owner given for the ports")
	}
	if endpoint == "" {
		return nil, fmt.Errorf("no OVS database endpoint given: use one such as %s", DefaultEndpoint)
	}
	dbModel, err := model.NewClientDBModel(vswitchdb.OpenvSwitchTable, map[string]model.Model{
		vswitchdb.OpenvSwitchTable: &vswitchdb.OpenvSwitch{},
		vswitchdb.BridgeTable:      &vswitchdb.Bridge{},
		vswitchdb.PortTable:        &vswitchdb.Port{},
		vswitchdb.InterfaceTable:   &vswitchdb.Interface{},
	})
	if err != nil {
		return nil, fmt.Errorf("build Open_vSwitch client model: %w", err)
	}
	c, err := ovsdbconn.Connect(ctx, ovsdbconn.Config{Name: "OVS", Endpoints: []string{endpoint}},
		ovsdbconn.Database{Model: dbModel, Schema: vswitchdb.Schema()})
	if err != nil {
		return nil, err
	}
	return &Client{ovs: c, endpoint: endpoint, owner: owner}, nil
}

// Close disconnects from the database.
func (c *Client) Close() { c.ovs.Close() }

// transact commits ops as one transaction. Every update and mutate we send names one
// row by UUID, so one that matched no row means the row went away since the cache was
// read (another client deleted it); the caller's intent did not take effect and the
// error says so, for the caller to retry against the fresh cache.
func (c *Client) transact(ctx context.Context, what string, ops []ovsdb.Operation) error {
	c.txns.Add(1)
	results, err := ovsdbconn.Transact(ctx, c.ovs, ops)
	if err != nil {
		return fmt.Errorf("%s in OVS database %s: %w", what, c.endpoint, err)
	}
	for i, op := range ops {
		if (op.Op == ovsdb.OperationUpdate || op.Op == ovsdb.OperationMutate) && i < len(results) && results[i].Count == 0 {
			return fmt.Errorf("%s in OVS database %s: the %s row to %s is gone (changed by another client; retry)",
				what, c.endpoint, op.Table, op.Op)
		}
	}
	return nil
}

// root returns the database's one Open_vSwitch row, waiting for it while the context
// (or, without a deadline, rootRowWait) allows. The agent does not create the row:
// creating it is ovs-ctl's job, which also records the versions and system type there,
// and a missing row most likely means the agent is pointed at the wrong database or
// OVS is not set up yet — which an error shows and a silently created row would hide.
func (c *Client) root(ctx context.Context) (*vswitchdb.OpenvSwitch, error) {
	var row *vswitchdb.OpenvSwitch
	err := poll.Until(ctx, budget(ctx, rootRowWait), "the Open_vSwitch row", func(ctx context.Context) error {
		var rows []vswitchdb.OpenvSwitch
		if err := c.ovs.List(ctx, &rows); err != nil {
			return err
		}
		if len(rows) == 0 {
			return errors.New("the table is empty")
		}
		row = &rows[0]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("no Open_vSwitch row in OVS database %s: OVS is not initialised "+
			"(ovs-ctl start does it; by hand run `ovs-vsctl --no-wait init`): %w", c.endpoint, err)
	}
	return row, nil
}

// bumpNextCfg returns the operation that increments the Open_vSwitch row's next_cfg,
// as ovs-vsctl does with every change unless --no-wait. ovs-vswitchd copies next_cfg
// into cur_cfg once it has applied the database, so WaitPort can tell the ofport and
// error of a port apart from those of before the change.
func (c *Client) bumpNextCfg(root *vswitchdb.OpenvSwitch) ([]ovsdb.Operation, error) {
	m := &vswitchdb.OpenvSwitch{UUID: root.UUID}
	ops, err := c.ovs.Where(m).Mutate(m, model.Mutation{Field: &m.NextCfg, Mutator: ovsdb.MutateOperationAdd, Value: 1})
	if err != nil {
		return nil, fmt.Errorf("build increment of Open_vSwitch next_cfg: %w", err)
	}
	return ops, nil
}

// budget is how long a wait may last: until the context's deadline, or def without one.
func budget(ctx context.Context, def time.Duration) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return def
}
