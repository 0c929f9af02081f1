package nbfake_test

import (
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// step is one transaction of a conformance case and the outcome OVSDB gives it: "ok",
// followed by the count of rows each update, mutate and delete matched, or the kind of
// error of the first operation result that failed ("constraint violation", …).
type step struct {
	ops  []ovsdb.Operation
	want string
}

// conformanceCase is a list of transactions run in order on an empty Northbound. Both
// servers must give every step the outcome it wants, and end with the same rows.
type conformanceCase struct {
	name  string
	steps []step
	// fakeDiffers, when set, says why the fake cannot give OVSDB's outcome; the fake
	// must then give fakeWant for the last step instead, so the difference stays
	// documented and a fix shows up as a failure to update this table.
	fakeDiffers string
	fakeWant    string
}

// UUIDs the cases give rows they insert (OVSDB accepts an insert's "uuid"), so later
// steps can refer to them; missingUUID names no row.
const (
	portUUID     = "7d2c0b4e-0c64-4f0f-9d55-000000000001"
	port2UUID    = "7d2c0b4e-0c64-4f0f-9d55-000000000002"
	lbUUID       = "7d2c0b4e-0c64-4f0f-9d55-000000000003"
	lbGroupUUID  = "7d2c0b4e-0c64-4f0f-9d55-000000000004"
	bandUUID     = "7d2c0b4e-0c64-4f0f-9d55-000000000005"
	groupAUUID   = "7d2c0b4e-0c64-4f0f-9d55-000000000006"
	groupBUUID   = "7d2c0b4e-0c64-4f0f-9d55-000000000007"
	missingUUID  = "7d2c0b4e-0c64-4f0f-9d55-0000000000ff"
	balancerName = "lb"
)

var (
	comment  = "ovnk conformance"
	zero     = 0
	durable  = false
	lockName = "ovnk"
)

func uuid(u string) ovsdb.UUID { return ovsdb.UUID{GoUUID: u} }

// named is a reference to the row an insert of the same transaction names.
func named(name string) ovsdb.UUID { return ovsdb.UUID{GoUUID: name} }

func set(elems ...any) ovsdb.OvsSet { return ovsdb.OvsSet{GoSet: elems} }

func smap(pairs ...string) ovsdb.OvsMap {
	m := ovsdb.OvsMap{GoMap: map[any]any{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		m.GoMap[pairs[i]] = pairs[i+1]
	}
	return m
}

func insert(table string, row ovsdb.Row) ovsdb.Operation {
	return ovsdb.Operation{Op: ovsdb.OperationInsert, Table: table, Row: row}
}

func insertNamed(table, name string, row ovsdb.Row) ovsdb.Operation {
	op := insert(table, row)
	op.UUIDName = name
	return op
}

func insertUUID(table, u string, row ovsdb.Row) ovsdb.Operation {
	op := insert(table, row)
	op.UUID = u
	return op
}

func where(column string, value any) []ovsdb.Condition {
	return []ovsdb.Condition{{Column: column, Function: ovsdb.ConditionEqual, Value: value}}
}

func update(table string, cond []ovsdb.Condition, row ovsdb.Row) ovsdb.Operation {
	return ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: table, Where: cond, Row: row}
}

func mutate(table string, cond []ovsdb.Condition, column string, mutator ovsdb.Mutator, value any) ovsdb.Operation {
	return ovsdb.Operation{Op: ovsdb.OperationMutate, Table: table, Where: cond,
		Mutations: []ovsdb.Mutation{{Column: column, Mutator: mutator, Value: value}}}
}

func del(table string, cond []ovsdb.Condition) ovsdb.Operation {
	return ovsdb.Operation{Op: ovsdb.OperationDelete, Table: table, Where: cond}
}

func ops(o ...ovsdb.Operation) []ovsdb.Operation { return o }

// switchWithPort inserts switch sw holding one port, p1, with the given UUID and
// columns on top of its name.
func switchWithPort(sw, portUUID string, port ovsdb.Row) []ovsdb.Operation {
	port["name"] = "p1"
	return ops(
		insertUUID("Logical_Switch_Port", portUUID, port),
		insert("Logical_Switch", ovsdb.Row{"name": sw, "ports": set(uuid(portUUID))}),
	)
}

// switchWithACL inserts switch sw with one ACL of the given priority, matching "ip4".
func switchWithACL(priority int) []ovsdb.Operation {
	return ops(
		insertNamed("ACL", "acl", ovsdb.Row{"action": "drop", "direction": "to-lport", "match": "ip4", "priority": priority}),
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "acls": set(named("acl"))}),
	)
}

// meter is a meter named name with one band of the given UUID.
func meter(name, band string) []ovsdb.Operation {
	return ops(
		insertUUID("Meter_Band", band, ovsdb.Row{"action": "drop", "rate": 10}),
		insert("Meter", ovsdb.Row{"name": name, "unit": "pktps", "bands": set(uuid(band))}),
	)
}

const (
	ok               = "ok"
	syntaxError      = "syntax error"
	constraint       = "constraint violation"
	referentialError = "referential integrity violation"
	ovsdbError       = "ovsdb error"
	notSupported     = "not supported"
)

// optionalMutation is why the fake refuses every mutation of a column that holds at
// most one value.
const optionalMutation = "libovsdb keeps a column of at most one value in a pointer, " +
	"and its mutate fails on the pointer's type; the fake refuses such mutations as " +
	"not supported rather than with libovsdb's type error"

var conformanceCases = []conformanceCase{
	// Values of the wrong type.
	{name: "a switch with a port", steps: []step{{want: ok, ops: ops(
		insertNamed("Logical_Switch_Port", "p", ovsdb.Row{"name": "p1", "addresses": set("0a:58:0a:f4:00:05 10.244.0.5")}),
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "ports": set(named("p")), "external_ids": smap("k", "v")}),
	)}}},
	{name: "a string column given a number", steps: []step{{want: syntaxError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": 5}),
	)}}},
	{name: "an integer column given a string", steps: []step{{want: syntaxError,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"tag_request": "five"})}}},
	{name: "a set column given a map", steps: []step{{want: syntaxError,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"addresses": smap("a", "b")})}}},
	{name: "a map column given a set", steps: []step{{want: syntaxError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "external_ids": set("a")}),
	)}}},
	{name: "an integer column given a fraction", steps: []step{{want: syntaxError,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"tag_request": 1.5})}}},
	{name: "a condition with a value of the wrong type", steps: []step{{want: syntaxError, ops: ops(
		update("Logical_Switch", where("name", 5), ovsdb.Row{"external_ids": smap("k", "v")}),
	)}}},

	// Constraints of the schema on values.
	{name: "an enum value outside the schema's enum", steps: []step{{want: constraint, ops: ops(
		insertNamed("Logical_Router_Static_Route", "r", ovsdb.Row{"ip_prefix": "10.0.0.0/8", "nexthop": "192.0.2.1", "policy": "sideways"}),
		insert("Logical_Router", ovsdb.Row{"name": "r", "static_routes": set(named("r"))}),
	)}}},
	{name: "an enum value outside the schema's enum, inserted by mutate", steps: []step{
		{want: ok, ops: ops(insert("Load_Balancer", ovsdb.Row{"name": balancerName}))},
		{want: constraint, ops: ops(mutate("Load_Balancer", where("name", balancerName), "selection_fields", ovsdb.MutateOperationInsert, set("sideways")))},
	}},
	{name: "an integer above the column's maxInteger", steps: []step{{want: constraint,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"tag_request": 5000})}}},
	{name: "an integer mutated above the column's maxInteger", steps: []step{
		{want: ok, ops: switchWithACL(30000)},
		{want: constraint, ops: ops(mutate("ACL", where("match", "ip4"), "priority", ovsdb.MutateOperationAdd, 5000))},
	}},
	{name: "an integer mutated within the column's range", steps: []step{
		{want: ok, ops: switchWithACL(30000)},
		{want: "ok count=1", ops: ops(mutate("ACL", where("match", "ip4"), "priority", ovsdb.MutateOperationSubtract, 5000))},
	}},
	{name: "a string shorter than the column's minLength", steps: []step{{want: constraint, ops: ops(
		insertNamed("ACL", "acl", ovsdb.Row{"name": "short", "action": "drop", "direction": "to-lport", "match": "ip4", "priority": 1000}),
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "acls": set(named("acl"))}),
	)}}},

	// Strong references.
	{name: "a strong reference to a row that does not exist", steps: []step{{want: referentialError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "ports": set(uuid(missingUUID))}),
	)}}},
	{name: "a reference to a named-uuid no operation defines", steps: []step{{want: referentialError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "ports": set(named("nosuch"))}),
	)}}},
	{name: "deleting a non-root row still strongly referenced", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{})},
		{want: referentialError, ops: ops(del("Logical_Switch_Port", where("name", "p1")))},
	}},
	{name: "deleting a root row still strongly referenced", steps: []step{
		{want: ok, ops: ops(
			insertUUID("Load_Balancer_Group", lbGroupUUID, ovsdb.Row{"name": "lbg"}),
			insert("Logical_Router", ovsdb.Row{"name": "r", "load_balancer_group": set(uuid(lbGroupUUID))}),
		)},
		{want: referentialError, ops: ops(del("Load_Balancer_Group", where("name", "lbg")))},
	}},

	// Weak references.
	{name: "a weak reference whose target is deleted", steps: []step{
		{want: ok, ops: ops(
			insertUUID("Load_Balancer", lbUUID, ovsdb.Row{"name": balancerName}),
			insert("Logical_Switch", ovsdb.Row{"name": "sw", "load_balancer": set(uuid(lbUUID))}),
		)},
		{want: "ok count=1", ops: ops(del("Load_Balancer", where("name", balancerName)))},
	}},
	{name: "a weak reference to a row that does not exist", steps: []step{{want: ok, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "load_balancer": set(uuid(missingUUID))}),
	)}}},
	{name: "a port group's weak reference to a port that is garbage-collected", steps: []step{
		{want: ok, ops: append(switchWithPort("sw", portUUID, ovsdb.Row{}),
			insert("Port_Group", ovsdb.Row{"name": "pg", "ports": set(uuid(portUUID))}))},
		{want: "ok count=1", ops: ops(mutate("Logical_Switch", where("name", "sw"), "ports", ovsdb.MutateOperationDelete, set(uuid(portUUID))))},
	}},

	// Garbage collection of non-root rows.
	{name: "a non-root row no row refers to", steps: []step{{want: ok, ops: ops(
		insert("Logical_Switch_Port", ovsdb.Row{"name": "orphan"}),
	)}}},
	{name: "a non-root row its only referrer lets go of", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{})},
		{want: "ok count=1", ops: ops(update("Logical_Switch", where("name", "sw"), ovsdb.Row{"ports": set()}))},
	}},

	// Unique indexes.
	{name: "two ports with one name in one transaction", steps: []step{{want: constraint, ops: ops(
		insertNamed("Logical_Switch_Port", "a", ovsdb.Row{"name": "dup"}),
		insertNamed("Logical_Switch_Port", "b", ovsdb.Row{"name": "dup"}),
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "ports": set(named("a"), named("b"))}),
	)}}},
	{name: "a port named like an existing port", steps: []step{
		{want: ok, ops: switchWithPort("sw1", portUUID, ovsdb.Row{})},
		{want: constraint, ops: switchWithPort("sw2", port2UUID, ovsdb.Row{})},
	}},
	{name: "two port groups with one name", steps: []step{
		{want: ok, ops: ops(insert("Port_Group", ovsdb.Row{"name": "pg"}))},
		{want: constraint, ops: ops(insert("Port_Group", ovsdb.Row{"name": "pg"}))},
	}},
	{name: "two meters with one name", steps: []step{
		{want: ok, ops: meter("m", bandUUID)},
		{want: constraint, ops: meter("m", missingUUID)},
	}},
	{name: "a row deleted and inserted again under its name in one transaction", steps: []step{
		{want: ok, ops: ops(insert("Port_Group", ovsdb.Row{"name": "pg"}))},
		{want: "ok count=1", ops: ops(
			del("Port_Group", where("name", "pg")),
			insert("Port_Group", ovsdb.Row{"name": "pg", "external_ids": smap("again", "yes")}),
		)},
	}},
	{name: "two port groups swapping names in one transaction", steps: []step{
		{want: ok, ops: ops(
			insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "a", "external_ids": smap("was", "a")}),
			insertUUID("Port_Group", groupBUUID, ovsdb.Row{"name": "b", "external_ids": smap("was", "b")}),
		)},
		{want: "ok count=1 count=1", ops: ops(
			update("Port_Group", where("_uuid", uuid(groupAUUID)), ovsdb.Row{"name": "b"}),
			update("Port_Group", where("_uuid", uuid(groupBUUID)), ovsdb.Row{"name": "a"}),
		)},
	}},

	// Sizes of sets.
	{name: "a meter with a band", steps: []step{{want: ok, ops: meter("m", bandUUID)}}},
	{name: "a meter whose bands are left out", steps: []step{{want: referentialError, ops: ops(
		insert("Meter", ovsdb.Row{"name": "m", "unit": "kbps"}),
	)}}},
	{name: "a meter with an empty set of bands", steps: []step{{want: syntaxError, ops: ops(
		insert("Meter", ovsdb.Row{"name": "m", "unit": "kbps", "bands": set()}),
	)}}},
	{name: "a meter's last band deleted by mutate", steps: []step{
		{want: ok, ops: meter("m", bandUUID)},
		{want: constraint, ops: ops(mutate("Meter", where("name", "m"), "bands", ovsdb.MutateOperationDelete, set(uuid(bandUUID))))},
	}},
	{name: "two values in a column of at most one", steps: []step{{want: syntaxError,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"tag_request": set(1, 2)})}}},
	{name: "a value inserted by mutate into a full column of at most one", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{"tag_request": 5})},
		{want: constraint, ops: ops(mutate("Logical_Switch_Port", where("name", "p1"), "tag_request", ovsdb.MutateOperationInsert, set(7)))},
	}, fakeWant: notSupported, fakeDiffers: optionalMutation},
	{name: "a value inserted by mutate into an empty column of at most one", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{})},
		{want: "ok count=1", ops: ops(mutate("Logical_Switch_Port", where("name", "p1"), "tag_request", ovsdb.MutateOperationInsert, set(7)))},
	}, fakeWant: notSupported, fakeDiffers: optionalMutation},
	{name: "a set with a duplicate element", steps: []step{{want: ovsdbError,
		ops: switchWithPort("sw", portUUID, ovsdb.Row{"addresses": set("a", "a")})}}},

	// Mutations of sets and maps.
	{name: "mutate insert and delete on a set", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{"addresses": set("a", "b")})},
		{want: "ok count=1 count=1 count=1", ops: ops(
			mutate("Logical_Switch_Port", where("name", "p1"), "addresses", ovsdb.MutateOperationInsert, set("c", "a")),
			mutate("Logical_Switch_Port", where("name", "p1"), "addresses", ovsdb.MutateOperationDelete, set("b")),
			mutate("Logical_Switch_Port", where("name", "p1"), "addresses", ovsdb.MutateOperationDelete, set("absent")),
		)},
	}},
	{name: "mutate insert on a map keeps the value of a key already there", steps: []step{
		{want: ok, ops: ops(insert("Logical_Switch", ovsdb.Row{"name": "sw", "other_config": smap("a", "1")}))},
		{want: "ok count=1", ops: ops(
			mutate("Logical_Switch", where("name", "sw"), "other_config", ovsdb.MutateOperationInsert, smap("a", "9", "b", "2")),
		)},
	}},
	{name: "mutate delete on a map by keys and by pairs", steps: []step{
		{want: ok, ops: ops(insert("Logical_Switch", ovsdb.Row{"name": "sw",
			"other_config": smap("a", "1", "b", "2"), "external_ids": smap("x", "1", "y", "2")}))},
		{want: "ok count=1 count=1", ops: ops(
			mutate("Logical_Switch", where("name", "sw"), "other_config", ovsdb.MutateOperationDelete, set("b")),
			// Only pairs whose value matches go: y stays.
			mutate("Logical_Switch", where("name", "sw"), "external_ids", ovsdb.MutateOperationDelete, smap("x", "1", "y", "other")),
		)},
	}},

	{name: "a mutate inserting a number into a set of strings", steps: []step{
		{want: ok, ops: switchWithPort("sw", portUUID, ovsdb.Row{})},
		{want: syntaxError, ops: ops(mutate("Logical_Switch_Port", where("name", "p1"), "addresses", ovsdb.MutateOperationInsert, set(5)))},
	}},
	{name: "arithmetic on a string column", steps: []step{
		{want: ok, ops: ops(insert("Logical_Switch", ovsdb.Row{"name": "sw"}))},
		{want: syntaxError, ops: ops(mutate("Logical_Switch", where("name", "sw"), "name", ovsdb.MutateOperationAdd, 1))},
	}},

	// Rows that do not exist.
	{name: "an update of a row that does not exist", steps: []step{{want: "ok count=0", ops: ops(
		update("Logical_Switch", where("name", "nope"), ovsdb.Row{"external_ids": smap("k", "v")}),
	)}}},
	{name: "a mutate and a delete of rows that do not exist", steps: []step{{want: "ok count=0 count=0", ops: ops(
		mutate("Logical_Switch", where("name", "nope"), "external_ids", ovsdb.MutateOperationInsert, smap("k", "v")),
		del("Logical_Switch", where("name", "nope")),
	)}}},

	// Selects.
	{name: "a select of chosen columns", steps: []step{
		{want: ok, ops: ops(insert("Logical_Switch", ovsdb.Row{"name": "sw", "other_config": smap("a", "1")}))},
		{want: "ok rows=1 columns=name,ports", ops: ops(ovsdb.Operation{Op: ovsdb.OperationSelect,
			Table: "Logical_Switch", Where: where("name", "sw"), Columns: []string{"name", "ports"}})},
	}, fakeWant: "ok rows=1 columns=_uuid,name,ports", fakeDiffers: "libovsdb's server reads the rows of a new monitor " +
		"through a select of the monitored columns and needs their _uuid, so the fake's selects always return _uuid"},
	{name: "a select of every column", steps: []step{
		{want: ok, ops: ops(insert("Meter", ovsdb.Row{"name": "m", "unit": "kbps", "bands": set(named("b"))}),
			insertNamed("Meter_Band", "b", ovsdb.Row{"action": "drop", "rate": 1}))},
		{want: "ok rows=1 columns=_uuid,bands,external_ids,fair,name,unit", ops: ops(ovsdb.Operation{Op: ovsdb.OperationSelect, Table: "Meter"})},
	}},

	// Atomicity.
	{name: "an operation that fails undoes the operations before it", steps: []step{{want: syntaxError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "kept?"}),
		insert("Logical_Switch", ovsdb.Row{"name": 5}),
	)}}},
	{name: "a failure at commit undoes every operation", steps: []step{{want: referentialError, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "kept?"}),
		insert("Logical_Switch", ovsdb.Row{"name": "sw", "ports": set(uuid(missingUUID))}),
	)}}},
	{name: "a condition comparing with a value outside the enum", steps: []step{{want: constraint, ops: ops(
		update("Logical_Router_Static_Route", where("policy", "sideways"), ovsdb.Row{"nexthop": "192.0.2.1"}),
	)}}},
	{name: "a condition comparing with a number out of range", steps: []step{{want: constraint, ops: ops(
		update("ACL", where("priority", 40000), ovsdb.Row{"match": "ip6"}),
	)}}},
	{name: "an insert under a UUID in use", steps: []step{
		{want: ok, ops: ops(insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "a"}))},
		{want: "duplicate uuid", ops: ops(insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "b"}))},
	}},
	{name: "two inserts under one UUID in one transaction", steps: []step{{want: "duplicate uuid", ops: ops(
		insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "a"}),
		insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "b"}),
	)}}},
	{name: "an insert under the UUID of a row of another table", steps: []step{
		{want: ok, ops: ops(insertUUID("Port_Group", groupAUUID, ovsdb.Row{"name": "a"}))},
		{want: ok, ops: ops(insertUUID("Logical_Switch", groupAUUID, ovsdb.Row{"name": "sw"}))},
	}},
	{name: "a comment", steps: []step{{want: ok, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw"}),
		ovsdb.Operation{Op: ovsdb.OperationComment, Comment: &comment},
	)}}},
	{name: "a commit", steps: []step{{want: ok, ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw"}),
		ovsdb.Operation{Op: ovsdb.OperationCommit, Durable: &durable},
	)}}},
	{name: "an abort", steps: []step{{want: "aborted", ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw"}),
		ovsdb.Operation{Op: ovsdb.OperationAbort},
	)}}},
	{name: "an assert of a lock the client does not hold", steps: []step{{want: "not owner", ops: ops(
		insert("Logical_Switch", ovsdb.Row{"name": "sw"}),
		ovsdb.Operation{Op: ovsdb.OperationAssert, Lock: &lockName},
	)}}},
	{name: "a wait that times out", steps: []step{{want: "timed out", ops: ops(
		ovsdb.Operation{Op: ovsdb.OperationWait, Table: "Logical_Switch", Timeout: &zero, Where: where("name", "sw"),
			Columns: []string{"name"}, Until: "==", Rows: []ovsdb.Row{{"name": "sw"}}},
	)}}},
	{name: "a read-only column updated", steps: []step{{want: constraint, ops: ops(
		update("Logical_Switch", where("name", "nope"), ovsdb.Row{"_uuid": uuid(missingUUID)}),
	)}}},
}
