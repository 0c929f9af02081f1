package connectcmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// TestOutputFormats checks that -o json, yaml, name and jsonpath of connect and
// connections parse and hold the connects, and that the dry runs change nothing.
func TestOutputFormats(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.cudn("out-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("out-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})
	h.udn(ns, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.30.0.0/16"})

	// Dry runs: the objects are printed, the networks to label and the connect, and
	// none of them is written.
	for _, mode := range []string{"--dry-run", "--dry-run=server"} {
		out, stderr, err := h.Run("connect", "out-blue", "out-green", mode)
		if err != nil {
			t.Fatalf("connect %s: %v", mode, err)
		}
		want := []string{"ClusterUserDefinedNetwork/out-blue", "ClusterUserDefinedNetwork/out-green", "ClusterNetworkConnect/out-blue-out-green"}
		if got := kindsAndNames(printedObjects(t, out)); !slices.Equal(got, want) {
			t.Errorf("connect %s printed %v, want %v", mode, got, want)
		}
		if printed := printedConnect(t, out); len(printed.Spec.NetworkSelectors) != 1 {
			t.Errorf("connect %s printed %+v", mode, printed)
		}
		if mode == "--dry-run" && !strings.Contains(stderr, "clusteruserdefinednetwork.k8s.ovn.org/out-blue labeled ovnk.io/network-name=out-blue (dry run)") {
			t.Errorf("connect --dry-run does not say which labels it would add: %q", stderr)
		}
		if n := len(h.connects()); n != 0 {
			t.Errorf("connect %s created %d connects", mode, n)
		}
		if v, ok := h.cudnLabels("out-blue")[NetworkNameLabel]; ok {
			t.Errorf("connect %s labelled out-blue %s", mode, v)
		}
	}

	// connect labels both networks, so -o json prints a List of all three objects written.
	out := h.MustRun("connect", "out-blue", "out-green", "-o", "json")
	if !json.Valid([]byte(out)) {
		t.Fatalf("connect -o json printed no JSON:\n%s", out)
	}
	written := printedObjects(t, out)
	if len(written) != 3 || written[0].GetLabels()[NetworkNameLabel] != "out-blue" || written[1].GetLabels()[NetworkNameLabel] != "out-green" {
		t.Errorf("connect -o json printed %v; want both networks labelled, then the connect", kindsAndNames(written))
	}
	if created := printedConnect(t, out); created.Name != "out-blue-out-green" || created.UID == "" || created.Kind != "ClusterNetworkConnect" {
		t.Errorf("connect -o json printed %+v; want the created object", created.ObjectMeta)
	}
	// out-green is labelled now: the connect is the one object written, printed alone.
	if out := h.MustRun("connect", "out-green", ns+"/web", "--subnet", "172.31.0.0/16", "-o", "name"); out != "clusternetworkconnect.k8s.ovn.org/out-green-"+ns+"-web\n" {
		t.Errorf("connect -o name printed %q", out)
	}
	// A connect requesting services says, on standard error, that only pods are connected.
	_, stderr, err := h.Run("connect", "out-blue", ns+"/web", "--subnet", "172.30.0.0/16", "--connectivity", "service,pod", "--dry-run")
	if err != nil || !strings.Contains(stderr, "Warning: ClusterIPServiceNetwork requested, but "+servicesNotProgrammed) {
		t.Errorf("connect --connectivity service: %v, stderr %q", err, stderr)
	}

	want := []string{"out-blue-out-green", "out-green-" + ns + "-web"}
	var list unstructured.UnstructuredList
	if err := json.Unmarshal([]byte(h.MustRun("connections", "-o", "json")), &list); err != nil {
		t.Fatalf("connections -o json: %v", err)
	}
	var got []string
	for _, item := range list.Items {
		got = append(got, item.GetName())
		if item.GetKind() != "ClusterNetworkConnect" {
			t.Errorf("connections -o json: item of kind %q", item.GetKind())
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("connections -o json names %v, want %v", got, want)
	}
	var listYAML map[string]any
	if err := yaml.Unmarshal([]byte(h.MustRun("connections", "-o", "yaml")), &listYAML); err != nil {
		t.Fatalf("connections -o yaml: %v", err)
	}
	if items, _ := listYAML["items"].([]any); len(items) != 2 || listYAML["kind"] != "List" {
		t.Errorf("connections -o yaml: kind %v with %d items, want a List of 2", listYAML["kind"], len(items))
	}
	wantNames := "clusternetworkconnect.k8s.ovn.org/" + want[0] + "\nclusternetworkconnect.k8s.ovn.org/" + want[1] + "\n"
	if out := h.MustRun("connections", "-o", "name"); out != wantNames {
		t.Errorf("connections -o name printed:\n%s\nwant:\n%s", out, wantNames)
	}
	if out := h.MustRun("connections", "-o", "jsonpath={.items[*].spec.connectSubnets[0].cidr}"); out != "192.168.0.0/16 172.31.0.0/16" {
		t.Errorf("connections -o jsonpath printed %q", out)
	}

	// Disconnect dry runs delete nothing.
	for mode, suffix := range map[string]string{"--dry-run": " (dry run)", "--dry-run=server": " (server dry run)"} {
		if out := h.MustRun("disconnect", "out-green", "out-blue", mode); out != "clusternetworkconnect.k8s.ovn.org/out-blue-out-green deleted"+suffix+"\n" {
			t.Errorf("disconnect %s printed %q", mode, out)
		}
		h.getConnect("out-blue-out-green")
	}
}

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.cudn("comp-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("comp-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})
	h.cudn("comp-storage", ovnkv1.NetworkTopologyLayer2, []string{"10.60.0.0/24"}, secondary)
	h.udn(ns, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.30.0.0/16"})
	h.MustRun("connect", "comp-blue", "comp-green")

	h.CheckCompletions(t, []clitest.Completion{
		{Args: []string{"connect", "comp"}, Want: []string{"comp-blue", "comp-green"}, Not: []string{"comp-storage"}},
		{Args: []string{"connect", "comp-blue", ""}, Want: []string{"comp-green", ns + "/web"}, Not: []string{"comp-blue", "comp-storage"}},
		{Args: []string{"connect", "a", "b", "--connectivity", ""}, Want: []string{"pod", "service", "pod,service"}},
		{Args: []string{"disconnect", ""}, Want: []string{"comp-blue-comp-green", "comp-blue", ns + "/web"}},
		{Args: []string{"disconnect", "comp-blue", ""}, Want: []string{"comp-green"}, Not: []string{"comp-blue-comp-green", "comp-blue"}},
		{Args: []string{"connections", "describe", ""}, Want: []string{"comp-blue-comp-green"}, Not: []string{"comp-blue"}},
		{Args: []string{"connections", "describe", "comp-blue-comp-green", ""}, Not: []string{"comp-blue-comp-green"}},
	})
}

// TestHelp checks that every command has examples and speaks of `kubectl ovnk`.
func TestHelp(t *testing.T) {
	f := &cmdutil.Factory{}
	clitest.CheckHelp(t, NewConnect(f), NewDisconnect(f), NewConnections(f))
}
