package sbchassis

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/sbdb"
)

// TestSyncLeavesForeignChassis puts rows we do not own in the SB — the local chassis
// as ovn-controller would register it, a remote one made by hand, and one that carries
// our owner key but lost is-remote — and checks that Sync never touches them, reports
// each desired chassis it had to skip, and still syncs every other chassis.
func TestSyncLeavesForeignChassis(t *testing.T) {
	z := startZone(t)
	z.sbctl(t, "chassis-add", "local", "geneve", "10.0.0.1")
	z.sbctl(t, "set", "Chassis", "local", "hostname=host-local")
	z.sbctl(t, "chassis-add", "by-hand", "geneve", "10.0.0.5")
	z.sbctl(t, "set", "Chassis", "by-hand", "other_config:is-remote=true")
	z.sbctl(t, "chassis-add", "taken-over", "geneve", "10.0.0.6")
	z.sbctl(t, "set", "Chassis", "taken-over", "external_ids:"+OwnerKey+"="+Owner)
	foreign := lines(
		"by-hand host= owner= remote=true encaps=geneve/10.0.0.5/by-hand/csum=true",
		"local host=host-local owner= remote= encaps=geneve/10.0.0.1/local/csum=true",
		"taken-over host= owner=ovnk-agent remote= encaps=geneve/10.0.0.6/taken-over/csum=true")
	z.checkDump(t, foreign)
	z.awaitCache(t, true, "local", "by-hand", "taken-over")

	// Only ours is wanted, and none of theirs is ours to delete.
	res, err := z.syncOnce(t, []RemoteChassis{remote("node-f", "host-f", "10.0.0.7")})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	checkResult(t, res, "node-f", "", "")
	nodeF := "node-f host=host-f owner=ovnk-agent remote=true encaps=geneve/10.0.0.7/node-f/csum=true"
	z.checkDump(t, lines(
		"by-hand host= owner= remote=true encaps=geneve/10.0.0.5/by-hand/csum=true",
		"local host=host-local owner= remote= encaps=geneve/10.0.0.1/local/csum=true",
		nodeF,
		"taken-over host= owner=ovnk-agent remote= encaps=geneve/10.0.0.6/taken-over/csum=true"))

	desired := []RemoteChassis{
		remote("local", "host-x", "10.0.0.11"),
		remote("node-a", "host-a", "10.0.0.2"),
		remote("by-hand", "host-y", "10.0.0.12"),
		remote("node-b", "host-b", "10.0.0.1"), // the local chassis's address
		remote("taken-over", "host-t", "10.0.0.6"),
		remote("node-c", "host-c", "10.0.0.3"),
		remote("node-f", "host-f", "10.0.0.5"), // by-hand's address: node-f stays as it is…
		remote("node-g", "host-g", "10.0.0.7"), // …so node-g cannot have node-f's address
	}
	res, err = z.syncOnce(t, desired)
	checkResult(t, res, "node-a node-c", "", "")
	z.checkDump(t, lines(
		"by-hand host= owner= remote=true encaps=geneve/10.0.0.5/by-hand/csum=true",
		"local host=host-local owner= remote= encaps=geneve/10.0.0.1/local/csum=true",
		"node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.2/node-a/csum=true",
		"node-c host=host-c owner=ovnk-agent remote=true encaps=geneve/10.0.0.3/node-c/csum=true",
		nodeF,
		"taken-over host= owner=ovnk-agent remote= encaps=geneve/10.0.0.6/taken-over/csum=true"))
	if !errors.Is(err, ErrForeignChassis) || !errors.Is(err, ErrEncapIPInUse) {
		t.Fatalf("Sync error %v, want both ErrForeignChassis and ErrEncapIPInUse", err)
	}
	var got []string
	for _, e := range leaves(err) {
		var fc *ForeignChassisError
		var inUse *EncapIPInUseError
		switch {
		case errors.As(e, &fc):
			got = append(got, "foreign "+fc.Name+": "+fc.Holder)
		case errors.As(e, &inUse):
			got = append(got, "ip in use "+inUse.Chassis+" "+inUse.IP+" by "+inUse.Holder)
		default:
			t.Errorf("unexpected error %v", e)
		}
	}
	want := []string{
		"foreign by-hand: a remote chassis without the ovnk.io/owner tag (made by hand or by another tool)",
		"foreign local: a local chassis (no other_config:is-remote=true; ovn-controller registers these)",
		"ip in use node-b 10.0.0.1 by local",
		"ip in use node-f 10.0.0.5 by by-hand",
		"ip in use node-g 10.0.0.7 by node-f",
		"foreign taken-over: a local chassis (no other_config:is-remote=true; ovn-controller registers these)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("skipped:\n %s\nwant:\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	if msg := err.Error(); !strings.Contains(msg, `chassis "local" (row `) || !strings.Contains(msg, `chassis "node-b": geneve encap ip 10.0.0.1 is kept by chassis "local"`) {
		t.Errorf("error text does not name the chassis and holders: %s", msg)
	}
	// The skipped chassis stay skipped without a transaction.
	z.syncAgain(t, desired)

	// Once the foreign rows are gone, the same desired state syncs completely.
	z.sbctl(t, "chassis-del", "local")
	z.sbctl(t, "chassis-del", "by-hand")
	z.sbctl(t, "chassis-del", "taken-over")
	z.awaitCache(t, false, "local", "by-hand", "taken-over")
	res, err = z.syncOnce(t, desired)
	if err != nil {
		t.Fatalf("Sync after removing the foreign rows: %v", err)
	}
	checkResult(t, res, "by-hand local node-b node-g taken-over", "node-f", "")
	z.syncAgain(t, desired)

	// And ours are deleted again, while a new foreign row stays.
	z.sbctl(t, "chassis-add", "other", "vxlan", "10.0.0.2")
	res, err = z.syncOnce(t, nil)
	if err != nil {
		t.Fatalf("Sync(nil): %v", err)
	}
	checkResult(t, res, "", "", "by-hand local node-a node-b node-c node-f node-g taken-over")
	z.checkDump(t, "other host= owner= remote= encaps=vxlan/10.0.0.2/other/csum=true")
}

// TestStaleReadAbortsTransaction plans from rows read before someone else took one of
// our chassis over, as a Sync whose cache lags the server would, and checks that the
// server refuses the whole transaction instead of deleting the row that is no longer
// ours, and that the next Sync, planning from the fresh rows, leaves it alone.
func TestStaleReadAbortsTransaction(t *testing.T) {
	z := startZone(t)
	if _, err := z.syncOnce(t, []RemoteChassis{remote("node-a", "host-a", "10.0.0.1"), remote("node-b", "host-b", "10.0.0.2")}); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	var chassis []sbdb.Chassis
	var encaps []sbdb.Encap
	if err := z.s.c.List(z.ctx, &chassis); err != nil {
		t.Fatalf("list chassis: %v", err)
	}
	if err := z.s.c.List(z.ctx, &encaps); err != nil {
		t.Fatalf("list encaps: %v", err)
	}
	z.sbctl(t, "remove", "Chassis", "node-a", "external_ids", OwnerKey)
	state := z.dump(t)

	stale := makePlan(nil, chassis, encaps)
	checkResult(t, stale.result(), "", "", "node-a node-b")
	_, err := z.s.apply(z.ctx, stale)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("applying a plan from stale rows: %v, want the wait on node-a to fail the transaction", err)
	}
	t.Logf("stale plan refused: %v", err)
	z.checkDump(t, state)

	res, err := z.syncOnce(t, nil)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	checkResult(t, res, "", "", "node-b")
	z.checkDump(t, "node-a host=host-a owner= remote=true encaps=geneve/10.0.0.1/node-a/csum=true")

	// A chassis of the same name appearing after the read fails the insert on
	// Chassis's name index: again the whole transaction, the other insert included.
	racing := makePlan([]wanted{{name: "node-c", ip: "10.0.0.3"}, {name: "node-d", ip: "10.0.0.4"}}, nil, nil)
	z.sbctl(t, "chassis-add", "node-d", "geneve", "10.0.0.40")
	state = z.dump(t)
	_, err = z.s.apply(z.ctx, racing)
	if err == nil || !strings.Contains(err.Error(), "constraint violation") {
		t.Fatalf("inserting a chassis that appeared after the read: %v, want a constraint violation", err)
	}
	t.Logf("racing insert refused: %v", err)
	z.checkDump(t, state)
}
