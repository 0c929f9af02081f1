package upgradecmd

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

// midUpgrade is a cluster half-way through the upgrade: worker-1 upgraded and still
// holding the upgrade ports of green, worker-2 blocked by five pods, worker-3
// converting, worker-4's agent on --layer2-topology=v1, and worker-5 whose zone could
// not be read; one node left out of the state.
func midUpgrade() assessment {
	blocking := []string{"shop/cart-7d9f8b-x2kqp", "shop/cart-7d9f8b-zt5wd", "shop/checkout-0", "shop/db-0", "tenant-blue/api-5c8d7-q9zrm"}
	return assessment{
		Report: l2upgrade.Report{
			Nodes: []l2upgrade.NodeReport{
				{Node: "worker-1", Version: "2.0", Phase: l2upgrade.PhaseUpgraded, Artifacts: []string{"cluster_udn_green"}},
				{Node: "worker-2", Phase: l2upgrade.PhaseBlocked, Blocking: blocking},
				{Node: "worker-3", Phase: l2upgrade.PhaseConverting},
				{Node: "worker-4", Phase: l2upgrade.PhaseLegacy},
				{Node: "worker-5", Phase: l2upgrade.PhaseLegacy, ZoneError: "no ovnk agent pod on node worker-5 in namespace ovnk-system: is the agent installed (kubectl ovnk install) and scheduled there?"},
			},
			Networks: []l2upgrade.NetworkReport{
				{Network: "cluster_udn_green", Legacy: []string{"worker-2", "worker-3", "worker-4", "worker-5"}, TransitRouter: []string{"worker-1"},
					ArtifactsIn: []string{"worker-1"}, TransitSubnets: []string{"100.89.0.0/16", "fd98:1::/64"}},
				{Network: "tenant-blue_blue", Legacy: []string{"worker-2", "worker-3", "worker-4", "worker-5"}, TransitRouter: []string{"worker-1"}},
			},
			Upgraded: 1,
			Total:    5,
			Next: []string{
				"roll out the new agent on node worker-4: it runs --layer2-topology=v1",
				"drain node worker-2 (kubectl drain worker-2 --ignore-daemonsets --delete-emptydir-data): Layer2 pods shop/cart-7d9f8b-x2kqp, shop/cart-7d9f8b-zt5wd, shop/checkout-0 and 2 more still run on it",
				"node worker-5 has no Layer2 pods: its agent converts it at its next reconcile (restart the agent if it runs a release without the transit router)",
				"wait: node worker-3 is converting; its new Layer2 pods start once it is done",
				"check the agents of node worker-5: their zones could not be read",
			},
		},
		Warnings: []string{"node worker-6 is not counted: annotation k8s.ovn.org/node-id: not ready: not set yet (the leader allocates it)"},
	}
}

// complete is an upgrade that is done.
func complete() assessment {
	nodes := []string{"worker-1", "worker-2", "worker-3"}
	r := l2upgrade.Report{
		Networks: []l2upgrade.NetworkReport{{Network: "cluster_udn_green", Legacy: []string{}, TransitRouter: nodes}},
		Upgraded: 3, Total: 3, Complete: true,
	}
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, l2upgrade.NodeReport{Node: n, Version: "2.0", Phase: l2upgrade.PhaseUpgraded})
	}
	return assessment{Report: r}
}

// draw renders a on the terminal term with the environment env.
func draw(t *testing.T, a assessment, term clitest.Terminal, env map[string]string) string {
	t.Helper()
	var out bytes.Buffer
	f := clitest.NewFactory("", term, env, &out, io.Discard)
	f.Settings = &cmdutil.Settings{}
	if err := newView(f.Renderer(&out), f.Width(), f.TableWidth(), f.Colour()).render(&out, a); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestGolden draws a mid-upgrade cluster and a complete upgrade piped, on a terminal in
// colour and with NO_COLOR, at 80 and 200 columns, and compares them with
// testdata/*.golden (rewritten by -update).
func TestGolden(t *testing.T) {
	for _, report := range []struct {
		name string
		a    assessment
	}{{"mid", midUpgrade()}, {"complete", complete()}} {
		clitest.Goldens(t, "upgrade-"+report.name, clitest.GoldenTerminals, func(t *testing.T, term clitest.Terminal) string {
			return draw(t, report.a, term, nil)
		})
	}
}

// TestMidUpgradeView checks what the mid-upgrade view must say, whatever its layout.
func TestMidUpgradeView(t *testing.T) {
	wide := clitest.Lines(draw(t, midUpgrade(), clitest.Terminal{Width: 200}, nil))
	// A terminal fits the tables to its width; NO_COLOR keeps escapes out of the
	// comparison.
	narrow := draw(t, midUpgrade(), clitest.Terminal{TTY: true, Width: 80}, map[string]string{"NO_COLOR": "1"})
	piped := draw(t, midUpgrade(), clitest.Terminal{Width: 80}, nil)
	row := func(lines []string, prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starts with %q", prefix)
		return ""
	}
	// 200 columns: every blocking pod is named.
	if r := row(wide, "worker-2 "); !strings.Contains(r, "blocked") || !strings.Contains(r, "shop/cart-7d9f8b-x2kqp, shop/cart-7d9f8b-zt5wd, shop/checkout-0, shop/db-0, tenant-blue/api-5c8d7-q9zrm") {
		t.Errorf("worker-2 at 200 columns: %q", r)
	}
	// 80 columns: as many as fit, and how many more.
	r := row(clitest.Lines(narrow), "worker-2 ")
	if !strings.Contains(r, "shop/cart-7d9f8b-x… and 4 more") {
		t.Errorf("worker-2 at 80 columns does not shorten its pods to \"a, b and N more\": %q", r)
	}
	for _, want := range []string{
		"worker-1   2.0       upgraded",
		"green", // the CUDN by its name, not cluster_udn_green
		"tenant-blue/blue",
		"[######------------------------] upgraded 1/5 nodes; 1 zone holds upgrade ports; 1 zone not read",
		"2. drain node worker-2 (kubectl drain worker-2 --ignore-daemonsets",
		"worker-5: no ovnk agent pod on node worker-5",
		"node worker-6 is not counted",
	} {
		if !strings.Contains(strings.Join(wide, "\n"), want) {
			t.Errorf("the view lacks %q:\n%s", want, strings.Join(wide, "\n"))
		}
	}
	if strings.Contains(narrow, "cluster_udn_green") || strings.Contains(narrow, "Upgrade complete.") {
		t.Errorf("the view shows an OVN network name, or calls an upgrade in progress complete:\n%s", narrow)
	}
	// Piped, the tables are not fitted: every blocking pod is named, on one line.
	if r := row(clitest.Lines(piped), "worker-2 "); !strings.Contains(r, "shop/cart-7d9f8b-x2kqp, shop/cart-7d9f8b-zt5wd, shop/checkout-0, shop/db-0, tenant-blue/api-5c8d7-q9zrm") {
		t.Errorf("worker-2 piped: %q", r)
	}
	if strings.Contains(piped, "\x1b[") {
		t.Errorf("escape sequences off a terminal:\n%s", piped)
	}
}

func TestCompleteView(t *testing.T) {
	got := draw(t, complete(), clitest.Terminal{Width: 80}, nil)
	lines := clitest.Lines(got)
	if last := lines[len(lines)-1]; last != "Upgrade complete." {
		t.Errorf("last line %q, want Upgrade complete.", last)
	}
	if !strings.Contains(got, "[##############################] upgraded 3/3 nodes") || strings.Contains(got, "Next:") {
		t.Errorf("a complete upgrade has a full bar and nothing next:\n%s", got)
	}
}

// TestNoColor: NO_COLOR and a terminal give the terminal's layout without colour,
// ASCII bar included.
func TestNoColor(t *testing.T) {
	term := clitest.Terminal{TTY: true, Width: 80}
	got := draw(t, midUpgrade(), term, map[string]string{"NO_COLOR": "1"})
	if strings.Contains(got, "\x1b[") || strings.Contains(got, "█") {
		t.Errorf("NO_COLOR output has escape sequences or block characters:\n%s", got)
	}
	if coloured := draw(t, midUpgrade(), term, nil); len(clitest.Lines(got)) != len(clitest.Lines(coloured)) {
		t.Errorf("NO_COLOR on a terminal is not laid out as with colour:\n%s\n%s", got, coloured)
	}
	clitest.FitsTerminal(t, got, clitest.Terminal{TTY: true, Width: 80, NoColor: true})
}

func TestFoldList(t *testing.T) {
	line := "ns/a-long-pod-name, ns/b, ns/c, ns/d"
	for _, tc := range []struct {
		width int
		want  string
	}{
		{30, "ns/a-long-pod-name and 3 more"},
		{36, "ns/a-long-pod-name, ns/b and 2 more"},
		{41, "ns/a-long-pod-name, ns/b, ns/c and 1 more"},
		{20, "ns/a-lon… and 3 more"},
		{14, "ns/a-long-pod…"},
	} {
		got := foldList(line, tc.width)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("width %d: %q, want %q", tc.width, got, tc.want)
		}
	}
	if got := foldList("a-single-very-long-network-name", 10); got[0] != "a-single-…" {
		t.Errorf("one name: %q", got)
	}
}

func TestCountNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		want  string
	}{
		{nil, "0"},
		{[]string{"a"}, "1 (a)"},
		{[]string{"a", "b", "c"}, "3 (a, b, c)"},
		{[]string{"a", "b", "c", "d"}, "4"},
	} {
		if got := countNodes(tc.nodes); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.nodes, got, tc.want)
		}
	}
	if got := foldCount("3 (node-a, node-b, node-c)", 20); got[0] != "3" {
		t.Errorf("fold: %q, want the count alone", got)
	}
}
