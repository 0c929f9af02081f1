package ovn

import (
	"context"
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Snapshot copies the tables of rows.Set from the client's cache. The rows keep their
// real UUIDs, so references between them resolve within the set. The copy is taken
// table by table from a cache that may be updating: callers that need one consistent
// view take it while no transaction is expected, or compare two snapshots.
func Snapshot(ctx context.Context, c client.Client) (*rows.Set, error) {
	s := &rows.Set{}
	lists := []struct {
		table string
		dst   any
	}{
		{"Logical_Switch", &s.Switches},
		{"Logical_Switch_Port", &s.SwitchPorts},
		{"Logical_Router", &s.Routers},
		{"Logical_Router_Port", &s.RouterPorts},
		{"Logical_Router_Static_Route", &s.Routes},
		{"Logical_Router_Policy", &s.Policies},
		{"NAT", &s.NATs},
		{"Gateway_Chassis", &s.GatewayChassis},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.dst); err != nil {
			return nil, fmt.Errorf("snapshot NB table %s: %w", l.table, err)
		}
	}
	s.Sort()
	return s, nil
}
