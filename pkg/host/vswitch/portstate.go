package vswitch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/host/vswitch/vswitchdb"
	"github.com/ovnk/ovnk/pkg/poll"
)

// PortState is what the database says about a port, partly written by vswitchd.
type PortState struct {
	// Name is the port's (and its interface's).
	Name string
	// Bridge is the bridge that holds the port.
	Bridge string
	// Type is the Interface type ("" for a system device).
	Type string
	// OFPort is the OpenFlow port number: 0 until vswitchd has assigned one, -1 when it
	// could not add the interface (Error says why).
	OFPort int
	// MACInUse is the interface's current Ethernet address as vswitchd reports it; it
	// may lag the OpenFlow port number by a status update.
	MACInUse string
	// Error is vswitchd's complaint about the interface, "" when there is none.
	Error string
	// ExternalIDs are the Interface external_ids (iface-id, ovn-installed, …).
	ExternalIDs map[string]string
}

// PortError is the error of WaitPort when vswitchd could not add the port's interface.
type PortError struct {
	Port   string
	Reason string // the Interface error column, or why the port has no number
}

// Error names the port and gives vswitchd's reason.
func (e *PortError) Error() string {
	return fmt.Sprintf("ovs-vswitchd could not add port %q: %s", e.Port, e.Reason)
}

// portWait bounds WaitPort when its context has no deadline: vswitchd applies a change
// within milliseconds, so this much means it is stuck or not running.
const portWait = 30 * time.Second

// Port returns the state of the named port from the client's cache, and whether it
// exists.
func (c *Client) Port(ctx context.Context, name string) (PortState, bool, error) {
	p := &vswitchdb.Port{Name: name}
	switch err := c.ovs.Get(ctx, p); {
	case errors.Is(err, client.ErrNotFound):
		return PortState{}, false, nil
	case err != nil:
		return PortState{}, false, fmt.Errorf("read port %q from the cache: %w", name, err)
	}
	iface, err := c.soleInterface(ctx, p)
	if err != nil {
		return PortState{}, false, err
	}
	holder, err := c.bridgeOf(ctx, p.UUID)
	if err != nil {
		return PortState{}, false, err
	}
	st := PortState{
		Name:        name,
		Bridge:      nameOf(holder),
		Type:        iface.Type,
		ExternalIDs: maps.Clone(iface.ExternalIDs),
	}
	if iface.Ofport != nil {
		st.OFPort = *iface.Ofport
	}
	if iface.MACInUse != nil {
		st.MACInUse = *iface.MACInUse
	}
	if iface.Error != nil {
		st.Error = *iface.Error
	}
	return st, true, nil
}

// WaitPort waits until vswitchd has applied the configuration as of this call (its
// cur_cfg has reached the next_cfg our changes raise) and the port has an OpenFlow port
// number, and returns the port's state. If vswitchd could not add the interface (a
// system port whose device does not exist, say), it returns a *PortError at once; that
// is vswitchd's latest word, not a final one: it watches the kernel's links and adds
// the port by itself once the device appears, so waiting again later may succeed. It
// waits until the context's deadline, or 30 s without one; a port that does not exist
// is waited for too, since another client may be creating it.
func (c *Client) WaitPort(ctx context.Context, name string) (PortState, error) {
	root, err := c.root(ctx)
	if err != nil {
		return PortState{}, fmt.Errorf("wait for port %q: %w", name, err)
	}
	target := root.NextCfg
	var st PortState
	err = poll.Until(ctx, budget(ctx, portWait), fmt.Sprintf("port %q to get an OpenFlow port number", name), func(ctx context.Context) error {
		root, err := c.root(ctx)
		if err != nil {
			return err
		}
		if root.CurCfg < target {
			return fmt.Errorf("ovs-vswitchd has applied configuration %d, not yet %d (is it running?)", root.CurCfg, target)
		}
		var found bool
		if st, found, err = c.Port(ctx, name); err != nil {
			return err
		}
		switch {
		case !found:
			return fmt.Errorf("port %q does not exist", name)
		case st.Error != "":
			return poll.Stop(&PortError{Port: name, Reason: st.Error})
		case st.OFPort < 0:
			return poll.Stop(&PortError{Port: name, Reason: fmt.Sprintf("its OpenFlow port number is %d", st.OFPort)})
		case st.OFPort == 0:
			return fmt.Errorf("port %q has no OpenFlow port number yet", name)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	return st, nil
}

// OwnedPorts returns, sorted, the names of the ports on bridge that the client's owner
// created (the agent's, for a client of Connect), so that a resync can delete those it
// no longer wants. A bridge that does not exist has none.
func (c *Client) OwnedPorts(ctx context.Context, bridge string) ([]string, error) {
	ports, err := c.ports(ctx, bridge)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range ports {
		if p.ExternalIDs[OwnerKey] == c.owner {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// BridgePorts returns the state of every port on bridge but the bridge's own, sorted
// by name: what a caller looks through to find, say, the bridge's uplink NIC. A bridge
// that does not exist is an error.
func (c *Client) BridgePorts(ctx context.Context, bridge string) ([]PortState, error) {
	if _, err := c.bridge(ctx, bridge); err != nil {
		return nil, err
	}
	ports, err := c.ports(ctx, bridge)
	if err != nil {
		return nil, err
	}
	var out []PortState
	for _, p := range ports {
		if p.Name == bridge {
			continue
		}
		st, found, err := c.Port(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b PortState) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ports returns the Port rows of bridge from the cache; none for a missing bridge.
func (c *Client) ports(ctx context.Context, bridge string) ([]*vswitchdb.Port, error) {
	br := &vswitchdb.Bridge{Name: bridge}
	switch err := c.ovs.Get(ctx, br); {
	case errors.Is(err, client.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read bridge %q from the cache: %w", bridge, err)
	}
	var out []*vswitchdb.Port
	for _, uuid := range br.Ports {
		p := &vswitchdb.Port{UUID: uuid}
		if err := c.ovs.Get(ctx, p); err != nil {
			if errors.Is(err, client.ErrNotFound) {
				continue // deleted since the bridge was read
			}
			return nil, fmt.Errorf("read port %s of bridge %q from the cache: %w", uuid, bridge, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// bridge returns the named bridge from the cache, or an error naming it if it does not
// exist.
func (c *Client) bridge(ctx context.Context, name string) (*vswitchdb.Bridge, error) {
	br := &vswitchdb.Bridge{Name: name}
	switch err := c.ovs.Get(ctx, br); {
	case errors.Is(err, client.ErrNotFound):
		return nil, fmt.Errorf("bridge %q does not exist", name)
	case err != nil:
		return nil, fmt.Errorf("read bridge %q from the cache: %w", name, err)
	}
	return br, nil
}

// bridgeOf returns the bridge whose ports include the port, or nil if none does.
func (c *Client) bridgeOf(ctx context.Context, portUUID string) (*vswitchdb.Bridge, error) {
	var bridges []vswitchdb.Bridge
	err := c.ovs.WhereCache(func(b *vswitchdb.Bridge) bool {
		return slices.Contains(b.Ports, portUUID)
	}).List(ctx, &bridges)
	if err != nil {
		return nil, fmt.Errorf("find the bridge of port %s in the cache: %w", portUUID, err)
	}
	if len(bridges) == 0 {
		return nil, nil
	}
	return &bridges[0], nil
}

// soleInterface returns the one Interface of a port. The agent makes ports of one
// interface; a bond has several and is not one of its ports.
func (c *Client) soleInterface(ctx context.Context, p *vswitchdb.Port) (*vswitchdb.Interface, error) {
	if len(p.Interfaces) != 1 {
		return nil, fmt.Errorf("port %q has %d interfaces, not one", p.Name, len(p.Interfaces))
	}
	iface := &vswitchdb.Interface{UUID: p.Interfaces[0]}
	if err := c.ovs.Get(ctx, iface); err != nil {
		return nil, fmt.Errorf("read interface %s of port %q from the cache: %w", p.Interfaces[0], p.Name, err)
	}
	return iface, nil
}

// nameOf names a bridge that may be nil.
func nameOf(b *vswitchdb.Bridge) string {
	if b == nil {
		return ""
	}
	return b.Name
}
