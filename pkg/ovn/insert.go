package ovn

import (
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// InsertOps returns the operations inserting every row of s, as one transaction's worth.
// The set's keys become OVSDB named UUIDs and its references are rewritten to them, so
// parents and children are created together; the set itself is not modified.
func InsertOps(c client.Client, s *rows.Set) ([]ovsdb.Operation, error) {
	named := map[string]string{}
	name := func(key string) string {
		if n, ok := named[key]; ok {
			return n
		}
		n := fmt.Sprintf("row%d", len(named))
		named[key] = n
		return n
	}
	refs := func(keys []string) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = name(k)
		}
		return out
	}
	var models []model.Model
	for _, r := range s.Switches {
		cp := *r
		cp.UUID, cp.Ports = name(r.UUID), refs(r.Ports)
		models = append(models, &cp)
	}
	for _, r := range s.SwitchPorts {
		cp := *r
		cp.UUID = name(r.UUID)
		models = append(models, &cp)
	}
	for _, r := range s.Routers {
		cp := *r
		cp.UUID, cp.Ports, cp.StaticRoutes, cp.Policies, cp.Nat = name(r.UUID), refs(r.Ports), refs(r.StaticRoutes), refs(r.Policies), refs(r.Nat)
		models = append(models, &cp)
	}
	for _, r := range s.RouterPorts {
		cp := *r
		cp.UUID, cp.GatewayChassis = name(r.UUID), refs(r.GatewayChassis)
		models = append(models, &cp)
	}
	for _, r := range s.Routes {
		cp := *r
		cp.UUID = name(r.UUID)
		models = append(models, &cp)
	}
	for _, r := range s.Policies {
		cp := *r
		cp.UUID = name(r.UUID)
		models = append(models, &cp)
	}
	for _, r := range s.NATs {
		cp := *r
		cp.UUID = name(r.UUID)
		if r.GatewayPort != nil {
			gp := name(*r.GatewayPort)
			cp.GatewayPort = &gp
		}
		models = append(models, &cp)
	}
	for _, r := range s.GatewayChassis {
		cp := *r
		cp.UUID = name(r.UUID)
		models = append(models, &cp)
	}
	ops := make([]ovsdb.Operation, 0, len(models))
	for _, m := range models {
		op, err := c.Create(m)
		if err != nil {
			return nil, fmt.Errorf("build insert of %T: %w", m, err)
		}
		ops = append(ops, op...)
	}
	return ops, nil
}
