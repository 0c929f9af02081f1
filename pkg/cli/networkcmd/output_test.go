package networkcmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

func yamlStrict(s string, v any) error { return yaml.UnmarshalStrict([]byte(s), v) }

// TestOutputFormats checks that -o json, yaml, name and jsonpath of create and list
// parse and hold the networks.
func TestOutputFormats(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.cudnLater("out-cluster")

	var created ovnkv1.UserDefinedNetwork
	if err := json.Unmarshal([]byte(h.MustRun("create", "out-a", "-n", ns, "--subnet", "10.1.0.0/16", "-o", "json")), &created); err != nil {
		t.Fatalf("create -o json: %v", err)
	}
	if created.Name != "out-a" || created.UID == "" || created.Kind != "UserDefinedNetwork" {
		t.Errorf("create -o json printed %+v; want the created object", created.ObjectMeta)
	}
	var createdYAML ovnkv1.ClusterUserDefinedNetwork
	if err := yamlStrict(h.MustRun("create", "out-cluster", "--cluster", "--namespaces", ns, "--subnet", "10.2.0.0/16", "--role", "secondary", "-o", "yaml"), &createdYAML); err != nil {
		t.Fatalf("create -o yaml: %v", err)
	}
	if createdYAML.Name != "out-cluster" || createdYAML.Kind != "ClusterUserDefinedNetwork" {
		t.Errorf("create -o yaml printed %+v", createdYAML.ObjectMeta)
	}
	if out := h.MustRun("create", "out-b", "-n", ns, "--subnet", "10.3.0.0/16", "--role", "secondary", "-o", "name"); out != "userdefinednetwork.k8s.ovn.org/out-b\n" {
		t.Errorf("create -o name printed %q", out)
	}

	want := []string{"out-a", "out-b", "out-cluster"}
	var list unstructured.UnstructuredList
	if err := json.Unmarshal([]byte(h.MustRun("list", "-n", ns, "-o", "json")), &list); err != nil {
		t.Fatalf("list -o json: %v", err)
	}
	if got := itemNames(list); !slices.Equal(got, want) {
		t.Errorf("list -o json names %v, want %v", got, want)
	}
	list = unstructured.UnstructuredList{}
	if err := yaml.Unmarshal([]byte(h.MustRun("list", "-n", ns, "-o", "yaml")), &list.Object); err != nil {
		t.Fatalf("list -o yaml: %v", err)
	}
	if items, _ := list.Object["items"].([]any); len(items) != 3 || list.Object["kind"] != "List" {
		t.Errorf("list -o yaml: kind %v with %d items, want a List of 3", list.Object["kind"], len(items))
	}
	wantNames := "clusteruserdefinednetwork.k8s.ovn.org/out-cluster\nuserdefinednetwork.k8s.ovn.org/out-a\nuserdefinednetwork.k8s.ovn.org/out-b\n"
	if out := h.MustRun("list", "-n", ns, "-o", "name"); out != wantNames {
		t.Errorf("list -o name printed:\n%s\nwant:\n%s", out, wantNames)
	}
	out := h.MustRun("list", "-n", ns, "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}{\"\\n\"}{end}")
	if want := "ClusterUserDefinedNetwork/out-cluster\nUserDefinedNetwork/out-a\nUserDefinedNetwork/out-b\n"; out != want {
		t.Errorf("list -o jsonpath printed:\n%s\nwant:\n%s", out, want)
	}
	// With no networks, the human view says so on stderr and prints nothing.
	empty := h.Namespace("", nil)
	out, stderr, err := h.Run("list", "-n", empty)
	if err != nil || out != "" || !strings.Contains(stderr, "No networks found in namespace "+empty) {
		t.Errorf("list of an empty namespace: err %v, stdout %q, stderr %q", err, out, stderr)
	}
}

func itemNames(l unstructured.UnstructuredList) []string {
	var out []string
	for _, u := range l.Items {
		out = append(out, u.GetName())
	}
	slices.Sort(out)
	return out
}
