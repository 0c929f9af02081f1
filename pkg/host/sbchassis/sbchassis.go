// Package sbchassis keeps, in the node's own zone Southbound database, one Chassis row
// for every other node of the cluster: the "remote chassis" of OVN interconnect as
// OVN-Kubernetes runs it, one zone per node and no ovn-ic daemon.
//
// ovn-northd binds a remote Logical_Switch_Port (type=remote, options:requested-chassis)
// to the chassis of that name only when such a row exists and carries
// other_config:is-remote=true, and ovn-controller builds its Geneve tunnel to the
// row's Encap. So the rows must exist before any remote port names them, and go when
// their node goes.
//
// The local chassis belongs to ovn-controller, which registers it by itself. A Syncer
// only ever writes rows it owns (external_ids ovnk.io/owner=ovnk-agent together with
// other_config:is-remote=true); any other row is left exactly as it is, even when its
// name is one the caller asked for.
package sbchassis

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/sbdb"
	"github.com/ovnk/ovnk/pkg/ovsdbconn"
)

// Ownership and shape of the rows a Syncer writes.
const (
	// OwnerKey is the external_ids key that marks a Chassis row as ours.
	OwnerKey = "ovnk.io/owner"
	// Owner is OwnerKey's value on our rows.
	Owner = "ovnk-agent"
	// IsRemoteKey is the other_config key that tells ovn-northd and ovn-controller a
	// chassis is in another zone; ours always carry it set to "true".
	IsRemoteKey = "is-remote"
)

// InactivityProbe is how long the Southbound connection may stay silent before it is
// echoed and, without an answer, reconnected.
const InactivityProbe = 60 * time.Second

// cacheTimeout bounds how long Sync waits for its own committed transaction to come
// back through the monitor, so that the next Sync plans from what was written.
const cacheTimeout = 10 * time.Second

// RemoteChassis is one other node, as this zone's Southbound must know it.
type RemoteChassis struct {
	// Name is the node's OVN system-id, which is its chassis name and what remote
	// ports put in options:requested-chassis. Required.
	Name string
	// Hostname is the node's host name; ovn-northd also resolves requested-chassis
	// by it. May be empty.
	Hostname string
	// EncapIP is the node's Geneve tunnel endpoint. Required: neither the zero Addr nor
	// an unspecified, multicast or zoned address. An IPv4-mapped IPv6 address is
	// stored as the IPv4 address it maps.
	EncapIP netip.Addr
}

// Result says what one Sync changed, by chassis name, each list sorted.
type Result struct {
	Created []string
	Updated []string
	Deleted []string
}

// Changed reports whether the Sync wrote anything.
func (r Result) Changed() bool {
	return len(r.Created)+len(r.Updated)+len(r.Deleted) > 0
}

// String renders the result for logs, e.g. "created [node-b], updated [], deleted []".
func (r Result) String() string {
	return fmt.Sprintf("created [%s], updated [%s], deleted [%s]",
		strings.Join(r.Created, " "), strings.Join(r.Updated, " "), strings.Join(r.Deleted, " "))
}

// Syncer writes remote chassis into one Southbound database. It is safe for
// concurrent use; Syncs run one at a time.
type Syncer struct {
	c  client.Client
	mu sync.Mutex
	// transactions counts the transactions Sync sent, so tests can prove that a Sync
	// with nothing to change sends none.
	transactions int
}

// Connect connects to the zone's Southbound database at endpoints (OVSDB connection
// strings such as unix:/var/run/ovn/ovnsb_db.sock; of a clustered database only the
// leader is used) and monitors the Chassis and Encap tables.
func Connect(ctx context.Context, endpoints []string) (*Syncer, error) {
	dbModel, err := model.NewClientDBModel("OVN_Southbound", map[string]model.Model{
		sbdb.ChassisTable: &sbdb.Chassis{},
		sbdb.EncapTable:   &sbdb.Encap{},
	})
	if err != nil {
		return nil, fmt.Errorf("build SB model of Chassis and Encap: %w", err)
	}
	c, err := ovsdbconn.Connect(ctx, ovsdbconn.Config{
		Name:            "SB",
		Endpoints:       endpoints,
		LeaderOnly:      true,
		InactivityProbe: InactivityProbe,
	}, ovsdbconn.Database{Model: dbModel, Schema: sbdb.Schema()})
	if err != nil {
		return nil, err
	}
	return &Syncer{c: c}, nil
}

// Close disconnects from the database. The rows stay: remote chassis outlive the
// agent's restarts, and the next Sync adopts them by their owner key.
func (s *Syncer) Close() { s.c.Close() }

// Sync makes our remote chassis exactly desired, in one transaction: it creates the
// missing ones (a Chassis and its Geneve Encap), fixes the hostname and the Encap
// (replaced, never edited) of ours that differ, and deletes ours that are not desired
// (their Encaps go with them: Encap is not a root table). Keys others added to our
// rows are kept. With nothing to change it sends no transaction; repeating a Sync is
// always safe. Sync returns once its own client's cache shows what it wrote, so the
// next Sync plans from it.
//
// Invalid input (see RemoteChassis; also duplicate names or encap IPs) is refused
// with an ErrInvalid error naming the value, before anything is sent.
//
// A desired name held by a row we do not own is skipped and reported as a
// *ForeignChassisError (errors.Is ErrForeignChassis), and a desired encap IP that
// another chassis keeps (one not ours, or one of ours that is itself skipped) as an
// *EncapIPInUseError (errors.Is ErrEncapIPInUse); everything else is still synced,
// and the Result says what was. The errors of all skipped chassis are joined.
//
// Each update and delete is conditional on the row's name and ownership being as
// read: if another client changed them meanwhile, the transaction fails as a whole
// and nothing is applied. While the SB is unreachable, a Sync with something to
// write waits for the reconnect until ctx ends: give ctx a deadline.
func (s *Syncer) Sync(ctx context.Context, desired []RemoteChassis) (Result, error) {
	want, err := validate(desired)
	if err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var chassis []sbdb.Chassis
	if err := s.c.List(ctx, &chassis); err != nil {
		return Result{}, fmt.Errorf("list SB chassis: %w", err)
	}
	var encaps []sbdb.Encap
	if err := s.c.List(ctx, &encaps); err != nil {
		return Result{}, fmt.Errorf("list SB encaps: %w", err)
	}
	p := makePlan(want, chassis, encaps)
	if p.empty() {
		return Result{}, p.skipped()
	}
	res, err := s.apply(ctx, p)
	return res, errors.Join(err, p.skipped())
}

// apply commits a non-empty plan in one transaction and waits until the cache shows it.
func (s *Syncer) apply(ctx context.Context, p *plan) (Result, error) {
	ops, exp, err := p.ops(s.c)
	if err != nil {
		return Result{}, err
	}
	s.transactions++
	results, err := ovsdbconn.Transact(ctx, s.c, ops)
	if err != nil {
		if detail := operationErrors(ops, results); detail != nil {
			err = fmt.Errorf("%w: %w", err, detail)
		}
		return Result{}, fmt.Errorf("sync remote chassis (%s): %w", p.result(), err)
	}
	if err := s.awaitCache(ctx, resolve(exp, results)); err != nil {
		return p.result(), fmt.Errorf("remote chassis synced (%s), but: %w", p.result(), err)
	}
	return p.result(), nil
}
