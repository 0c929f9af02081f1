package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// The flags of lists, tested on objects built here: the commands' tests run them
// against the API server.

// udn is a UserDefinedNetwork with labels (nil for none) and subnets.
func udn(name string, labels map[string]string, subnets ...ovnkv1.CIDR) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "blue", Labels: labels},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRoleSecondary, Subnets: subnets,
		}},
	}
}

// objectOutput parses -o format on a command printing objects and checks it.
func objectOutput(t *testing.T, format string) (*Output, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	o := AddOutputFlag(cmd, "wide")
	if err := cmd.ParseFlags([]string{"-o", format}); err != nil {
		t.Fatal(err)
	}
	return o, o.Validate()
}

func TestCustomColumns(t *testing.T) {
	objs := []client.Object{
		udn("tenant", map[string]string{"tier": "web"}, "10.0.0.0/16", "fd00::/64"),
		udn("storage", nil),
	}
	// Every way kubectl lets a field be written; a field the object lacks shows
	// <none>; several values are comma-separated.
	o, err := objectOutput(t, "custom-columns=NAME:.metadata.name,KIND:kind,TIER:{.metadata.labels.tier},SUBNETS:{spec.layer2.subnets[*]}")
	if err != nil {
		t.Fatal(err)
	}
	want := "NAME      KIND                 TIER     SUBNETS\n" +
		"tenant    UserDefinedNetwork   web      10.0.0.0/16,fd00::/64\n" +
		"storage   UserDefinedNetwork   <none>   <none>\n"
	var out bytes.Buffer
	if err := o.PrintList(objs, &out); err != nil || out.String() != want {
		t.Errorf("PrintList: %v\n%s\nwant:\n%s", err, out.String(), want)
	}
	// One object, as a command prints what it created.
	out.Reset()
	if err := o.PrintObject(objs[1], &out); err != nil || !strings.HasPrefix(out.String(), "NAME ") || !strings.Contains(out.String(), "\nstorage ") {
		t.Errorf("PrintObject: %v\n%s", err, out.String())
	}
	// A watch prints the header with its list, even of no object, and none after;
	// each row keeps the widths of those before, or widens them (as kubectl's).
	o, _ = objectOutput(t, "custom-columns=NAME:.metadata.name,KIND:kind,TIER:{.metadata.labels.tier}")
	out.Reset()
	if err := o.PrintWatchList(nil, &out); err != nil || out.String() != "NAME   KIND   TIER\n" {
		t.Errorf("PrintWatchList of none: %v %q", err, out.String())
	}
	out.Reset()
	if err := o.PrintWatched(objs[0], &out); err != nil || out.String() != "tenant   UserDefinedNetwork   web\n" {
		t.Errorf("PrintWatched: %v %q", err, out.String())
	}
	out.Reset()
	if err := o.PrintWatched(udn("a", map[string]string{"tier": "db"}), &out); err != nil || out.String() != "a        UserDefinedNetwork   db\n" {
		t.Errorf("PrintWatched of a narrower row: %v %q", err, out.String())
	}
}

func TestCustomColumnsFile(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good", "NAME   TOPOLOGY\n.metadata.name   {.spec.topology}\n")
	o, err := objectOutput(t, "custom-columns-file="+good)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := o.PrintList([]client.Object{udn("tenant", nil)}, &out); err != nil || out.String() != "NAME     TOPOLOGY\ntenant   Layer2\n" {
		t.Errorf("custom-columns-file: %v %q", err, out.String())
	}

	oneLine := file("one-line", "NAME TOPOLOGY\n")
	mismatch := file("mismatch", "NAME TOPOLOGY\n.metadata.name\n")
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct{ format, want string }{
		{"custom-columns-file=" + oneLine, "-o custom-columns-file=" + oneLine + `: the file must hold two lines, the headers and then their fields, each separated by spaces (such as "NAME CREATED" then ".metadata.name .metadata.creationTimestamp")`},
		{"custom-columns-file=" + mismatch, "-o custom-columns-file=" + mismatch + ": 2 headers but 1 fields: give one field per header"},
		{"custom-columns-file=" + missing, "-o custom-columns-file=" + missing + ": open " + missing + ": no such file or directory"},
	} {
		if _, err := objectOutput(t, tc.format); err == nil || err.Error() != tc.want {
			t.Errorf("-o %s: %v\nwant: %s", tc.format, err, tc.want)
		}
	}
}

func TestCustomColumnsErrors(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"custom-columns", "-o custom-columns names no columns: give HEADER:FIELD pairs, such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp"},
		{"custom-columns=", "-o custom-columns= names no columns: give HEADER:FIELD pairs, such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp"},
		{"custom-columns=NAME", `-o custom-columns=NAME: column "NAME" is not HEADER:FIELD: write the columns such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp`},
		{"custom-columns=NAME:.metadata.name,AGE:", `-o custom-columns=NAME:.metadata.name,AGE:: column "AGE:" is not HEADER:FIELD: write the columns such as -o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp`},
		{"custom-columns=NAME:{.metadata.name", `-o custom-columns=NAME:{.metadata.name: column NAME: field "{.metadata.name": not a field path: write one such as .metadata.name or {.spec.topology}`},
		{"custom-columns=NAME:.metadata[name", `-o custom-columns=NAME:.metadata[name: column NAME: field ".metadata[name": unterminated array: write one such as .metadata.name or {.spec.topology}`},
	} {
		if _, err := objectOutput(t, tc.format); err == nil || err.Error() != tc.want {
			t.Errorf("-o %s: %v\nwant: %s", tc.format, err, tc.want)
		}
	}
}

// TestCustomColumnsOnlyForObjects: a view that is not objects neither offers custom
// columns nor takes them; one of objects offers them in its help and errors.
func TestCustomColumnsOnlyForObjects(t *testing.T) {
	_, err := printData(t, "custom-columns=NAME:.node")
	if err == nil || !strings.HasPrefix(err.Error(), `unknown output format "custom-columns=NAME:.node": use one of wide, json, yaml, go-template`) || strings.Contains(err.Error(), "custom-columns,") {
		t.Errorf("-o custom-columns of a view: %v", err)
	}
	cmd := &cobra.Command{Use: "x"}
	AddDataOutputFlag(cmd)
	if strings.Contains(cmd.Flag("output").Usage, "custom-columns") {
		t.Errorf("a view's -o offers custom columns: %s", cmd.Flag("output").Usage)
	}
	cmd = &cobra.Command{Use: "x"}
	AddOutputFlag(cmd)
	if !strings.Contains(cmd.Flag("output").Usage, "jsonpath-file, custom-columns, custom-columns-file (default: a table)") {
		t.Errorf("-o of objects does not offer custom columns: %s", cmd.Flag("output").Usage)
	}
	if _, err := objectOutput(t, "xml"); err == nil || !strings.HasSuffix(err.Error(), "jsonpath-file, custom-columns, custom-columns-file") {
		t.Errorf("-o xml of objects: %v", err)
	}
}

// listFlags parses args into the list flags of a command listing networks.
func listFlags(t *testing.T, args ...string) (*ListFlags, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	l := AddListFlags(cmd, "networks", true)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return l, l.Validate()
}

func TestListFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-l", "tier=web=x"}, `-l "tier=web=x": found '=', expected: ',' or 'end of string': write a label selector such as tier=web, 'env in (a,b)' or '!legacy'`},
		{[]string{"-l", "tier in (a"}, `-l "tier in (a": unable to parse requirement: found '', expected: ',' or ')': write a label selector such as tier=web, 'env in (a,b)' or '!legacy'`},
		{[]string{"--sort-by", "{.metadata.name"}, `--sort-by "{.metadata.name": not a field path: write one such as .metadata.name or {.spec.topology}`},
		{[]string{"--sort-by", ".metadata.name}{.kind}"}, `--sort-by ".metadata.name}{.kind}": not a field path: write one such as .metadata.name or {.spec.topology}`},
		{[]string{"--sort-by", ".spec[0"}, `--sort-by ".spec[0": unterminated array: write one such as .metadata.name or {.spec.topology}`},
	} {
		if _, err := listFlags(t, tc.args...); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v\nwant: %s", tc.args, err, tc.want)
		}
	}
	l, err := listFlags(t, "-l", "tier=web,!legacy")
	if err != nil || len(l.ListOptions()) != 1 {
		t.Errorf("-l tier=web,!legacy: %v, list options %v", err, l.ListOptions())
	}
	if l, err := listFlags(t); err != nil || l.ListOptions() != nil {
		t.Errorf("no -l: %v, list options %v", err, l.ListOptions())
	}
}

func TestSortBy(t *testing.T) {
	at := func(name string, mtu int32, labels map[string]string) client.Object {
		n := udn(name, labels)
		n.Spec.Layer2.MTU = mtu
		return n
	}
	names := func(objs []client.Object) string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return strings.Join(out, " ")
	}
	sorted := func(path string, objs ...client.Object) (string, error) {
		l, err := listFlags(t, "--sort-by", path)
		if err != nil {
			t.Fatal(err)
		}
		err = l.Sort(objs)
		return names(objs), err
	}
	for _, tc := range []struct {
		path string
		objs []client.Object
		want string
	}{
		// Strings; objects without the field first, ties in their order.
		{"metadata.labels.tier", []client.Object{at("a", 0, map[string]string{"tier": "web"}), at("b", 0, nil), at("c", 0, map[string]string{"tier": "db"}), at("d", 0, map[string]string{"tier": "web"}), at("e", 0, nil)}, "b e c a d"},
		// Numbers as numbers: 900 before 1400.
		{"{.spec.layer2.mtu}", []client.Object{at("a", 1400, nil), at("b", 9000, nil), at("c", 900, nil)}, "c a b"},
		// Quantities as quantities: 500m before 2 before 1Ki.
		{".metadata.labels.size", []client.Object{at("a", 0, map[string]string{"size": "1Ki"}), at("b", 0, map[string]string{"size": "500m"}), at("c", 0, map[string]string{"size": "2"})}, "b c a"},
		// Strings that are not all quantities as strings.
		{".metadata.labels.size", []client.Object{at("a", 0, map[string]string{"size": "1Ki"}), at("b", 0, map[string]string{"size": "big"}), at("c", 0, map[string]string{"size": "2"})}, "a c b"},
	} {
		if got, err := sorted(tc.path, tc.objs...); err != nil || got != tc.want {
			t.Errorf("--sort-by %s: %q %v, want %q", tc.path, got, err, tc.want)
		}
	}

	for _, tc := range []struct {
		path string
		objs []client.Object
		want string
	}{
		{".spec.nothing", []client.Object{at("a", 0, nil), at("b", 0, nil)},
			"--sort-by .spec.nothing: none of the 2 networks has this field: check its path against -o yaml"},
		{".metadata.labels", []client.Object{at("a", 0, map[string]string{"x": "y"})},
			"--sort-by .metadata.labels: UserDefinedNetwork a holds an object, which does not sort: give the path of a string or a number inside it"},
		{".spec.layer2", []client.Object{at("a", 0, nil)},
			"--sort-by .spec.layer2: UserDefinedNetwork a holds an object, which does not sort: give the path of a string or a number inside it"},
	} {
		if _, err := sorted(tc.path, tc.objs...); err == nil || err.Error() != tc.want {
			t.Errorf("--sort-by %s: %v\nwant: %s", tc.path, err, tc.want)
		}
	}
	// Without --sort-by nothing moves.
	objs := []client.Object{at("b", 0, nil), at("a", 0, nil)}
	if l, _ := listFlags(t); l.Sort(objs) != nil || names(objs) != "b a" {
		t.Errorf("no --sort-by reordered: %s", names(objs))
	}
}

// TestMixedSortValues: a field holding strings in some objects and numbers in others
// (only objects without a schema can) is refused rather than ordered arbitrarily.
func TestMixedSortValues(t *testing.T) {
	obj := func(name string, v any) client.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Thing",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"v": v},
		}}
	}
	l, err := listFlags(t, "--sort-by", ".spec.v")
	if err != nil {
		t.Fatal(err)
	}
	err = l.Sort([]client.Object{obj("a", "x"), obj("b", int64(2))})
	if want := "--sort-by .spec.v: the field holds strings in some networks and numbers in others, which do not sort together"; err == nil || err.Error() != want {
		t.Errorf("mixed: %v\nwant: %s", err, want)
	}
	err = l.Sort([]client.Object{obj("a", true)})
	if want := "--sort-by .spec.v: Thing a holds a boolean (true), which does not sort: give the path of a string or a number inside it"; err == nil || err.Error() != want {
		t.Errorf("boolean: %v\nwant: %s", err, want)
	}
	objs := []client.Object{obj("a", 2.5), obj("b", int64(2))}
	if err := l.Sort(objs); err != nil || objs[0].GetName() != "b" {
		t.Errorf("an integer and a float: %v, first %s", err, objs[0].GetName())
	}
}

// TestTableFeed: after the table of the list, each change prints its row alone (all
// of its lines), the header again only when the columns change.
func TestTableFeed(t *testing.T) {
	// A table whose rows are "NAME VALUE" cells, a value "a|b" stacked on two lines,
	// and whose VALUE column goes once a name is longer than 8 characters: as a
	// terminal's table leaves a column out.
	render := func(rows [][2]string, w io.Writer) error {
		wide := true
		for _, r := range rows {
			wide = wide && len(r[0]) <= 8
		}
		header := "NAME"
		if wide {
			header += "       VALUE"
		}
		fmt.Fprintln(w, header)
		for _, r := range rows {
			values := strings.Split(r[1], "|")
			if !wide {
				fmt.Fprintln(w, r[0])
				continue
			}
			fmt.Fprintf(w, "%-8s   %s\n", r[0], values[0])
			for _, v := range values[1:] {
				fmt.Fprintf(w, "%-8s   %s\n", "", v)
			}
		}
		return nil
	}
	var out bytes.Buffer
	feed := NewTableFeed(&out, render)
	step := func(what string, f func() error, want string) {
		t.Helper()
		out.Reset()
		if err := f(); err != nil || out.String() != want {
			t.Errorf("%s: %v\n%s\nwant:\n%s", what, err, out.String(), want)
		}
	}
	step("start", func() error { return feed.Start([]string{"a", "b"}, [][2]string{{"a", "1"}, {"b", "2|3"}}) },
		"NAME       VALUE\na          1\nb          2\n           3\n")
	step("b changes", func() error { return feed.Changed("b", [2]string{"b", "4|5"}, false) }, "b          4\n           5\n")
	step("a changes", func() error { return feed.Changed("a", [2]string{"a", "6"}, false) }, "a          6\n")
	step("a long name leaves VALUE out", func() error { return feed.Changed("long-name", [2]string{"long-name", "7"}, true) }, "NAME\nlong-name\n")
	step("deleted, it no longer counts", func() error { return feed.Changed("a", [2]string{"a", "8"}, false) }, "NAME       VALUE\na          8\n")

	// A feed that started with no rows prints the header with its first.
	out.Reset()
	empty := NewTableFeed(&out, render)
	if err := empty.Start(nil, nil); err != nil || out.Len() != 0 {
		t.Errorf("start with none: %v %q", err, out.String())
	}
	step("first", func() error { return empty.Changed("c", [2]string{"c", "9"}, false) }, "NAME       VALUE\nc          9\n")
}
