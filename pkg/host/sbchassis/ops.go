package sbchassis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/sbdb"
	"github.com/ovnk/ovnk/pkg/poll"
)

// expectation is what the cache must show for one row once the transaction that
// wrote it has come back through the monitor.
type expectation struct {
	name      string
	uuid      string // the row; empty until resolved for a created one
	chassisOp int    // the insert of a created chassis, else -1
	encapOp   int    // the insert of a new Encap, else -1
	encapUUID string // resolved from encapOp
	hostname  string
	gone      bool
}

// ops returns the plan as one transaction. Encap is not a root table, so a new Encap
// is inserted in the same transaction as the Chassis that refers to it (by named
// UUID), and an Encap no Chassis refers to any more is collected by the server.
// Every update and delete is preceded by a wait that fails the whole transaction if
// the row's name or ownership changed since it was read, like ovsdb-idl's verify.
func (p *plan) ops(c client.Client) ([]ovsdb.Operation, []expectation, error) {
	var ops []ovsdb.Operation
	var exp []expectation
	for i, w := range p.create {
		encap := newEncap(fmt.Sprintf("new_encap_%d", i), w)
		ch := &sbdb.Chassis{
			UUID:        fmt.Sprintf("new_chassis_%d", i),
			Name:        w.name,
			Hostname:    w.hostname,
			Encaps:      []string{encap.UUID},
			ExternalIDs: map[string]string{OwnerKey: Owner},
			OtherConfig: map[string]string{IsRemoteKey: "true"},
		}
		insertEncap, err := c.Create(encap)
		if err != nil {
			return nil, nil, fmt.Errorf("build encap insert of chassis %q: %w", w.name, err)
		}
		insertChassis, err := c.Create(ch)
		if err != nil {
			return nil, nil, fmt.Errorf("build insert of chassis %q: %w", w.name, err)
		}
		insert := append(insertEncap, insertChassis...)
		exp = append(exp, expectation{name: w.name, chassisOp: len(ops) + 1, encapOp: len(ops), hostname: w.hostname})
		ops = append(ops, insert...)
	}
	for i, u := range p.update {
		wait, err := waitUnchanged(&u.have)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, wait)
		e := expectation{name: u.want.name, uuid: u.have.UUID, chassisOp: -1, encapOp: -1, hostname: u.want.hostname}
		m := &sbdb.Chassis{UUID: u.have.UUID, Hostname: u.want.hostname}
		fields := []any{&m.Hostname}
		if u.encap {
			encap := newEncap(fmt.Sprintf("repl_encap_%d", i), u.want)
			insert, err := c.Create(encap)
			if err != nil {
				return nil, nil, fmt.Errorf("build encap insert of chassis %q: %w", u.want.name, err)
			}
			e.encapOp = len(ops)
			ops = append(ops, insert...)
			m.Encaps = []string{encap.UUID}
			fields = append(fields, &m.Encaps)
		}
		update, err := c.Where(&sbdb.Chassis{UUID: u.have.UUID}).Update(m, fields...)
		if err != nil {
			return nil, nil, fmt.Errorf("build update of chassis %q (row %s): %w", u.want.name, u.have.UUID, err)
		}
		ops = append(ops, update...)
		exp = append(exp, e)
	}
	for i := range p.delete {
		have := &p.delete[i]
		wait, err := waitUnchanged(have)
		if err != nil {
			return nil, nil, err
		}
		del, err := c.Where(&sbdb.Chassis{UUID: have.UUID}).Delete()
		if err != nil {
			return nil, nil, fmt.Errorf("build delete of chassis %q (row %s): %w", have.Name, have.UUID, err)
		}
		ops = append(append(ops, wait), del...)
		exp = append(exp, expectation{name: have.Name, uuid: have.UUID, chassisOp: -1, encapOp: -1, gone: true})
	}
	return ops, exp, nil
}

// newEncap is the Geneve Encap of a wanted chassis under a named UUID.
func newEncap(namedUUID string, w wanted) *sbdb.Encap {
	return &sbdb.Encap{
		UUID:        namedUUID,
		Type:        sbdb.EncapTypeGeneve,
		IP:          w.ip,
		ChassisName: w.name,
		Options:     maps.Clone(encapOptions),
	}
}

// waitUnchanged is a wait operation (with no timeout: it checks once) that holds only
// while the row still has the name and ownership it was read with.
func waitUnchanged(ch *sbdb.Chassis) (ovsdb.Operation, error) {
	ids, err := ovsdb.NewOvsMap(ch.ExternalIDs)
	if err != nil {
		return ovsdb.Operation{}, fmt.Errorf("build wait on chassis %q external_ids: %w", ch.Name, err)
	}
	other, err := ovsdb.NewOvsMap(ch.OtherConfig)
	if err != nil {
		return ovsdb.Operation{}, fmt.Errorf("build wait on chassis %q other_config: %w", ch.Name, err)
	}
	timeout := 0
	return ovsdb.Operation{
		Op:      ovsdb.OperationWait,
		Table:   sbdb.ChassisTable,
		Timeout: &timeout,
		Where:   []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: ch.UUID})},
		Columns: []string{"name", "external_ids", "other_config"},
		Until:   string(ovsdb.WaitConditionEqual),
		Rows:    []ovsdb.Row{{"name": ch.Name, "external_ids": ids, "other_config": other}},
	}, nil
}

// resolve fills in the UUIDs the server gave the inserted rows.
func resolve(exp []expectation, results []ovsdb.OperationResult) []expectation {
	out := slices.Clone(exp)
	for i := range out {
		if op := out[i].chassisOp; op >= 0 && op < len(results) {
			out[i].uuid = results[op].UUID.GoUUID
		}
		if op := out[i].encapOp; op >= 0 && op < len(results) {
			out[i].encapUUID = results[op].UUID.GoUUID
		}
	}
	return out
}

// operationErrors returns the per-operation errors of a failed transaction, which
// say what failed (a wait, a constraint) where the transaction's own error only counts
// them; nil when there are none (an error at commit is already in that error).
func operationErrors(ops []ovsdb.Operation, results []ovsdb.OperationResult) error {
	if len(results) == 0 {
		return nil // the transaction never got an answer: there is nothing to add
	}
	opErrs, _ := ovsdb.CheckOperationResults(results, ops)
	errs := make([]error, 0, len(opErrs))
	for _, e := range opErrs {
		op := e.Operation()
		switch {
		case op == nil:
			errs = append(errs, e)
		case op.Op == ovsdb.OperationWait && len(op.Rows) == 1:
			errs = append(errs, fmt.Errorf("chassis %q changed since it was read, nothing applied (a later sync retries): %w", op.Rows[0]["name"], e))
		default:
			errs = append(errs, fmt.Errorf("%s %s: %w", op.Op, op.Table, e))
		}
	}
	return errors.Join(errs...)
}

// awaitCache waits until the client's cache shows what the transaction wrote.
// libovsdb returns from Transact when the server answers, possibly before the
// monitor's update for the same transaction has been applied to the cache, and the
// next Sync must plan from the new rows, not the old.
func (s *Syncer) awaitCache(ctx context.Context, exp []expectation) error {
	return poll.Until(ctx, cacheTimeout, "the SB cache to show the committed chassis", func(ctx context.Context) error {
		for _, e := range exp {
			if err := s.cacheShows(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// cacheShows checks one expectation against the cache.
func (s *Syncer) cacheShows(ctx context.Context, e expectation) error {
	ch := &sbdb.Chassis{UUID: e.uuid}
	err := s.c.Get(ctx, ch)
	switch {
	case e.gone && errors.Is(err, client.ErrNotFound):
		return nil
	case e.gone && err == nil:
		return fmt.Errorf("deleted chassis %q (row %s) still cached", e.name, e.uuid)
	case err != nil:
		return fmt.Errorf("chassis %q (row %s) not cached: %w", e.name, e.uuid, err)
	case ch.Hostname != e.hostname:
		return fmt.Errorf("chassis %q (row %s) cached with hostname %q, not %q", e.name, e.uuid, ch.Hostname, e.hostname)
	case e.encapUUID == "":
		return nil
	case !slices.Equal(ch.Encaps, []string{e.encapUUID}):
		return fmt.Errorf("chassis %q (row %s) cached with encaps %v, not [%s]", e.name, e.uuid, ch.Encaps, e.encapUUID)
	}
	if err := s.c.Get(ctx, &sbdb.Encap{UUID: e.encapUUID}); err != nil {
		return fmt.Errorf("encap %s of chassis %q not cached: %w", e.encapUUID, e.name, err)
	}
	return nil
}
