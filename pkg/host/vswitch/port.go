package vswitch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/host/vswitch/vswitchdb"
)

// Port is a port the agent plugs into a bridge: a Port row with one Interface of the
// same name, as `ovs-vsctl add-port` makes it.
type Port struct {
	// Name names the Port and its Interface (and the network device of a system or
	// internal interface).
	Name string
	// Type is the Interface type: "" for an existing network device (a veth end),
	// "internal" for a device vswitchd creates (a tap on the userspace datapath),
	// "patch" for one end of a patch pair, or any other type vswitchd supports.
	Type string
	// Options are the Interface options (a patch port's peer, a tunnel's remote_ip),
	// set exactly: keys not given are removed.
	Options map[string]string
	// ExternalIDs are merged into the Interface external_ids (iface-id, iface-id-ver, …):
	// a key given "" is removed, keys not given stay, because ovn-controller writes its
	// own there (ovn-installed) once it has bound the port.
	ExternalIDs map[string]string
	// MAC is the Ethernet address vswitchd gives an internal interface (Interface mac);
	// "" leaves it to vswitchd.
	MAC string
	// MTURequest asks vswitchd for the interface's MTU (Interface mtu_request); 0 leaves
	// it to vswitchd.
	MTURequest int
}

// ForeignPortError is the error of a call that would modify or delete a port the
// client's owner did not create (its Port external_ids lack ovnk.io/owner=<owner>,
// ovnk-agent for the agent). Such a port is never touched.
type ForeignPortError struct {
	Port   string
	Bridge string // the bridge holding the port, "" if none
	Owner  string // the client's owner; "" means OwnerValue
}

// Error names the port, its bridge and the missing owner key.
func (e *ForeignPortError) Error() string {
	owner := e.Owner
	if owner == "" {
		owner = OwnerValue
	}
	return fmt.Sprintf("port %q on bridge %q was not created by %s (its external_ids lack %s=%s): refusing to modify it",
		e.Port, e.Bridge, owner, OwnerKey, owner)
}

// EnsurePort makes the port exist on bridge with the given configuration and reports
// whether it changed anything. A missing port is created with Port external_ids
// ovnk.io/owner=ovnk-agent; a port the agent created is updated, and moved from another
// bridge if it is on one; a port of the same name that someone else created is refused
// with a *ForeignPortError. vswitchd assigns the OpenFlow port number afterwards: use
// WaitPort for it.
func (c *Client) EnsurePort(ctx context.Context, bridge string, p Port) (bool, error) {
	if err := validatePort(bridge, p); err != nil {
		return false, err
	}
	br, err := c.bridge(ctx, bridge)
	if err != nil {
		return false, fmt.Errorf("ensure port %q: %w", p.Name, err)
	}
	current := &vswitchdb.Port{Name: p.Name}
	switch err := c.ovs.Get(ctx, current); {
	case errors.Is(err, client.ErrNotFound):
		if err := c.createPort(ctx, br, p); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read port %q from the cache: %w", p.Name, err)
	}
	holder, err := c.bridgeOf(ctx, current.UUID)
	if err != nil {
		return false, err
	}
	if current.ExternalIDs[OwnerKey] != c.owner {
		return false, &ForeignPortError{Port: p.Name, Bridge: nameOf(holder), Owner: c.owner}
	}
	iface, err := c.soleInterface(ctx, current)
	if err != nil {
		return false, err
	}
	ops, err := c.updateInterfaceOps(iface, p)
	if err != nil {
		return false, err
	}
	if holder == nil || holder.UUID != br.UUID {
		move, err := c.movePortOps(current.UUID, holder, br)
		if err != nil {
			return false, fmt.Errorf("build move of port %q to bridge %q: %w", p.Name, bridge, err)
		}
		ops = append(ops, move...)
	}
	if len(ops) == 0 {
		return false, nil
	}
	if err := c.commitWithNextCfg(ctx, fmt.Sprintf("update port %q on bridge %q", p.Name, bridge), ops); err != nil {
		return false, err
	}
	return true, nil
}

// DeletePort removes the port from bridge (its Interface goes with it, as OVSDB drops
// rows nothing references) and reports whether it did. A missing port is no change; a
// port on another bridge is an error; a port the agent did not create is refused with a
// *ForeignPortError and left alone.
func (c *Client) DeletePort(ctx context.Context, bridge, name string) (bool, error) {
	current := &vswitchdb.Port{Name: name}
	switch err := c.ovs.Get(ctx, current); {
	case errors.Is(err, client.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read port %q from the cache: %w", name, err)
	}
	holder, err := c.bridgeOf(ctx, current.UUID)
	if err != nil {
		return false, err
	}
	if holder == nil {
		// Unreferenced rows are dropped at commit, so this is only a passing state.
		return false, nil
	}
	if holder.Name != bridge {
		return false, fmt.Errorf("delete port %q from bridge %q: it is on bridge %q", name, bridge, holder.Name)
	}
	if current.ExternalIDs[OwnerKey] != c.owner {
		return false, &ForeignPortError{Port: name, Bridge: holder.Name, Owner: c.owner}
	}
	ops, err := c.movePortOps(current.UUID, holder, nil)
	if err != nil {
		return false, fmt.Errorf("build deletion of port %q from bridge %q: %w", name, bridge, err)
	}
	if err := c.commitWithNextCfg(ctx, fmt.Sprintf("delete port %q from bridge %q", name, bridge), ops); err != nil {
		return false, err
	}
	return true, nil
}

// createPort inserts the Interface and the Port and adds the Port to the bridge.
func (c *Client) createPort(ctx context.Context, br *vswitchdb.Bridge, p Port) error {
	iface := &vswitchdb.Interface{
		UUID:        "new_iface",
		Name:        p.Name,
		Type:        p.Type,
		Options:     maps.Clone(p.Options),
		ExternalIDs: mergeMap(nil, p.ExternalIDs),
		MAC:         optString(p.MAC),
		MTURequest:  optInt(p.MTURequest),
	}
	port := &vswitchdb.Port{
		UUID:        "new_port",
		Name:        p.Name,
		Interfaces:  []string{iface.UUID},
		ExternalIDs: map[string]string{OwnerKey: c.owner},
	}
	var ops []ovsdb.Operation
	for _, row := range []model.Model{iface, port} {
		op, err := c.ovs.Create(row)
		if err != nil {
			return fmt.Errorf("build creation of port %q: %w", p.Name, err)
		}
		ops = append(ops, op...)
	}
	add, err := c.movePortOps(port.UUID, nil, br)
	if err != nil {
		return fmt.Errorf("build creation of port %q: %w", p.Name, err)
	}
	return c.commitWithNextCfg(ctx, fmt.Sprintf("create port %q on bridge %q", p.Name, br.Name), append(ops, add...))
}

// updateInterfaceOps returns the operations that give an existing interface the port's
// configuration; none when it already has it.
func (c *Client) updateInterfaceOps(iface *vswitchdb.Interface, p Port) ([]ovsdb.Operation, error) {
	m := &vswitchdb.Interface{UUID: iface.UUID}
	var fields []any
	if iface.Type != p.Type {
		m.Type = p.Type
		fields = append(fields, &m.Type)
	}
	if !maps.Equal(iface.Options, p.Options) {
		m.Options = maps.Clone(p.Options)
		fields = append(fields, &m.Options)
	}
	if want := optString(p.MAC); !equalPtr(iface.MAC, want) {
		m.MAC = want
		fields = append(fields, &m.MAC)
	}
	if want := optInt(p.MTURequest); !equalPtr(iface.MTURequest, want) {
		m.MTURequest = want
		fields = append(fields, &m.MTURequest)
	}
	var ops []ovsdb.Operation
	if len(fields) > 0 {
		op, err := c.ovs.Where(m).Update(m, fields...)
		if err != nil {
			return nil, fmt.Errorf("build update of interface %q: %w", p.Name, err)
		}
		ops = append(ops, op...)
	}
	if muts := mapMutations(&m.ExternalIDs, iface.ExternalIDs, p.ExternalIDs); len(muts) > 0 {
		op, err := c.ovs.Where(m).Mutate(m, muts...)
		if err != nil {
			return nil, fmt.Errorf("build update of interface %q external_ids %v: %w", p.Name, p.ExternalIDs, err)
		}
		ops = append(ops, op...)
	}
	return ops, nil
}

// movePortOps returns the operations that take the port out of bridge from and put it
// into bridge to; either may be nil. A Port belongs to the bridge that lists it.
func (c *Client) movePortOps(portUUID string, from, to *vswitchdb.Bridge) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	for _, step := range []struct {
		br      *vswitchdb.Bridge
		mutator ovsdb.Mutator
	}{{from, ovsdb.MutateOperationDelete}, {to, ovsdb.MutateOperationInsert}} {
		if step.br == nil {
			continue
		}
		m := &vswitchdb.Bridge{UUID: step.br.UUID}
		op, err := c.ovs.Where(m).Mutate(m, model.Mutation{Field: &m.Ports, Mutator: step.mutator, Value: []string{portUUID}})
		if err != nil {
			return nil, err
		}
		ops = append(ops, op...)
	}
	return ops, nil
}

// commitWithNextCfg commits ops together with the next_cfg increment WaitPort relies on.
func (c *Client) commitWithNextCfg(ctx context.Context, what string, ops []ovsdb.Operation) error {
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	bump, err := c.bumpNextCfg(root)
	if err != nil {
		return err
	}
	return c.transact(ctx, what, append(ops, bump...))
}

func validatePort(bridge string, p Port) error {
	if err := validName("port", p.Name, p.Type); err != nil {
		return err
	}
	if p.Name == bridge {
		return fmt.Errorf("port %q is bridge %q's own internal port, which EnsureBridge manages", p.Name, bridge)
	}
	if p.MAC != "" {
		if hw, err := net.ParseMAC(p.MAC); err != nil || len(hw) != 6 {
			return fmt.Errorf("port %q: MAC %q is not an Ethernet address", p.Name, p.MAC)
		}
	}
	if p.MTURequest < 0 {
		return fmt.Errorf("port %q: negative MTU request %d", p.Name, p.MTURequest)
	}
	if err := checkKeys(fmt.Sprintf("port %q options", p.Name), p.Options); err != nil {
		return err
	}
	return checkKeys(fmt.Sprintf("port %q external_ids", p.Name), p.ExternalIDs)
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optInt(i int) *int {
	if i == 0 {
		return nil
	}
	return &i
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
