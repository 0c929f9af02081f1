package nbctl_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/golden"
	"github.com/ovnk/ovnk/test/testenv"
)

// rowCounts is how many rows of each listed table a test wrote.
type rowCounts struct {
	switches, switchPorts, routers, routerPorts, routes, policies, nats, gatewayChassis int
}

// snapshotOf reads the NB back through our client once its cache holds what was
// written: the rows keyed by UUID, as ovn-nbctl sees them.
func snapshotOf(t *testing.T, ctx context.Context, nb *testenv.NB, want rowCounts) *rows.Set {
	t.Helper()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var snap *rows.Set
	err = testenv.Eventually(ctx, 10*time.Second, "all rows in the client cache", func(ctx context.Context) error {
		s, err := ovn.Snapshot(ctx, c)
		if err != nil {
			return err
		}
		got := rowCounts{len(s.Switches), len(s.SwitchPorts), len(s.Routers), len(s.RouterPorts),
			len(s.Routes), len(s.Policies), len(s.NATs), len(s.GatewayChassis)}
		if got != want {
			return fmt.Errorf("cache has %+v, want %+v", got, want)
		}
		snap = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// listCommands are the ovn-nbctl commands our printer reproduces byte for byte.
var listCommands = []struct {
	cmd   string
	print func(*nbctl.Printer, io.Writer, string) error
}{
	{"lr-route-list", (*nbctl.Printer).RouteList},
	{"lr-policy-list", (*nbctl.Printer).PolicyList},
	{"lr-nat-list", (*nbctl.Printer).NATList},
}

// requireSameLists requires our printer to print each router's routes, policies and NAT
// exactly as ovn-nbctl does. Each list is asked of ovn-nbctl for all routers in one
// run, whose output is the lists one after another.
func requireSameLists(t *testing.T, ctx context.Context, nb *testenv.NB, p *nbctl.Printer, routers []string) {
	t.Helper()
	for _, l := range listCommands {
		var args []string
		ours := make([]string, len(routers))
		for i, r := range routers {
			if i > 0 {
				args = append(args, "--")
			}
			args = append(args, l.cmd, r)
			var b bytes.Buffer
			if err := l.print(p, &b, r); err != nil {
				t.Fatal(err)
			}
			ours[i] = b.String()
		}
		theirs, err := nb.NBCtl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(ours, "") == theirs {
			continue
		}
		// Find the first router whose list differs, and show both.
		for i, r := range routers {
			want, err := nb.NBCtl(ctx, l.cmd, r)
			if err != nil {
				t.Fatal(err)
			}
			if ours[i] != want {
				t.Fatalf("%s %s differs from ovn-nbctl:\nours:\n%s\novn-nbctl:\n%s", l.cmd, r, ours[i], want)
			}
		}
		t.Fatalf("%s: the lists differ from ovn-nbctl's, but no router's alone does", l.cmd)
	}
}

// requireSameShow requires our show to print ovn-nbctl's show, once our extra lines are
// dropped and both are put in one order.
func requireSameShow(t *testing.T, ctx context.Context, nb *testenv.NB, p *nbctl.Printer) {
	t.Helper()
	want, err := nb.NBCtl(ctx, "show")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := p.Show(&got, ""); err != nil {
		t.Fatal(err)
	}
	if g, w := normaliseShow(withoutOurExtras(got.String())), normaliseShow(want); g != w {
		t.Fatalf("show differs from ovn-nbctl show beyond our extra lines:\n%s", golden.Diff(w, g))
	}
}

// withoutOurExtras drops the lines we print beyond ovn-nbctl 25.03.
func withoutOurExtras(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		extra := false
		for _, prefix := range []string{"peer: ", "requested-", "match: ", "logical port: "} {
			extra = extra || strings.HasPrefix(trimmed, prefix)
		}
		if !extra {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// normaliseShow sorts switches and routers, and the port and NAT blocks inside each:
// ovn-nbctl prints them in database order, we print them by name.
func normaliseShow(s string) string {
	var entities, blocks, cur []string
	var head string
	flushBlock := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	flushEntity := func() {
		flushBlock()
		if head != "" {
			sort.Strings(blocks)
			entities = append(entities, strings.Join(append([]string{head}, blocks...), "\n"))
		}
		head, blocks = "", nil
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case !strings.HasPrefix(line, " "):
			flushEntity()
			head = line
		case !strings.HasPrefix(line, "     "):
			flushBlock()
			cur = append(cur, line)
		default:
			cur = append(cur, line)
		}
	}
	flushEntity()
	sort.Strings(entities)
	return strings.Join(entities, "\n")
}
