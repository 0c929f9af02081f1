package connectcmd

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/test/golden"
)

// lastApplied is the annotation `kubectl apply` keeps on what it applies; connect
// itself never writes it, so the comparisons leave it out.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// printedObjects decodes what connect printed in YAML: one object, or the v1 List it
// prints for several.
func printedObjects(t *testing.T, out string) []unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(out), &u.Object); err != nil {
		t.Fatalf("output is not a YAML object: %v\n%s", err, out)
	}
	if u.GetKind() != "List" {
		return []unstructured.Unstructured{u}
	}
	list, err := u.ToList()
	if err != nil {
		t.Fatalf("output is no List: %v\n%s", err, out)
	}
	return list.Items
}

// printedConnect is the ClusterNetworkConnect among what connect printed in YAML.
func printedConnect(t *testing.T, out string) ovnkv1.ClusterNetworkConnect {
	t.Helper()
	var cnc ovnkv1.ClusterNetworkConnect
	objs := printedObjects(t, out)
	i := slices.IndexFunc(objs, func(u unstructured.Unstructured) bool { return u.GetKind() == "ClusterNetworkConnect" })
	if i < 0 {
		t.Fatalf("no ClusterNetworkConnect printed:\n%s", out)
	}
	data, err := json.Marshal(objs[i].Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cnc); err != nil {
		t.Fatalf("printed connect: %v", err)
	}
	return cnc
}

// kindsAndNames lists objs as KIND/NAME, in order.
func kindsAndNames(objs []unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, u := range objs {
		out[i] = u.GetKind() + "/" + u.GetName()
	}
	return out
}

// TestDryRunApplies pipes `connect --dry-run -o yaml` into the real `kubectl apply -f -`
// and requires the cluster to end up as after connect itself, run on an equivalent set
// of networks: the same label on each ClusterUserDefinedNetwork connect labels, the
// network already labelled and the UserDefinedNetwork left alone, and the same connect.
// A dry run that printed the connect alone made apply create a connect that selects no
// ClusterUserDefinedNetwork lacking the label.
func TestDryRunApplies(t *testing.T) {
	h := newHarness(t)
	// set builds blue and red (unlabelled), green (already labelled) and NS/web, with
	// names starting with prefix, and returns NS.
	set := func(prefix string) string {
		ns := h.Namespace("", nil)
		h.cudn(prefix+"-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
		h.cudn(prefix+"-red", ovnkv1.NetworkTopologyLayer3, []string{"10.40.0.0/16"})
		h.cudn(prefix+"-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"}, withLabels(NetworkNameLabel, prefix+"-green", "team", "green"))
		h.udn(ns, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.30.0.0/16"})
		return ns
	}
	nsApply, nsReal := set("apply"), set("real")
	args := func(prefix, ns string) []string {
		return []string{"connect", prefix + "-blue", prefix + "-green", prefix + "-red", ns + "/web", "--name", prefix}
	}

	out := h.MustRun(append(args("apply", nsApply), "--dry-run", "-o", "yaml")...)
	want := []string{"ClusterUserDefinedNetwork/apply-blue", "ClusterUserDefinedNetwork/apply-red", "ClusterNetworkConnect/apply"}
	if got := kindsAndNames(printedObjects(t, out)); !slices.Equal(got, want) {
		t.Fatalf("connect --dry-run printed %v, want %v:\n%s", got, want, out)
	}
	cmd := exec.CommandContext(h.Ctx(), h.Kube.KubectlPath, "apply", "-f", "-")
	cmd.Env = append(os.Environ(), h.Kube.Env()...)
	cmd.Stdin = strings.NewReader(out)
	// Standard error has kubectl's warning that the networks, made by a test rather
	// than by apply, lack its annotation.
	var stderr strings.Builder
	cmd.Stderr = &stderr
	applied, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl apply -f - of the dry run: %v\n%s", err, stderr.String())
	}
	wantApplied := "clusteruserdefinednetwork.k8s.ovn.org/apply-blue configured\nclusteruserdefinednetwork.k8s.ovn.org/apply-red configured\nclusternetworkconnect.k8s.ovn.org/apply created\n"
	if string(applied) != wantApplied {
		t.Errorf("kubectl apply printed:\n%s\nwant:\n%s", applied, wantApplied)
	}

	h.MustRun(args("real", nsReal)...)

	// Both sets read back with the names of the second, then compared whole: metadata
	// the server sets (uid, resourceVersion, times, managedFields) aside.
	rename := strings.NewReplacer("apply", "real", nsApply, nsReal)
	read := func(obj client.Object, name string) string {
		t.Helper()
		if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: name}, obj); err != nil {
			t.Fatalf("get %T %s: %v", obj, name, err)
		}
		annotations := maps.Clone(obj.GetAnnotations())
		delete(annotations, lastApplied)
		if len(annotations) == 0 {
			annotations = nil // none left once apply's is gone, as connect leaves none
		}
		view := map[string]any{"labels": obj.GetLabels(), "annotations": annotations}
		switch o := obj.(type) {
		case *ovnkv1.ClusterUserDefinedNetwork:
			view["spec"] = o.Spec
		case *ovnkv1.ClusterNetworkConnect:
			view["spec"] = o.Spec
		}
		data, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		text, err := yaml.JSONToYAML([]byte(rename.Replace(string(data))))
		if err != nil {
			t.Fatal(err)
		}
		return string(text)
	}
	for _, name := range []string{"blue", "green", "red"} {
		viaApply := read(&ovnkv1.ClusterUserDefinedNetwork{}, "apply-"+name)
		viaConnect := read(&ovnkv1.ClusterUserDefinedNetwork{}, "real-"+name)
		if diff := golden.Diff(viaConnect, viaApply); diff != "" {
			t.Errorf("ClusterUserDefinedNetwork %s after kubectl apply of the dry run differs from after connect (- connect, + apply):\n%s", name, diff)
		}
	}
	if diff := golden.Diff(read(&ovnkv1.ClusterNetworkConnect{}, "real"), read(&ovnkv1.ClusterNetworkConnect{}, "apply")); diff != "" {
		t.Errorf("the connect kubectl apply created differs from connect's (- connect, + apply):\n%s", diff)
	}
	// The comparison alone would pass if neither run labelled anything.
	if v := h.cudnLabels("apply-red")[NetworkNameLabel]; v != "apply-red" {
		t.Errorf("after kubectl apply, apply-red has %s=%q, want apply-red", NetworkNameLabel, v)
	}
}
