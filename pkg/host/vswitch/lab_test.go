package vswitch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/test/testenv"
)

// lab is a real OVS (ovsdb-server and a userspace ovs-vswitchd) whose vswitchd runs in a
// network namespace of its own, so the tap devices of its internal ports can be looked
// at there, and a client of ours connected to it.
type lab struct {
	ns  *testenv.Netns
	ovs *testenv.OVS
	c   *vswitch.Client
}

func newLab(t *testing.T) *lab {
	t.Helper()
	ns := testenv.NewNetns(t)
	ovs := testenv.StartOVSInNetns(t, ns, nil)
	c, err := vswitch.Connect(testCtx(t), ovs.DB.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &lab{ns: ns, ovs: ovs, c: c}
}

// testCtx bounds everything a test does against the servers.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// vsctl runs ovs-vsctl against the lab's database: tests observe with it (and seed what
// "someone else" made), the package under test never uses it.
func (l *lab) vsctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := l.ovs.VSCtl(testCtx(t), args...)
	if err != nil {
		t.Fatalf("ovs-vsctl %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

// record reads columns of one row as ovs-vsctl sees it, each rendered as text: maps as
// {k=v, …} and sets as [a, …] in sorted order, scalars as they are. It is an observer
// independent of libovsdb, so a test compares the server's rows, not our cache.
func (l *lab) record(t *testing.T, table, name string, columns ...string) string {
	t.Helper()
	out := l.vsctl(t, "--format=json", "--columns="+strings.Join(columns, ","), "list", table, name)
	var res struct {
		Headings []string            `json:"headings"`
		Data     [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Data) != 1 {
		t.Fatalf("ovs-vsctl list %s %s: unexpected output %q (%v)", table, name, out, err)
	}
	var fields []string
	for i, h := range res.Headings {
		fields = append(fields, h+"="+renderDatum(t, res.Data[0][i]))
	}
	return strings.Join(fields, " ")
}

// renderDatum renders one OVSDB JSON value (RFC 7047 5.1). A set of one element comes
// as the bare element (RFC 7047 allows it, OVS does it), and is rendered as such.
func renderDatum(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return renderValue(v)
}

func renderValue(v any) string {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return fmt.Sprint(v)
	}
	switch pair[0] {
	case "uuid", "named-uuid":
		return fmt.Sprint(pair[1])
	case "set":
		var elems []string
		for _, e := range pair[1].([]any) {
			elems = append(elems, renderValue(e))
		}
		slices.Sort(elems)
		return "[" + strings.Join(elems, ", ") + "]"
	case "map":
		m := map[string]string{}
		for _, kv := range pair[1].([]any) {
			kv := kv.([]any)
			m[renderValue(kv[0])] = renderValue(kv[1])
		}
		return renderMap(m)
	}
	return fmt.Sprint(v)
}

// renderMap renders a map as record does.
func renderMap(m map[string]string) string {
	var kvs []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kvs = append(kvs, k+"="+m[k])
	}
	return "{" + strings.Join(kvs, ", ") + "}"
}

// noTransaction runs a call that must find nothing to change: it must report no change
// and send no transaction at all.
func noTransaction(t *testing.T, c *vswitch.Client, what string, call func() (bool, error)) {
	t.Helper()
	before := c.Transactions()
	changed, err := call()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if changed {
		t.Errorf("%s: changed = true, want false (nothing to change)", what)
	}
	if sent := c.Transactions() - before; sent != 0 {
		t.Errorf("%s: sent %d transactions, want none", what, sent)
	}
}

// waitLink waits until the namespace has a network device named dev and returns its
// `ip -o link show` line.
func (l *lab) waitLink(t *testing.T, dev string) string {
	t.Helper()
	var line string
	err := testenv.Eventually(testCtx(t), 10*time.Second, "device "+dev+" in "+l.ns.Name, func(ctx context.Context) error {
		out, err := l.ns.IP(ctx, "-o", "link", "show", "dev", dev)
		line = strings.TrimSpace(out)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return line
}
