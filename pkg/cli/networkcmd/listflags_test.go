package networkcmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
)

// secondaryUDN is a Layer2 Secondary UserDefinedNetwork of ns with labels.
func secondaryUDN(ns, name string, labels map[string]string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRoleSecondary, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled},
		}},
	}
}

// secondaryCUDN is a Layer2 Secondary ClusterUserDefinedNetwork of namespace ns, with
// labels.
func secondaryCUDN(name, ns string, labels map[string]string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRoleSecondary, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled},
			}},
		},
	}
}

// listCluster creates the networks the list flags are tried on: in namespace blue,
// alpha (tier web) and beta (tier db); in red, gamma (tier web); and
// ClusterUserDefinedNetwork lf-shared (tier web) of blue. Label order orders them
// otherwise than the list does (beta, alpha, lf-shared). It returns the namespaces.
func listCluster(h *harness) (blue, red string) {
	h.T.Helper()
	blue = h.Namespace("", nil)
	red = h.Namespace("", nil)
	h.cudnLater("lf-shared")
	h.Create(secondaryCUDN("lf-shared", blue, map[string]string{"tier": "web", "order": "c"}))
	h.Create(secondaryUDN(blue, "alpha", map[string]string{"tier": "web", "order": "b"}))
	h.Create(secondaryUDN(blue, "beta", map[string]string{"tier": "db", "order": "a"}))
	h.Create(secondaryUDN(red, "gamma", map[string]string{"tier": "web"}))
	return blue, red
}

func TestListSelectorAndNamespaces(t *testing.T) {
	h := newHarness(t)
	blue, red := listCluster(h)
	// Every namespace's: the cluster networks first, then by NAMESPACE/NAME.
	everyWeb := "clusteruserdefinednetwork.k8s.ovn.org/lf-shared\nuserdefinednetwork.k8s.ovn.org/alpha\nuserdefinednetwork.k8s.ovn.org/gamma\n"
	if red < blue {
		everyWeb = "clusteruserdefinednetwork.k8s.ovn.org/lf-shared\nuserdefinednetwork.k8s.ovn.org/gamma\nuserdefinednetwork.k8s.ovn.org/alpha\n"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// -l is the API server's: of both kinds, in every namespace without -n.
		{[]string{"list", "-l", "tier=web", "-o", "name"}, everyWeb},
		{[]string{"list", "-l", "tier in (db),order", "-o", "name"},
			"userdefinednetwork.k8s.ovn.org/beta\n"},
		// With -n, that namespace's networks and the cluster networks selecting it.
		{[]string{"list", "-n", blue, "-l", "tier=web", "-o", "name"},
			"clusteruserdefinednetwork.k8s.ovn.org/lf-shared\nuserdefinednetwork.k8s.ovn.org/alpha\n"},
		// -A lists every namespace whatever -n says, as in kubectl.
		{[]string{"list", "-A", "-n", blue, "-l", "tier=web", "-o", "name"}, everyWeb},
		{[]string{"list", "--all-namespaces", "-l", "tier=web", "-o", "name"}, everyWeb},
	} {
		if out := h.MustRun(tc.args...); out != tc.want {
			t.Errorf("%s printed:\n%s\nwant:\n%s", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	// The table shows the same networks; none found says which were looked for.
	table := h.MustRun("list", "-n", blue, "-l", "tier=web")
	if rows := clitest.Lines(table); len(rows) != 3 || clitest.TableRow(t, table, "lf-shared")[0] != "lf-shared" || clitest.TableRow(t, table, blue+"/alpha")[1] != "Layer2" {
		t.Errorf("list -n BLUE -l tier=web:\n%s", table)
	}
	out, stderr, err := h.Run("list", "-n", red, "-l", "tier=db")
	if err != nil || out != "" || stderr != "No networks found in namespace "+red+" with labels matching -l tier=db.\n" {
		t.Errorf("nothing matching: %v, stdout %q, stderr %q", err, out, stderr)
	}
}

func TestListSortBy(t *testing.T) {
	h := newHarness(t)
	blue, _ := listCluster(h)
	// The List and the table in the same order: by the label, beta first.
	want := "userdefinednetwork.k8s.ovn.org/beta\nuserdefinednetwork.k8s.ovn.org/alpha\nclusteruserdefinednetwork.k8s.ovn.org/lf-shared\n"
	if out := h.MustRun("list", "-n", blue, "--sort-by", ".metadata.labels.order", "-o", "name"); out != want {
		t.Errorf("--sort-by -o name:\n%s\nwant:\n%s", out, want)
	}
	var list unstructured.UnstructuredList
	if err := json.Unmarshal([]byte(h.MustRun("list", "-n", blue, "--sort-by", "{.metadata.labels.order}", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range list.Items {
		names = append(names, u.GetName())
	}
	if got := strings.Join(names, " "); got != "beta alpha lf-shared" {
		t.Errorf("--sort-by -o json items: %s", got)
	}
	var first []string
	for _, l := range clitest.Lines(h.MustRun("list", "-n", blue, "--sort-by", "metadata.labels.order"))[1:] {
		first = append(first, strings.Fields(l)[0])
	}
	if got := strings.Join(first, " "); got != blue+"/beta "+blue+"/alpha lf-shared" {
		t.Errorf("--sort-by table rows: %s", got)
	}
	// Networks without the field first (gamma has no order label).
	out := h.MustRun("list", "-l", "tier=web", "--sort-by", ".metadata.labels.order", "-o", "name")
	if want := "userdefinednetwork.k8s.ovn.org/gamma\nuserdefinednetwork.k8s.ovn.org/alpha\nclusteruserdefinednetwork.k8s.ovn.org/lf-shared\n"; out != want {
		t.Errorf("--sort-by with a network lacking the field:\n%s\nwant:\n%s", out, want)
	}
}

func TestListCustomColumns(t *testing.T) {
	h := newHarness(t)
	blue, _ := listCluster(h)
	// A field one kind lacks (a cluster network's topology is under .spec.network)
	// shows <none>.
	columns := "custom-columns=NAME:.metadata.name,TOPOLOGY:.spec.topology,TIER:metadata.labels.tier,KIND:{.kind}"
	out := h.MustRun("list", "-n", blue, "--sort-by", ".metadata.name", "-o", columns)
	want := "NAME        TOPOLOGY   TIER   KIND\n" +
		"alpha       Layer2     web    UserDefinedNetwork\n" +
		"beta        Layer2     db     UserDefinedNetwork\n" +
		"lf-shared   <none>     web    ClusterUserDefinedNetwork\n"
	if out != want {
		t.Errorf("-o custom-columns:\n%s\nwant:\n%s", out, want)
	}
	// On a terminal too: the columns chosen are never fitted, nor coloured.
	h.TTY, h.Width = true, 20
	if out := h.MustRun("list", "-n", blue, "--sort-by", ".metadata.name", "-o", columns); out != want {
		t.Errorf("-o custom-columns on a terminal:\n%s\nwant:\n%s", out, want)
	}
	// Every command printing objects takes them: create prints the network it would
	// create.
	h.TTY = false
	if out := h.MustRun("create", "delta", "-n", blue, "--subnet", "10.80.0.0/16", "--dry-run", "-o", "custom-columns=NAME:.metadata.name,KIND:.kind"); out != "NAME    KIND\ndelta   UserDefinedNetwork\n" {
		t.Errorf("create --dry-run -o custom-columns: %q", out)
	}
}

// TestGetNames: `network get NAME…` shows the networks named as describe takes them;
// a name that names none is kubectl get's error, after the networks found.
func TestGetNames(t *testing.T) {
	h := newHarness(t)
	blue, red := listCluster(h)
	table := h.MustRun("get", blue+"/alpha", "lf-shared")
	if rows := clitest.Lines(table); len(rows) != 3 {
		t.Errorf("get BLUE/alpha lf-shared:\n%s", table)
	}
	clitest.TableRow(t, table, blue+"/alpha")
	clitest.TableRow(t, table, "lf-shared")
	// One network named: the object itself, as kubectl get prints it.
	var udn ovnkv1.UserDefinedNetwork
	if err := json.Unmarshal([]byte(h.MustRun("get", "alpha", "-n", blue, "-o", "json")), &udn); err != nil || udn.Kind != "UserDefinedNetwork" || udn.Name != "alpha" {
		t.Errorf("get alpha -n BLUE -o json: %v %+v", err, udn.TypeMeta)
	}
	// Several: a List, in the order named; the same network twice, once.
	if out := h.MustRun("get", red+"/gamma", blue+"/beta", red+"/gamma", "-o", "name"); out != "userdefinednetwork.k8s.ovn.org/gamma\nuserdefinednetwork.k8s.ovn.org/beta\n" {
		t.Errorf("get of two networks -o name: %q", out)
	}
	if out := h.MustRun("list", blue+"/beta", red+"/gamma", "--sort-by", ".metadata.name", "-o", "custom-columns=NAME:.metadata.name"); out != "NAME\nbeta\ngamma\n" {
		t.Errorf("list NAME… --sort-by -o custom-columns: %q", out)
	}

	// Unknown names: the networks found, then the error naming each missing one.
	out, _, err := h.Run("get", blue+"/alpha", blue+"/nope", "-o", "name")
	if want := `no UserDefinedNetwork "nope" in namespace ` + blue + ": `kubectl ovnk network list -n " + blue + "` shows its networks"; err == nil || err.Error() != want {
		t.Errorf("get of a missing network: %v\nwant: %s", err, want)
	}
	if out != "userdefinednetwork.k8s.ovn.org/alpha\n" {
		t.Errorf("get of a found and a missing network printed %q", out)
	}
	out, _, err = h.Run("get", "nope", blue+"/nope")
	want := `no network named "nope": no ClusterUserDefinedNetwork and no UserDefinedNetwork in any namespace has that name (` + "`kubectl ovnk network list` shows them)\n" +
		`no UserDefinedNetwork "nope" in namespace ` + blue + ": `kubectl ovnk network list -n " + blue + "` shows its networks"
	if err == nil || err.Error() != want || out != "" {
		t.Errorf("get of two missing networks: %v, printed %q\nwant: %s", err, out, want)
	}
	// An ambiguous name is refused, with the way to name each; --cluster picks the
	// cluster network.
	h.Create(secondaryUDN(red, "lf-shared", nil))
	if out := h.MustRun("get", "lf-shared", "--cluster", "-o", "name"); out != "clusteruserdefinednetwork.k8s.ovn.org/lf-shared\n" {
		t.Errorf("get lf-shared --cluster: %q", out)
	}
	_, _, err = h.Run("get", "lf-shared")
	clitest.OneLine(t, err, `network "lf-shared" is ambiguous: it names ClusterUserDefinedNetwork lf-shared (name it with --cluster) and UserDefinedNetwork `+red+`/lf-shared (name it as `+red+`/lf-shared)`)
}

// TestListBadInput: each mistake fails before or instead of a listing, in one line
// naming the value and the fix.
func TestListBadInput(t *testing.T) {
	h := newHarness(t)
	blue, _ := listCluster(h)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-l", "tier=web=x"},
			`-l "tier=web=x": found '=', expected: ',' or 'end of string': write a label selector such as tier=web, 'env in (a,b)' or '!legacy'`},
		{[]string{"list", "--sort-by", "{.metadata.name"},
			`--sort-by "{.metadata.name": not a field path: write one such as .metadata.name or {.spec.topology}`},
		{[]string{"list", "-n", blue, "--sort-by", ".spec.nothing"},
			"--sort-by .spec.nothing: none of the 3 networks has this field: check its path against -o yaml"},
		{[]string{"list", "-n", blue, "--sort-by", ".metadata.labels"},
			"--sort-by .metadata.labels: ClusterUserDefinedNetwork lf-shared holds an object, which does not sort: give the path of a string or a number inside it"},
		{[]string{"list", "-o", "custom-columns=NAME"},
			`-o custom-columns=NAME: column "NAME" is not HEADER:FIELD: write the columns such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp`},
		{[]string{"list", "-o", "custom-columns=NAME:.metadata[0"},
			`-o custom-columns=NAME:.metadata[0: column NAME: field ".metadata[0": unterminated array: write one such as .metadata.name or {.spec.topology}`},
		{[]string{"get", blue + "/alpha", "-l", "tier=web"},
			"-l tier=web chooses networks by their labels, and networks are also named (" + blue + "/alpha): give one or the other"},
		{[]string{"get", blue + "/alpha", "-A"},
			"-A lists the networks of every namespace, and networks are also named (" + blue + "/alpha): name a UserDefinedNetwork as NAMESPACE/NAME, or drop the names"},
		{[]string{"list", "--cluster"},
			"--cluster says that the NAMEs given are ClusterUserDefinedNetworks, and none is given: name them, or drop --cluster"},
		{[]string{"get", blue + "/alpha", "--cluster"},
			`network "` + blue + `/alpha": --cluster takes the name of a ClusterUserDefinedNetwork, which has no namespace; drop ` + blue + `/ or --cluster`},
		{[]string{"get", "nope", "--cluster"},
			`no ClusterUserDefinedNetwork "nope": ` + "`kubectl ovnk network list` shows the networks"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h.T = t
			out, stderr, err := h.Run(tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant:  %s", err, tc.want)
			}
			if out != "" || stderr != "" {
				t.Errorf("printed %q, %q", out, stderr)
			}
		})
	}
}

// TestListWatch: -w prints the list, then a row for each network of the list that
// changes (created, its status updated, deleted, no longer serving the namespace),
// until interrupted; a network the list does not show (another namespace's) prints
// nothing.
func TestListWatch(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.Create(secondaryUDN(ns, "first", nil))
	w := h.Start(clitest.Terminal{}, "list", "-n", ns, "-w")
	w.Await(t, ns+"/first ", 1)

	h.Create(secondaryUDN(ns, "second", map[string]string{"tier": "web"}))
	w.Await(t, ns+"/second ", 1)
	first := &ovnkv1.UserDefinedNetwork{}
	if err := h.C.Get(h.Ctx(), client.ObjectKey{Namespace: ns, Name: "first"}, first); err != nil {
		t.Fatal(err)
	}
	first.Status.Conditions = []metav1.Condition{{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionFalse, Reason: "SubnetOverlap", Message: "overlaps", LastTransitionTime: metav1.Now()}}
	if err := h.C.Status().Update(h.Ctx(), first); err != nil {
		t.Fatal(err)
	}
	w.Await(t, "SubnetOverlap", 1)
	// A cluster network of another namespace does not show; one of ns does, after it
	// on the same watch.
	other := h.Namespace("", nil)
	h.cudnLater("lf-watch-other")
	h.Create(secondaryCUDN("lf-watch-other", other, nil))
	h.cudnLater("lf-watch-mine")
	h.Create(secondaryCUDN("lf-watch-mine", ns, nil))
	w.Await(t, "lf-watch-mine ", 1)
	if err := h.C.Delete(h.Ctx(), &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second"}}); err != nil {
		t.Fatal(err)
	}
	w.Await(t, "Deleted", 1)
	// A cluster network that stops serving ns leaves the list as deleted.
	mine := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: "lf-watch-mine"}, mine); err != nil {
		t.Fatal(err)
	}
	mine.Spec.NamespaceSelector.MatchLabels = map[string]string{"kubernetes.io/metadata.name": other}
	if err := h.C.Update(h.Ctx(), mine); err != nil {
		t.Fatal(err)
	}
	w.Await(t, "Deleted", 2)
	w.Stop(t)

	out := w.Out.String()
	if strings.Contains(out, "lf-watch-other") {
		t.Errorf("the watch of %s showed another namespace's network:\n%s", ns, out)
	}
	// Piped, the table is never fitted: the header once, a line per row.
	lines := clitest.Lines(out)
	if strings.Count(out, "NAME ") != 1 || len(lines) != 7 {
		t.Fatalf("watch output, want a header and 6 rows:\n%s", out)
	}
	for i, want := range []struct{ name, status string }{
		{ns + "/first", "Pending"}, {ns + "/second", "Pending"}, {ns + "/first", "SubnetOverlap"}, {"lf-watch-mine", "Pending"}, {ns + "/second", "Deleted"}, {"lf-watch-mine", "Deleted"},
	} {
		if row := strings.Fields(lines[i+1]); row[0] != want.name || row[5] != want.status {
			t.Errorf("row %d %q, want %s with STATUS %s", i+1, lines[i+1], want.name, want.status)
		}
	}
}

// TestListWatchObjects: with -o, -w prints each changed object in the format, custom
// columns under one header; -l holds for the watch too.
func TestListWatchObjects(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.Create(secondaryUDN(ns, "first", map[string]string{"tier": "web"}))
	columns := h.Start(clitest.Terminal{}, "list", "-n", ns, "-l", "tier=web", "-w", "-o", "custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier")
	names := h.Start(clitest.Terminal{}, "list", "-n", ns, "-l", "tier=web", "-w", "-o", "name")
	columns.Await(t, "first ", 1)
	names.Await(t, "/first\n", 1)

	h.Create(secondaryUDN(ns, "unlabelled", nil))
	h.Create(secondaryUDN(ns, "second", map[string]string{"tier": "web"}))
	columns.Await(t, "second ", 1)
	names.Await(t, "/second\n", 1)
	columns.Stop(t)
	names.Stop(t)
	// Each row in the widths of those before, a wider cell widening its column from
	// then on, as kubectl's rows.
	if want := "NAME    TIER\nfirst   web\nsecond   web\n"; columns.Out.String() != want {
		t.Errorf("-w -o custom-columns:\n%s\nwant:\n%s", columns.Out.String(), want)
	}
	if want := "userdefinednetwork.k8s.ovn.org/first\nuserdefinednetwork.k8s.ovn.org/second\n"; names.Out.String() != want {
		t.Errorf("-w -o name:\n%s\nwant:\n%s", names.Out.String(), want)
	}
}

// TestGetWatch: `network get NAME -w` follows that network alone.
func TestGetWatch(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.Create(secondaryUDN(ns, "mine", nil))
	h.Create(secondaryUDN(ns, "other", nil))
	w := h.Start(clitest.Terminal{}, "get", ns+"/mine", "-w", "-o", "name")
	w.Await(t, "/mine\n", 1)
	for _, name := range []string{"other", "mine"} {
		n := &ovnkv1.UserDefinedNetwork{}
		if err := h.C.Get(h.Ctx(), client.ObjectKey{Namespace: ns, Name: name}, n); err != nil {
			t.Fatal(err)
		}
		n.Labels = map[string]string{"changed": "yes"}
		if err := h.C.Update(h.Ctx(), n); err != nil {
			t.Fatal(err)
		}
	}
	w.Await(t, "/mine\n", 2)
	w.Stop(t)
	if out := w.Out.String(); out != "userdefinednetwork.k8s.ovn.org/mine\nuserdefinednetwork.k8s.ovn.org/mine\n" {
		t.Errorf("get NAME -w printed:\n%s", out)
	}
}

// TestListWatchOnATerminal: on a terminal each row fits it, in colour; when a longer
// name leaves columns out, the header of the columns left is printed again first.
func TestListWatchOnATerminal(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.Create(secondaryUDN(ns, "a", nil))
	term := clitest.Terminal{TTY: true, Width: 80}
	w := h.Start(term, "list", "-n", ns, "-w")
	w.Await(t, ns+"/a ", 1)
	long := "lf-cluster-network-with-a-longer-name-ab"
	h.cudnLater(long)
	h.Create(secondaryCUDN(long, ns, nil))
	w.Await(t, long, 1)
	w.Stop(t)
	out := w.Out.String()
	clitest.FitsTerminal(t, out, term)
	lines := clitest.Lines(out)
	if len(lines) != 4 {
		t.Fatalf("want a header and a row, twice:\n%s", out)
	}
	first, second := strings.Fields(ansi.Strip(lines[0])), strings.Fields(ansi.Strip(lines[2]))
	if first[0] != "NAME" || second[0] != "NAME" || len(second) >= len(first) {
		t.Errorf("the second header %q should have fewer columns than the first %q", second, first)
	}
}
