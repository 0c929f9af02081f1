package connectcmd

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
)

// connectObject is a connect of the ClusterUserDefinedNetworks labelled tier=name,
// with labels.
func connectObject(name string, labels map[string]string) *ovnkv1.ClusterNetworkConnect {
	return &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: cudnsLabelled("tier", name),
			ConnectSubnets:   []ovnkv1.ConnectSubnet{{CIDR: "172.30.0.0/16", NetworkPrefix: 24}},
			Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
		},
	}
}

// listConnects creates three connects: lf-c-one (team a, order 2), lf-c-two (team b,
// order 1) and lf-c-three (team a, no order).
func listConnects(h *harness) {
	h.T.Helper()
	h.Create(connectObject("lf-c-one", map[string]string{"team": "a", "order": "2"}))
	h.Create(connectObject("lf-c-two", map[string]string{"team": "b", "order": "1"}))
	h.Create(connectObject("lf-c-three", map[string]string{"team": "a"}))
}

func TestConnectionsListFlags(t *testing.T) {
	h := newHarness(t)
	listConnects(h)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"connections", "-o", "name"},
			"clusternetworkconnect.k8s.ovn.org/lf-c-one\nclusternetworkconnect.k8s.ovn.org/lf-c-three\nclusternetworkconnect.k8s.ovn.org/lf-c-two\n"},
		// -l is the API server's.
		{[]string{"connections", "-l", "team=a", "-o", "name"},
			"clusternetworkconnect.k8s.ovn.org/lf-c-one\nclusternetworkconnect.k8s.ovn.org/lf-c-three\n"},
		// By the label, the connect without it first.
		{[]string{"connections", "--sort-by", ".metadata.labels.order", "-o", "name"},
			"clusternetworkconnect.k8s.ovn.org/lf-c-three\nclusternetworkconnect.k8s.ovn.org/lf-c-two\nclusternetworkconnect.k8s.ovn.org/lf-c-one\n"},
		// Connects belong to no namespace: -A and -n change nothing, as in kubectl.
		{[]string{"connections", "-A", "-n", "default", "-l", "team=b", "-o", "name"},
			"clusternetworkconnect.k8s.ovn.org/lf-c-two\n"},
		{[]string{"connections", "-l", "team", "--sort-by", "{.metadata.labels.order}", "-o", "custom-columns=NAME:.metadata.name,TEAM:metadata.labels.team,ORDER:.metadata.labels.order,SUBNETS:.spec.connectSubnets[*].cidr"},
			"NAME         TEAM   ORDER    SUBNETS\n" +
				"lf-c-three   a      <none>   172.30.0.0/16\n" +
				"lf-c-two     b      1        172.30.0.0/16\n" +
				"lf-c-one     a      2        172.30.0.0/16\n"},
	} {
		if out := h.MustRun(tc.args...); out != tc.want {
			t.Errorf("%s printed:\n%s\nwant:\n%s", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	// The table in the same order.
	var first []string
	for _, l := range clitest.Lines(h.MustRun("connections", "--sort-by", ".metadata.labels.order"))[1:] {
		first = append(first, strings.Fields(l)[0])
	}
	if got := strings.Join(first, " "); got != "lf-c-three lf-c-two lf-c-one" {
		t.Errorf("connections --sort-by: rows %s", got)
	}
	out, stderr, err := h.Run("connections", "-l", "team=z")
	if err != nil || out != "" || stderr != "No connections found with labels matching -l team=z: `kubectl ovnk connect A B` connects two networks.\n" {
		t.Errorf("connections -l team=z: %v, stdout %q, stderr %q", err, out, stderr)
	}
}

func TestConnectionsBadListFlags(t *testing.T) {
	h := newHarness(t)
	listConnects(h)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"connections", "-l", "team=a=b"},
			`-l "team=a=b": found '=', expected: ',' or 'end of string': write a label selector such as tier=web, 'env in (a,b)' or '!legacy'`},
		{[]string{"connections", "--sort-by", "{.metadata.name"},
			`--sort-by "{.metadata.name": not a field path: write one such as .metadata.name or {.spec.topology}`},
		{[]string{"connections", "--sort-by", ".spec.nothing"},
			"--sort-by .spec.nothing: none of the 3 connects has this field: check its path against -o yaml"},
		{[]string{"connections", "--sort-by", ".spec.connectSubnets"},
			"--sort-by .spec.connectSubnets: ClusterNetworkConnect lf-c-one holds a list, which does not sort: give the path of a string or a number inside it"},
		{[]string{"connections", "-o", "custom-columns=NAME"},
			`-o custom-columns=NAME: column "NAME" is not HEADER:FIELD: write the columns such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp`},
	} {
		out, stderr, err := h.Run(tc.args...)
		if err == nil || err.Error() != tc.want || out != "" || stderr != "" {
			t.Errorf("%s: error %v, printed %q %q\nwant: %s", strings.Join(tc.args, " "), err, out, stderr, tc.want)
		}
	}
}

// TestConnectionsWatch: -w prints the list, then a row for each connect -l selects
// that changes, until interrupted; with -o custom-columns each changed connect's row.
func TestConnectionsWatch(t *testing.T) {
	h := newHarness(t)
	h.Create(connectObject("lf-w-one", map[string]string{"team": "a"}))
	table := h.Start(clitest.Terminal{}, "connections", "-l", "team=a", "-w")
	columns := h.Start(clitest.Terminal{}, "connections", "-l", "team=a", "-w", "-o", "custom-columns=NAME:.metadata.name,STATUS:.status.status")
	table.Await(t, "lf-w-one ", 1)
	columns.Await(t, "lf-w-one ", 1)

	h.Create(connectObject("lf-w-other", map[string]string{"team": "b"}))
	two := connectObject("lf-w-two", map[string]string{"team": "a"})
	h.Create(two)
	table.Await(t, "lf-w-two ", 1)
	two.Status.Status = ovnkv1.ConnectStatusFailure
	two.Status.Conditions = []metav1.Condition{{Type: ovnkv1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: "TooFewNetworks", Message: "none", LastTransitionTime: metav1.Now()}}
	if err := h.C.Status().Update(h.Ctx(), two); err != nil {
		t.Fatal(err)
	}
	table.Await(t, "TooFewNetworks", 1)
	if err := h.C.Delete(h.Ctx(), two); err != nil {
		t.Fatal(err)
	}
	table.Await(t, "Deleted", 1)
	columns.Await(t, "lf-w-two ", 3)
	table.Stop(t)
	columns.Stop(t)

	lines := clitest.Lines(table.Out.String())
	if strings.Contains(table.Out.String(), "lf-w-other") || len(lines) != 5 {
		t.Fatalf("want a header and 4 rows, none of lf-w-other:\n%s", table.Out.String())
	}
	for i, want := range []struct{ name, status string }{
		{"lf-w-one", "Pending"}, {"lf-w-two", "Pending"}, {"lf-w-two", "TooFewNetworks"}, {"lf-w-two", "Deleted"},
	} {
		if row := strings.Fields(lines[i+1]); row[0] != want.name || row[len(row)-3] != want.status {
			t.Errorf("row %d %q, want %s with STATUS %s", i+1, lines[i+1], want.name, want.status)
		}
	}
	want := "NAME       STATUS\n" +
		"lf-w-one   <none>\n" +
		"lf-w-two   <none>\n" +
		"lf-w-two   Failure\n" +
		"lf-w-two   Failure\n"
	if columns.Out.String() != want {
		t.Errorf("-w -o custom-columns:\n%s\nwant:\n%s", columns.Out.String(), want)
	}
}
