package vswitch

import (
	"context"
	"errors"
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/host/vswitch/vswitchdb"
)

// Bridge is the part of a bridge's configuration the agent sets. Empty fields are left
// as they are on an existing bridge.
type Bridge struct {
	// Name names the bridge and its local internal port (and, on the userspace datapath,
	// the tap device of that port).
	Name string
	// DatapathType is "netdev" for the userspace datapath or "system" for the kernel's;
	// "" leaves it as it is (vswitchd treats an unset type as "system").
	DatapathType string
	// FailMode is "secure" (no flows until a controller adds them, as br-int needs) or
	// "standalone"; "" leaves it as it is.
	FailMode string
	// OtherConfig is merged into the bridge's other_config (e.g. hwaddr, disable-in-band):
	// a key given "" is removed, keys not given stay.
	OtherConfig map[string]string
}

// EnsureBridge makes the bridge exist with the given settings and reports whether it
// changed anything. A missing bridge is created as `ovs-vsctl add-br` does it — the
// Bridge with its own Port and internal Interface of the same name, referenced from the
// Open_vSwitch row — and tagged ovnk.io/owner=ovnk-agent in its external_ids. An
// existing bridge, whoever made it, gets only the given columns and keys updated.
func (c *Client) EnsureBridge(ctx context.Context, b Bridge) (bool, error) {
	if err := validateBridge(b); err != nil {
		return false, err
	}
	current := &vswitchdb.Bridge{Name: b.Name}
	switch err := c.ovs.Get(ctx, current); {
	case errors.Is(err, client.ErrNotFound):
		if err := c.createBridge(ctx, b); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read bridge %q from the cache: %w", b.Name, err)
	}

	var ops []ovsdb.Operation
	m := &vswitchdb.Bridge{UUID: current.UUID}
	var fields []any
	if b.DatapathType != "" && b.DatapathType != current.DatapathType {
		m.DatapathType = b.DatapathType
		fields = append(fields, &m.DatapathType)
	}
	if b.FailMode != "" && (current.FailMode == nil || *current.FailMode != b.FailMode) {
		m.FailMode = &b.FailMode
		fields = append(fields, &m.FailMode)
	}
	if len(fields) > 0 {
		op, err := c.ovs.Where(m).Update(m, fields...)
		if err != nil {
			return false, fmt.Errorf("build update of bridge %q: %w", b.Name, err)
		}
		ops = append(ops, op...)
	}
	if muts := mapMutations(&m.OtherConfig, current.OtherConfig, b.OtherConfig); len(muts) > 0 {
		op, err := c.ovs.Where(m).Mutate(m, muts...)
		if err != nil {
			return false, fmt.Errorf("build update of bridge %q other_config %v: %w", b.Name, b.OtherConfig, err)
		}
		ops = append(ops, op...)
	}
	if len(ops) == 0 {
		return false, nil
	}
	if err := c.commitWithNextCfg(ctx, fmt.Sprintf("update bridge %q", b.Name), ops); err != nil {
		return false, err
	}
	return true, nil
}

// createBridge inserts the bridge, its local port and interface, and references the
// bridge from the Open_vSwitch row, in one transaction. The references matter: Bridge,
// Port and Interface are not root tables, so OVSDB would drop an unreferenced row.
func (c *Client) createBridge(ctx context.Context, b Bridge) error {
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("create bridge %q: %w", b.Name, err)
	}
	iface := &vswitchdb.Interface{UUID: "new_iface", Name: b.Name, Type: "internal"}
	port := &vswitchdb.Port{UUID: "new_port", Name: b.Name, Interfaces: []string{iface.UUID}}
	br := &vswitchdb.Bridge{
		UUID:         "new_bridge",
		Name:         b.Name,
		DatapathType: b.DatapathType,
		OtherConfig:  mergeMap(nil, b.OtherConfig),
		ExternalIDs:  map[string]string{OwnerKey: OwnerValue},
		Ports:        []string{port.UUID},
	}
	if b.FailMode != "" {
		br.FailMode = &b.FailMode
	}
	var ops []ovsdb.Operation
	for _, row := range []model.Model{iface, port, br} {
		op, err := c.ovs.Create(row)
		if err != nil {
			return fmt.Errorf("build creation of bridge %q: %w", b.Name, err)
		}
		ops = append(ops, op...)
	}
	ovsRow := &vswitchdb.OpenvSwitch{UUID: root.UUID}
	op, err := c.ovs.Where(ovsRow).Mutate(ovsRow, model.Mutation{
		Field: &ovsRow.Bridges, Mutator: ovsdb.MutateOperationInsert, Value: []string{br.UUID},
	})
	if err != nil {
		return fmt.Errorf("build creation of bridge %q: %w", b.Name, err)
	}
	return c.commitWithNextCfg(ctx, fmt.Sprintf("create bridge %q", b.Name), append(ops, op...))
}

func validateBridge(b Bridge) error {
	if err := validName("bridge", b.Name, "internal"); err != nil {
		return err
	}
	switch b.FailMode {
	case "", vswitchdb.BridgeFailModeSecure, vswitchdb.BridgeFailModeStandalone:
	default:
		return fmt.Errorf("bridge %q: fail mode %q is neither %q nor %q", b.Name, b.FailMode,
			vswitchdb.BridgeFailModeSecure, vswitchdb.BridgeFailModeStandalone)
	}
	return checkKeys(fmt.Sprintf("bridge %q other_config", b.Name), b.OtherConfig)
}

// maxDeviceName is the longest name a Linux network device can have (IFNAMSIZ - 1).
const maxDeviceName = 15

// validName checks the name of a bridge or port whose interface has type ifaceType. A
// name that a network device cannot have is refused for interfaces backed by one
// (system ports, and internal ports, which are tap devices on the userspace datapath):
// OVSDB would accept the row and vswitchd would only then fail to open the device.
func validName(what, name, ifaceType string) error {
	if name == "" {
		return fmt.Errorf("%s with an empty name", what)
	}
	if ifaceType == "" || ifaceType == "system" || ifaceType == "internal" || ifaceType == "tap" {
		if len(name) > maxDeviceName {
			return fmt.Errorf("%s %q: a %s interface is a network device, whose name may have at most %d bytes, not %d",
				what, name, typeName(ifaceType), maxDeviceName, len(name))
		}
	}
	return nil
}

// typeName names an interface type for messages; OVSDB's "" means a system device.
func typeName(t string) string {
	if t == "" {
		return "system"
	}
	return t
}
