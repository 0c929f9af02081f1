package rows

import (
	"cmp"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Table is one NB table a Set holds, reached without knowing its row type: how the Set
// keeps its rows, and which columns ovnk writes. Tables is the one list of them; Set's
// own methods, the reconciler, snapshots, dumps and printers all go through it.
type Table interface {
	// Name is the table's name in the NB schema.
	Name() string
	// Root tables (switches, routers, port groups, meters) are deleted explicitly;
	// OVSDB removes every other row once no row refers to it.
	Root() bool
	// Indexed: the schema makes a column unique (a port group's or a meter's name), so
	// a row of another owner can stand in the way of ours.
	Indexed() bool

	// Models returns s's rows of the table, in s's order.
	Models(s *Set) []model.Model
	// Add appends m, a row of the table, to s.
	Add(s *Set, m model.Model)
	// Slice points at s's slice of the table's rows (a *[]*nbdb.X), for client.List and
	// decoders that fill it.
	Slice(s *Set) any

	// Columns names the plain columns ovnk writes and compares, in the entry's order;
	// Values returns a row's values of them, in the same order.
	Columns() []string
	Values(m model.Model) []any
	// Refs are the reference columns ovnk manages (shared: never modify the slice);
	// RefField points at one of them in m, a *[]string.
	Refs() []RefColumn
	RefField(m model.Model, ref int) *[]string
	// Changed copies into cur the plain columns whose values differ in want, and returns
	// pointers to those fields of cur: an update of exactly them. Empty and nil are
	// equal; sets compare without order.
	Changed(cur, want model.Model) []any
	// Same reports whether cur and want hold equal values in every plain column:
	// Changed would find nothing. It copies nothing, so it is safe on shared rows.
	Same(cur, want model.Model) bool
	// Clone returns a shallow copy of m, to change without touching m.
	Clone(m model.Model) model.Model
	// SetUUID sets m's _uuid (a real one, a named one, or an identity in a Set).
	SetUUID(m model.Model, uuid string)

	len(s *Set) int
	grow(s *Set, n int)
	sameRows(a, b *Set) bool
	changes(next, last *Set, added, removed func(Table, model.Model))
	sort(s *Set)
	appendAll(dst, src *Set)
	// ignored are the columns ovnk leaves alone, for the test that holds each entry to
	// the schema.
	ignored() (leftToOthers, writtenByOVN []string)
}

// schema is the NB schema the models were generated from, parsed once.
var schema = nbdb.Schema()

// Row is what every modelled row offers, through its generated getters.
type row[T any] interface {
	*T
	model.Model
	GetUUID() string
	GetExternalIDs() map[string]string
}

// tableOf is the Table whose rows are *T. newTable makes one; With, References,
// LeftToOthers and WrittenByOVN say what each column of the model is to ovnk, and a
// test holds every entry to the schema: each modelled column is named exactly once.
type tableOf[T any, P row[T]] struct {
	name    string
	field   func(*Set) *[]P
	uuid    func(*T) *string
	columns []column[T]
	refs    []ref[T]
	// refCols are refs' descriptions, for Refs.
	refCols []RefColumn
	// leftToOthers are reference columns ovnk neither writes nor compares (load
	// balancers, QoS, …: other controllers' rows); writtenByOVN are columns northd or
	// ovn-controller write.
	leftToOthers, writtenByOVN []string
	root, indexed              bool
}

// newTable describes table name, whose rows s keeps in *field(s); uuid points at a
// row's _uuid.
func newTable[T any, P row[T]](name string, field func(*Set) *[]P, uuid func(*T) *string) tableOf[T, P] {
	ts := schema.Tables[name]
	return tableOf[T, P]{name: name, field: field, uuid: uuid, root: ts.IsRoot, indexed: len(ts.Indexes) > 0}
}

// With adds plain columns ovnk writes and compares.
func (t tableOf[T, P]) With(cols ...column[T]) tableOf[T, P] {
	t.columns = append(slices.Clip(t.columns), cols...)
	return t
}

// References adds reference columns ovnk manages.
func (t tableOf[T, P]) References(refs ...ref[T]) tableOf[T, P] {
	t.refs = append(slices.Clip(t.refs), refs...)
	t.refCols = slices.Clip(t.refCols)
	for _, r := range refs {
		t.refCols = append(t.refCols, r.RefColumn)
	}
	return t
}

// LeftToOthers names reference columns ovnk leaves alone.
func (t tableOf[T, P]) LeftToOthers(columns ...string) tableOf[T, P] {
	t.leftToOthers = append(slices.Clip(t.leftToOthers), columns...)
	return t
}

// WrittenByOVN names columns OVN itself writes, never ovnk.
func (t tableOf[T, P]) WrittenByOVN(columns ...string) tableOf[T, P] {
	t.writtenByOVN = append(slices.Clip(t.writtenByOVN), columns...)
	return t
}

func (t tableOf[T, P]) Name() string  { return t.name }
func (t tableOf[T, P]) Root() bool    { return t.root }
func (t tableOf[T, P]) Indexed() bool { return t.indexed }

func (t tableOf[T, P]) Models(s *Set) []model.Model {
	rows := *t.field(s)
	out := make([]model.Model, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func (t tableOf[T, P]) Add(s *Set, m model.Model) {
	f := t.field(s)
	*f = append(*f, m.(P))
}

func (t tableOf[T, P]) Slice(s *Set) any { return t.field(s) }

func (t tableOf[T, P]) Columns() []string {
	out := make([]string, len(t.columns))
	for i, c := range t.columns {
		out[i] = c.Name
	}
	return out
}

func (t tableOf[T, P]) Values(m model.Model) []any {
	r := (*T)(m.(P))
	out := make([]any, len(t.columns))
	for i, c := range t.columns {
		out[i] = c.value(r)
	}
	return out
}

func (t tableOf[T, P]) Refs() []RefColumn { return t.refCols }

func (t tableOf[T, P]) RefField(m model.Model, ref int) *[]string {
	return t.refs[ref].field((*T)(m.(P)))
}

func (t tableOf[T, P]) Changed(cur, want model.Model) []any {
	c, w := (*T)(cur.(P)), (*T)(want.(P))
	var fields []any
	for _, col := range t.columns {
		if f := col.sync(c, w); f != nil {
			fields = append(fields, f)
		}
	}
	return fields
}

func (t tableOf[T, P]) Same(cur, want model.Model) bool {
	c, w := (*T)(cur.(P)), (*T)(want.(P))
	for _, col := range t.columns {
		if !col.same(c, w) {
			return false
		}
	}
	return true
}

func (t tableOf[T, P]) Clone(m model.Model) model.Model {
	c := *(*T)(m.(P))
	return P(&c)
}

func (t tableOf[T, P]) SetUUID(m model.Model, uuid string) { *t.uuid((*T)(m.(P))) = uuid }

func (t tableOf[T, P]) ignored() (leftToOthers, writtenByOVN []string) {
	return t.leftToOthers, t.writtenByOVN
}

func (t tableOf[T, P]) len(s *Set) int { return len(*t.field(s)) }

func (t tableOf[T, P]) grow(s *Set, n int) { *t.field(s) = slices.Grow(*t.field(s), n) }

func (t tableOf[T, P]) sameRows(a, b *Set) bool { return slices.Equal(*t.field(a), *t.field(b)) }

func (t tableOf[T, P]) sort(s *Set) {
	slices.SortFunc(*t.field(s), func(a, b P) int { return cmp.Compare(a.GetUUID(), b.GetUUID()) })
}

func (t tableOf[T, P]) appendAll(dst, src *Set) {
	d := t.field(dst)
	*d = append(*d, *t.field(src)...)
}

// The entries, in the order rows are planned and printed: a switch before the port
// group that lists its ports. Adding a table is a field of Set and an entry here.
var (
	switchTable = newTable("Logical_Switch", func(s *Set) *[]*nbdb.LogicalSwitch { return &s.Switches },
		func(r *nbdb.LogicalSwitch) *string { return &r.UUID }).
		With(
			mapOf("external_ids", func(r *nbdb.LogicalSwitch) *map[string]string { return &r.ExternalIDs }),
			scalar("name", func(r *nbdb.LogicalSwitch) *string { return &r.Name }),
			mapOf("other_config", func(r *nbdb.LogicalSwitch) *map[string]string { return &r.OtherConfig }),
		).
		References(
			children("acls", "ACL", func(r *nbdb.LogicalSwitch) *[]string { return &r.ACLs }),
			children("ports", "Logical_Switch_Port", func(r *nbdb.LogicalSwitch) *[]string { return &r.Ports }),
		).
		LeftToOthers("copp", "dns_records", "forwarding_groups", "load_balancer", "load_balancer_group", "qos_rules")

	switchPortTable = newTable("Logical_Switch_Port", func(s *Set) *[]*nbdb.LogicalSwitchPort { return &s.SwitchPorts },
		func(r *nbdb.LogicalSwitchPort) *string { return &r.UUID }).
		With(
			setOf("addresses", func(r *nbdb.LogicalSwitchPort) *[]string { return &r.Addresses }),
			optional("enabled", func(r *nbdb.LogicalSwitchPort) **bool { return &r.Enabled }),
			mapOf("external_ids", func(r *nbdb.LogicalSwitchPort) *map[string]string { return &r.ExternalIDs }),
			scalar("name", func(r *nbdb.LogicalSwitchPort) *string { return &r.Name }),
			mapOf("options", func(r *nbdb.LogicalSwitchPort) *map[string]string { return &r.Options }),
			optional("parent_name", func(r *nbdb.LogicalSwitchPort) **string { return &r.ParentName }),
			optional("peer", func(r *nbdb.LogicalSwitchPort) **string { return &r.Peer }),
			setOf("port_security", func(r *nbdb.LogicalSwitchPort) *[]string { return &r.PortSecurity }),
			optional("tag", func(r *nbdb.LogicalSwitchPort) **int { return &r.Tag }),
			optional("tag_request", func(r *nbdb.LogicalSwitchPort) **int { return &r.TagRequest }),
			scalar("type", func(r *nbdb.LogicalSwitchPort) *string { return &r.Type }),
		).
		LeftToOthers("dhcpv4_options", "dhcpv6_options", "ha_chassis_group", "mirror_rules").
		WrittenByOVN("dynamic_addresses", "up")

	routerTable = newTable("Logical_Router", func(s *Set) *[]*nbdb.LogicalRouter { return &s.Routers },
		func(r *nbdb.LogicalRouter) *string { return &r.UUID }).
		With(
			optional("enabled", func(r *nbdb.LogicalRouter) **bool { return &r.Enabled }),
			mapOf("external_ids", func(r *nbdb.LogicalRouter) *map[string]string { return &r.ExternalIDs }),
			scalar("name", func(r *nbdb.LogicalRouter) *string { return &r.Name }),
			mapOf("options", func(r *nbdb.LogicalRouter) *map[string]string { return &r.Options }),
		).
		References(
			children("nat", "NAT", func(r *nbdb.LogicalRouter) *[]string { return &r.Nat }),
			children("policies", "Logical_Router_Policy", func(r *nbdb.LogicalRouter) *[]string { return &r.Policies }),
			children("ports", "Logical_Router_Port", func(r *nbdb.LogicalRouter) *[]string { return &r.Ports }),
			children("static_routes", "Logical_Router_Static_Route", func(r *nbdb.LogicalRouter) *[]string { return &r.StaticRoutes }),
		).
		LeftToOthers("copp", "load_balancer", "load_balancer_group")

	routerPortTable = newTable("Logical_Router_Port", func(s *Set) *[]*nbdb.LogicalRouterPort { return &s.RouterPorts },
		func(r *nbdb.LogicalRouterPort) *string { return &r.UUID }).
		With(
			optional("enabled", func(r *nbdb.LogicalRouterPort) **bool { return &r.Enabled }),
			mapOf("external_ids", func(r *nbdb.LogicalRouterPort) *map[string]string { return &r.ExternalIDs }),
			setOf("ipv6_prefix", func(r *nbdb.LogicalRouterPort) *[]string { return &r.Ipv6Prefix }),
			mapOf("ipv6_ra_configs", func(r *nbdb.LogicalRouterPort) *map[string]string { return &r.Ipv6RaConfigs }),
			scalar("mac", func(r *nbdb.LogicalRouterPort) *string { return &r.MAC }),
			scalar("name", func(r *nbdb.LogicalRouterPort) *string { return &r.Name }),
			setOf("networks", func(r *nbdb.LogicalRouterPort) *[]string { return &r.Networks }),
			mapOf("options", func(r *nbdb.LogicalRouterPort) *map[string]string { return &r.Options }),
			optional("peer", func(r *nbdb.LogicalRouterPort) **string { return &r.Peer }),
		).
		References(
			children("gateway_chassis", "Gateway_Chassis", func(r *nbdb.LogicalRouterPort) *[]string { return &r.GatewayChassis }),
		).
		LeftToOthers("dhcp_relay", "ha_chassis_group").
		WrittenByOVN("status")

	routeTable = newTable("Logical_Router_Static_Route", func(s *Set) *[]*nbdb.LogicalRouterStaticRoute { return &s.Routes },
		func(r *nbdb.LogicalRouterStaticRoute) *string { return &r.UUID }).
		With(
			mapOf("external_ids", func(r *nbdb.LogicalRouterStaticRoute) *map[string]string { return &r.ExternalIDs }),
			scalar("ip_prefix", func(r *nbdb.LogicalRouterStaticRoute) *string { return &r.IPPrefix }),
			scalar("nexthop", func(r *nbdb.LogicalRouterStaticRoute) *string { return &r.Nexthop }),
			mapOf("options", func(r *nbdb.LogicalRouterStaticRoute) *map[string]string { return &r.Options }),
			optional("output_port", func(r *nbdb.LogicalRouterStaticRoute) **string { return &r.OutputPort }),
			optional("policy", func(r *nbdb.LogicalRouterStaticRoute) **nbdb.LogicalRouterStaticRoutePolicy { return &r.Policy }),
			scalar("route_table", func(r *nbdb.LogicalRouterStaticRoute) *string { return &r.RouteTable }),
			setOf("selection_fields", func(r *nbdb.LogicalRouterStaticRoute) *[]nbdb.LogicalRouterStaticRouteSelectionFields {
				return &r.SelectionFields
			}),
		).
		LeftToOthers("bfd")

	policyTable = newTable("Logical_Router_Policy", func(s *Set) *[]*nbdb.LogicalRouterPolicy { return &s.Policies },
		func(r *nbdb.LogicalRouterPolicy) *string { return &r.UUID }).
		With(
			scalar("action", func(r *nbdb.LogicalRouterPolicy) *nbdb.LogicalRouterPolicyAction { return &r.Action }),
			optional("chain", func(r *nbdb.LogicalRouterPolicy) **string { return &r.Chain }),
			mapOf("external_ids", func(r *nbdb.LogicalRouterPolicy) *map[string]string { return &r.ExternalIDs }),
			optional("jump_chain", func(r *nbdb.LogicalRouterPolicy) **string { return &r.JumpChain }),
			scalar("match", func(r *nbdb.LogicalRouterPolicy) *string { return &r.Match }),
			optional("nexthop", func(r *nbdb.LogicalRouterPolicy) **string { return &r.Nexthop }),
			setOf("nexthops", func(r *nbdb.LogicalRouterPolicy) *[]string { return &r.Nexthops }),
			mapOf("options", func(r *nbdb.LogicalRouterPolicy) *map[string]string { return &r.Options }),
			scalar("priority", func(r *nbdb.LogicalRouterPolicy) *int { return &r.Priority }),
		).
		LeftToOthers("bfd_sessions")

	natTable = newTable("NAT", func(s *Set) *[]*nbdb.NAT { return &s.NATs },
		func(r *nbdb.NAT) *string { return &r.UUID }).
		With(
			mapOf("external_ids", func(r *nbdb.NAT) *map[string]string { return &r.ExternalIDs }),
			scalar("external_ip", func(r *nbdb.NAT) *string { return &r.ExternalIP }),
			optional("external_mac", func(r *nbdb.NAT) **string { return &r.ExternalMAC }),
			scalar("external_port_range", func(r *nbdb.NAT) *string { return &r.ExternalPortRange }),
			scalar("logical_ip", func(r *nbdb.NAT) *string { return &r.LogicalIP }),
			optional("logical_port", func(r *nbdb.NAT) **string { return &r.LogicalPort }),
			scalar("match", func(r *nbdb.NAT) *string { return &r.Match }),
			mapOf("options", func(r *nbdb.NAT) *map[string]string { return &r.Options }),
			scalar("priority", func(r *nbdb.NAT) *int { return &r.Priority }),
			scalar("type", func(r *nbdb.NAT) *nbdb.NATType { return &r.Type }),
		).
		LeftToOthers("allowed_ext_ips", "exempted_ext_ips", "gateway_port")

	gatewayChassisTable = newTable("Gateway_Chassis", func(s *Set) *[]*nbdb.GatewayChassis { return &s.GatewayChassis },
		func(r *nbdb.GatewayChassis) *string { return &r.UUID }).
		With(
			scalar("chassis_name", func(r *nbdb.GatewayChassis) *string { return &r.ChassisName }),
			mapOf("external_ids", func(r *nbdb.GatewayChassis) *map[string]string { return &r.ExternalIDs }),
			scalar("name", func(r *nbdb.GatewayChassis) *string { return &r.Name }),
			mapOf("options", func(r *nbdb.GatewayChassis) *map[string]string { return &r.Options }),
			scalar("priority", func(r *nbdb.GatewayChassis) *int { return &r.Priority }),
		)

	aclTable = newTable("ACL", func(s *Set) *[]*nbdb.ACL { return &s.ACLs },
		func(r *nbdb.ACL) *string { return &r.UUID }).
		With(
			scalar("action", func(r *nbdb.ACL) *nbdb.ACLAction { return &r.Action }),
			scalar("direction", func(r *nbdb.ACL) *nbdb.ACLDirection { return &r.Direction }),
			mapOf("external_ids", func(r *nbdb.ACL) *map[string]string { return &r.ExternalIDs }),
			scalar("label", func(r *nbdb.ACL) *int { return &r.Label }),
			scalar("log", func(r *nbdb.ACL) *bool { return &r.Log }),
			scalar("match", func(r *nbdb.ACL) *string { return &r.Match }),
			optional("meter", func(r *nbdb.ACL) **string { return &r.Meter }),
			optional("name", func(r *nbdb.ACL) **string { return &r.Name }),
			mapOf("options", func(r *nbdb.ACL) *map[string]string { return &r.Options }),
			scalar("priority", func(r *nbdb.ACL) *int { return &r.Priority }),
			optional("severity", func(r *nbdb.ACL) **nbdb.ACLSeverity { return &r.Severity }),
			scalar("tier", func(r *nbdb.ACL) *int { return &r.Tier }),
		).
		LeftToOthers("sample_est", "sample_new")

	portGroupTable = newTable("Port_Group", func(s *Set) *[]*nbdb.PortGroup { return &s.PortGroups },
		func(r *nbdb.PortGroup) *string { return &r.UUID }).
		With(
			mapOf("external_ids", func(r *nbdb.PortGroup) *map[string]string { return &r.ExternalIDs }),
			scalar("name", func(r *nbdb.PortGroup) *string { return &r.Name }),
		).
		References(
			children("acls", "ACL", func(r *nbdb.PortGroup) *[]string { return &r.ACLs }),
			weak("ports", "Logical_Switch_Port", func(r *nbdb.PortGroup) *[]string { return &r.Ports }),
		)

	meterTable = newTable("Meter", func(s *Set) *[]*nbdb.Meter { return &s.Meters },
		func(r *nbdb.Meter) *string { return &r.UUID }).
		With(
			mapOf("external_ids", func(r *nbdb.Meter) *map[string]string { return &r.ExternalIDs }),
			optional("fair", func(r *nbdb.Meter) **bool { return &r.Fair }),
			scalar("name", func(r *nbdb.Meter) *string { return &r.Name }),
			scalar("unit", func(r *nbdb.Meter) *nbdb.MeterUnit { return &r.Unit }),
		).
		References(
			children("bands", "Meter_Band", func(r *nbdb.Meter) *[]string { return &r.Bands }),
		)

	meterBandTable = newTable("Meter_Band", func(s *Set) *[]*nbdb.MeterBand { return &s.MeterBands },
		func(r *nbdb.MeterBand) *string { return &r.UUID }).
		With(
			scalar("action", func(r *nbdb.MeterBand) *nbdb.MeterBandAction { return &r.Action }),
			scalar("burst_size", func(r *nbdb.MeterBand) *int { return &r.BurstSize }),
			mapOf("external_ids", func(r *nbdb.MeterBand) *map[string]string { return &r.ExternalIDs }),
			scalar("rate", func(r *nbdb.MeterBand) *int { return &r.Rate }),
		)

	// Tables are the entries, in their order.
	Tables = []Table{
		switchTable, switchPortTable, routerTable, routerPortTable, routeTable, policyTable,
		natTable, gatewayChassisTable, aclTable, portGroupTable, meterTable, meterBandTable,
	}
)
