package sbchassis

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/sbdb"
	"github.com/ovnk/ovnk/test/testenv"
)

// zone is one zone's NB, northd and SB, with a Syncer on the SB.
type zone struct {
	ctx    context.Context
	northd *testenv.Northd
	s      *Syncer
}

// startZone starts a zone and connects a Syncer to its Southbound.
func startZone(t *testing.T) *zone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	northd := testenv.StartNorthd(t, testenv.StartNB(t))
	s, err := Connect(ctx, []string{northd.SB.Endpoint})
	if err != nil {
		t.Fatalf("connect to SB %s: %v", northd.SB.Endpoint, err)
	}
	t.Cleanup(s.Close)
	return &zone{ctx: ctx, northd: northd, s: s}
}

// sbctl runs ovn-sbctl, failing the test on error.
func (z *zone) sbctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := z.northd.SBCtl(z.ctx, args...)
	if err != nil {
		t.Fatalf("ovn-sbctl %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

// nbctl runs ovn-nbctl, failing the test on error.
func (z *zone) nbctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := z.northd.NB.NBCtl(z.ctx, args...)
	if err != nil {
		t.Fatalf("ovn-nbctl %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

// table lists columns of every row of an SB table, as ovn-sbctl prints them bare.
func (z *zone) table(t *testing.T, table string, columns ...string) [][]string {
	t.Helper()
	out := z.sbctl(t, "--format=csv", "--data=bare", "--no-headings", "--columns="+strings.Join(columns, ","), "list", table)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("parse ovn-sbctl list %s: %v\n%s", table, err, out)
	}
	return rows
}

// dump renders every Chassis of the SB, one sorted line each, as ovn-sbctl sees it:
//
//	NAME host=HOSTNAME owner=OWNER remote=IS-REMOTE encaps=TYPE/IP/CHASSIS_NAME/OPTIONS,…
func (z *zone) dump(t *testing.T) string {
	t.Helper()
	encaps := map[string]string{}
	for _, r := range z.table(t, "Encap", "_uuid", "type", "ip", "chassis_name", "options") {
		encaps[r[0]] = strings.Join(r[1:], "/")
	}
	var lines []string
	for _, r := range z.table(t, "Chassis", "name", "hostname", "external_ids", "other_config", "encaps") {
		var es []string
		for _, u := range strings.Fields(r[4]) {
			es = append(es, encaps[u])
		}
		sort.Strings(es)
		lines = append(lines, fmt.Sprintf("%s host=%s owner=%s remote=%s encaps=%s",
			r[0], r[1], bareValue(r[2], OwnerKey), bareValue(r[3], IsRemoteKey), strings.Join(es, ",")))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// bareValue finds key in a map column printed bare ("k1=v1 k2=v2").
func bareValue(m, key string) string {
	for _, kv := range strings.Fields(m) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lines renders expected dump lines.
func lines(l ...string) string { return strings.Join(l, "\n") }

// remote is a RemoteChassis from text.
func remote(name, hostname, ip string) RemoteChassis {
	var a netip.Addr
	if ip != "" {
		a = netip.MustParseAddr(ip)
	}
	return RemoteChassis{Name: name, Hostname: hostname, EncapIP: a}
}

// awaitCache waits until the Syncer's cache holds exactly the chassis named among its
// rows (present) or none of them: rows another client (ovn-sbctl) changed reach it with
// the monitor's next update, which may come after ovn-sbctl returns.
func (z *zone) awaitCache(t *testing.T, present bool, names ...string) {
	t.Helper()
	err := testenv.Eventually(z.ctx, 10*time.Second, fmt.Sprintf("chassis %v present=%v in the Syncer's cache", names, present), func(ctx context.Context) error {
		var chassis []sbdb.Chassis
		if err := z.s.c.List(ctx, &chassis); err != nil {
			return err
		}
		cached := 0
		for _, ch := range chassis {
			if slices.Contains(names, ch.Name) {
				cached++
			}
		}
		if want := map[bool]int{true: len(names), false: 0}[present]; cached != want {
			return fmt.Errorf("%d of them cached", cached)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// syncOnce runs Sync and checks it sent exactly one transaction if it changed
// anything and none otherwise.
func (z *zone) syncOnce(t *testing.T, desired []RemoteChassis) (Result, error) {
	t.Helper()
	before := z.s.transactions
	res, err := z.s.Sync(z.ctx, desired)
	sent := z.s.transactions - before
	if want := map[bool]int{true: 1, false: 0}[res.Changed()]; sent != want {
		t.Errorf("Sync sent %d transactions for result %s, want %d", sent, res, want)
	}
	return res, err
}

// syncAgain repeats a Sync that has just been applied: it must change nothing, send
// no transaction and leave the database as it was.
func (z *zone) syncAgain(t *testing.T, desired []RemoteChassis) {
	t.Helper()
	before, state := z.s.transactions, z.dump(t)
	res, err := z.s.Sync(z.ctx, desired)
	if err != nil && !errors.Is(err, ErrForeignChassis) && !errors.Is(err, ErrEncapIPInUse) {
		t.Errorf("repeated Sync: %v", err)
	}
	if res.Changed() || z.s.transactions != before {
		t.Errorf("repeated Sync changed %s in %d transactions, want nothing", res, z.s.transactions-before)
	}
	if got := z.dump(t); got != state {
		t.Errorf("repeated Sync changed the SB:\n got:\n%s\nwant:\n%s", got, state)
	}
}

// checkDump compares the SB's chassis with want.
func (z *zone) checkDump(t *testing.T, want string) {
	t.Helper()
	if got := z.dump(t); got != want {
		t.Errorf("SB chassis:\n got:\n%s\nwant:\n%s", got, want)
	}
}

// checkResult compares a Result with the names expected, "" for none.
func checkResult(t *testing.T, got Result, created, updated, deleted string) {
	t.Helper()
	want := Result{Created: strings.Fields(created), Updated: strings.Fields(updated), Deleted: strings.Fields(deleted)}
	if !slices.Equal(got.Created, want.Created) || !slices.Equal(got.Updated, want.Updated) || !slices.Equal(got.Deleted, want.Deleted) {
		t.Errorf("result: %s, want %s", got, want)
	}
}

// leaves flattens joined errors.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// trim is strings.TrimSpace, for tool output.
func trim(s string) string { return strings.TrimSpace(s) }
