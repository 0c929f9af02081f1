package trace_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/trace"
)

// aclZone is one switch with ports a (10.0.0.1), b (.2) and c (.99), and a port group
// holding b alone whose ACLs are given.
func aclZone(t *testing.T, acls ...*nbdb.ACL) *trace.Cluster {
	t.Helper()
	z := &randomZone{}
	ls := z.switchNamed("ls")
	for i, name := range []string{"a", "b", "c"} {
		ip := []string{"10.0.0.1", "10.0.0.2", "10.0.0.99"}[i]
		z.port(ls, &nbdb.LogicalSwitchPort{UUID: "LSP:" + name, Name: name, Addresses: []string{macOf(netip.MustParsePrefix(ip+"/24")) + " " + ip}})
	}
	pg := &nbdb.PortGroup{UUID: "PG:b", Name: "pg_b", Ports: []string{"LSP:b"}}
	for _, a := range acls {
		pg.ACLs = append(pg.ACLs, a.UUID)
	}
	z.set.ACLs = acls
	z.set.PortGroups = []*nbdb.PortGroup{pg}
	zone := trace.ZoneFromRows("node", &z.set, trace.Extra{})
	return trace.NewCluster(trace.Zones{"node": zone}, nil, nil)
}

func run(t *testing.T, c *trace.Cluster, port, dst string) *trace.Result {
	t.Helper()
	res, err := trace.Trace(context.Background(), c, trace.Request{Node: "node", Port: port, Dst: netip.MustParseAddr(dst), Reply: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A port group's ACLs act on its switch as a whole, as ovn-nb(5) says: a drop written
// for traffic to c stops a's packet although a is not in the group.
func TestPortGroupACLsApplyToTheirSwitch(t *testing.T) {
	c := aclZone(t, &nbdb.ACL{UUID: "ACL:drop-to-c", Direction: nbdb.ACLDirectionFromLport, Priority: 1000, Match: "ip4.dst == 10.0.0.99", Action: nbdb.ACLActionDrop})
	res := run(t, c, "a", "10.0.0.99")
	if v := res.Forward.Verdict; v.Kind != trace.Dropped || v.Row == nil || v.Row.UUID != "ACL:drop-to-c" {
		t.Fatalf("verdict %+v, want dropped by the group's ACL:\n%s", v, text(t, res))
	}
}

// On a stateful switch (an allow-related ACL anywhere on it) a reply of an admitted
// connection passes without ACLs, even a drop written for the replying port's traffic.
func TestStatefulSwitchLetsRepliesThrough(t *testing.T) {
	dropFromB := &nbdb.ACL{UUID: "ACL:drop-from-b", Direction: nbdb.ACLDirectionFromLport, Priority: 1000, Match: `inport == "b"`, Action: nbdb.ACLActionDrop}
	allowToB := &nbdb.ACL{UUID: "ACL:allow-to-b", Direction: nbdb.ACLDirectionToLport, Priority: 1001, Match: "ip4.src == 10.0.0.1", Action: nbdb.ACLActionAllowRelated}
	res := run(t, aclZone(t, dropFromB, allowToB), "a", "10.0.0.2")
	if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Port != "b" {
		t.Fatalf("forward %+v:\n%s", v, text(t, res))
	}
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Port != "a" {
		t.Fatalf("the reply did not pass the stateful switch:\n%s", text(t, res))
	}
	// Without the allow-related ACL the switch is stateless: b's own packets, the reply
	// included, meet the drop.
	res = run(t, aclZone(t, dropFromB), "a", "10.0.0.2")
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Dropped || res.Reply.Verdict.Row == nil || res.Reply.Verdict.Row.UUID != "ACL:drop-from-b" {
		t.Fatalf("on a stateless switch the reply should be dropped by b's ACL:\n%s", text(t, res))
	}
}
