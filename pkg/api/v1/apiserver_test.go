package v1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// These tests run the samples against a real kube-apiserver with the generated CRDs.
// That the shared server starts at all already proves the CRDs are accepted: the API
// server compiles every CEL rule when a CRD is created and refuses the CRD for a syntax
// error or a rule whose estimated cost exceeds its budget.

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// apiServer is the shared API server with a dynamic client and the resource of each kind,
// taken from the CRDs that were installed.
type apiServer struct {
	kube      *testenv.Kube
	client    dynamic.Interface
	resources map[string]kindResource // by kind
}

type kindResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	k := testenv.SharedKube(t)
	client, err := dynamic.NewForConfig(k.RESTConfig)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	crds, err := manifests.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]kindResource{}
	for _, crd := range crds {
		resources[crd.Spec.Names.Kind] = kindResource{
			gvr:        schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: crd.Spec.Names.Plural},
			namespaced: crd.Spec.Scope == "Namespaced",
		}
	}
	return &apiServer{kube: k, client: client, resources: resources}
}

// object turns YAML into an unstructured object; a namespaced kind is moved into ns.
func (a *apiServer) object(t *testing.T, data []byte, ns string) (*unstructured.Unstructured, dynamic.ResourceInterface) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("decode YAML: %v", err)
	}
	res, ok := a.resources[obj.GetKind()]
	if !ok {
		t.Fatalf("no CRD serves kind %q", obj.GetKind())
	}
	if !res.namespaced {
		return obj, a.client.Resource(res.gvr)
	}
	obj.SetNamespace(ns)
	return obj, a.client.Resource(res.gvr).Namespace(ns)
}

// create creates obj with strict field validation, so that a field the schema does not
// know is an error rather than silently pruned, and deletes it when the test ends.
func create(t *testing.T, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		return nil, fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ri.Delete(ctx, got.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s %s: %v", got.GetKind(), got.GetName(), err)
		}
	})
	return got, nil
}

// TestValidSamplesAreAccepted creates every valid sample twice: as written, and as the Go
// types encode it (which adds empty selectors and status), so that both hand-written
// YAML and objects built in Go pass the CRDs' validation.
func TestValidSamplesAreAccepted(t *testing.T) {
	a := newAPIServer(t)
	ns := a.kube.Namespace(t)
	scheme := newScheme(t)
	for _, s := range loadSamples(t, "valid") {
		t.Run(s.name(), func(t *testing.T) {
			obj, ri := a.object(t, s.data, ns)
			if _, err := create(t, ri, obj); err != nil {
				t.Fatalf("%s refused: %v", s.path, err)
			}

			typed, err := decodeStrict(scheme, s.data)
			if err != nil {
				t.Fatal(err)
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
			if err != nil {
				t.Fatalf("convert the Go object: %v", err)
			}
			fromGo := &unstructured.Unstructured{Object: u}
			fromGo.SetName(obj.GetName() + "-go")
			fromGo.SetNamespace(obj.GetNamespace())
			if _, err := create(t, ri, fromGo); err != nil {
				encoded, _ := json.Marshal(u)
				t.Fatalf("%s refused as encoded by the Go types: %v\n%s", s.path, err, encoded)
			}
		})
	}
}

// TestInvalidSamplesAreRefused creates every invalid sample and expects the API server to
// refuse it as invalid, with its "# expect:" text in the message.
func TestInvalidSamplesAreRefused(t *testing.T) {
	a := newAPIServer(t)
	ns := a.kube.Namespace(t)
	for _, s := range loadSamples(t, "invalid") {
		t.Run(s.name(), func(t *testing.T) {
			obj, ri := a.object(t, s.data, ns)
			_, err := create(t, ri, obj)
			switch {
			case err == nil:
				t.Fatalf("%s was accepted; want an error containing %q", s.path, s.expect)
			case !apierrors.IsInvalid(err):
				t.Fatalf("%s: want an Invalid error containing %q, got: %v", s.path, s.expect, err)
			case !strings.Contains(err.Error(), s.expect):
				t.Fatalf("%s: error does not contain %q:\n%v", s.path, s.expect, err)
			default:
				t.Logf("refused: %v", err)
			}
		})
	}
}

// TestUpdates changes created objects with merge patches. Fields that shape the OVN
// topology must be refused with their immutability message; the rest may change.
func TestUpdates(t *testing.T) {
	a := newAPIServer(t)
	ns := a.kube.Namespace(t)
	for _, tc := range []struct {
		name   string
		sample string // in testdata/valid
		patch  string // JSON merge patch
		expect string // "" when the update must succeed
	}{{
		name:   "transport NoOverlay to Geneve",
		sample: "cudn-nooverlay-unmanaged.yaml",
		patch:  `{"spec":{"network":{"transport":"Geneve","noOverlay":null}}}`,
		expect: "transport is immutable",
	}, {
		name:   "transport added to a Geneve network",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"transport":"NoOverlay","noOverlay":{"outboundSNAT":"Enabled","routing":"Managed"}}}}`,
		expect: "transport is immutable",
	}, {
		name:   "transport Geneve dropped, which means Geneve",
		sample: "cudn-geneve-explicit.yaml",
		patch:  `{"spec":{"network":{"transport":null}}}`,
	}, {
		name:   "noOverlay options",
		sample: "cudn-nooverlay-unmanaged.yaml",
		patch:  `{"spec":{"network":{"noOverlay":{"outboundSNAT":"Enabled"}}}}`,
		expect: "noOverlay is immutable",
	}, {
		name:   "layer3 subnets",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"layer3":{"subnets":[{"cidr":"200.11.0.0/16","hostSubnet":24}]}}}}`,
		expect: "subnets are immutable",
	}, {
		name:   "layer3 hostSubnet",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"layer3":{"subnets":[{"cidr":"200.10.0.0/16","hostSubnet":25}]}}}}`,
		expect: "subnets are immutable",
	}, {
		name:   "layer3 joinSubnets added",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"layer3":{"joinSubnets":["100.66.0.0/16"]}}}}`,
		expect: "joinSubnets is immutable",
	}, {
		name:   "layer3 role",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"layer3":{"role":"Secondary"}}}}`,
		expect: "role is immutable",
	}, {
		name:   "layer3 mtu",
		sample: "cudn-green.yaml",
		patch:  `{"spec":{"network":{"layer3":{"mtu":1300}}}}`,
		expect: "mtu is immutable",
	}, {
		name:   "topology",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"network":{"topology":"Layer2","layer3":null,"layer2":{"role":"Primary","subnets":["200.10.0.0/16"]}}}}`,
		expect: "topology is immutable",
	}, {
		name:   "namespaceSelector of a ClusterUserDefinedNetwork",
		sample: "cudn-blue.yaml",
		patch:  `{"spec":{"namespaceSelector":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["blue","blue2"]}]}}}`,
	}, {
		name:   "layer2 joinSubnets",
		sample: "cudn-layer2-dual-stack.yaml",
		patch:  `{"spec":{"network":{"layer2":{"joinSubnets":["100.67.0.0/16","fd98::/64"]}}}}`,
		expect: "joinSubnets is immutable",
	}, {
		name:   "layer2 subnets of a UserDefinedNetwork",
		sample: "udn-layer2.yaml",
		patch:  `{"spec":{"layer2":{"subnets":["10.61.0.0/24"]}}}`,
		expect: "subnets are immutable",
	}, {
		name:   "layer2 ipam of a UserDefinedNetwork",
		sample: "udn-layer2-secondary.yaml",
		patch:  `{"spec":{"layer2":{"ipam":{"mode":"Enabled"},"subnets":["10.62.0.0/24"]}}}`,
		expect: "ipam is immutable",
	}, {
		name:   "topology of a UserDefinedNetwork",
		sample: "udn-layer3.yaml",
		patch:  `{"spec":{"topology":"Layer2","layer3":null,"layer2":{"role":"Primary","subnets":["10.50.0.0/16"]}}}`,
		expect: "topology is immutable",
	}, {
		name:   "connectSubnets",
		sample: "cnc-colored-enterprise.yaml",
		patch:  `{"spec":{"connectSubnets":[{"cidr":"192.168.0.0/16","networkPrefix":25}]}}`,
		expect: "connectSubnets is immutable",
	}, {
		name:   "connectivity",
		sample: "cnc-colored-enterprise.yaml",
		patch:  `{"spec":{"connectivity":["PodNetwork"]}}`,
	}, {
		name:   "egressIPs",
		sample: "egressip-ipv6.yaml",
		patch:  `{"spec":{"egressIPs":["fc00:f853:ccd:e793::100","172.18.0.102"]}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/valid/" + tc.sample)
			if err != nil {
				t.Fatal(err)
			}
			obj, ri := a.object(t, data, ns)
			obj.SetName(uniqueName(obj.GetName(), tc.name))
			if _, err := create(t, ri, obj); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = ri.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(tc.patch), metav1.PatchOptions{FieldValidation: "Strict"})
			switch {
			case tc.expect == "" && err != nil:
				t.Fatalf("patch %s refused: %v", tc.patch, err)
			case tc.expect == "":
			case err == nil:
				t.Fatalf("patch %s was accepted; want an error containing %q", tc.patch, tc.expect)
			case !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.expect):
				t.Fatalf("patch %s: want an Invalid error containing %q, got: %v", tc.patch, tc.expect, err)
			default:
				t.Logf("refused: %v", err)
			}
		})
	}
}

// TestTransportUpdateRefused does what a client that edits a ClusterUserDefinedNetwork
// does (get, change, update) to switch a no-overlay network to Geneve.
func TestTransportUpdateRefused(t *testing.T) {
	a := newAPIServer(t)
	data, err := os.ReadFile("testdata/valid/cudn-nooverlay-managed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, ri := a.object(t, data, "")
	obj.SetName("transport-update")
	if _, err := create(t, ri, obj); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(got.Object, "Geneve", "spec", "network", "transport"); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(got.Object, "spec", "network", "noOverlay")
	_, err = ri.Update(ctx, got, metav1.UpdateOptions{})
	const want = "spec.network.transport: Invalid value"
	if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "transport is immutable") {
		t.Fatalf("update to Geneve: want an Invalid error at %q saying the transport is immutable, got: %v", want, err)
	}
}

// TestStatusWrites checks that the status subresource takes conditions without tripping
// the spec's transition rules, and that EgressIP status (no subresource, as upstream) is
// written with an ordinary update.
func TestStatusWrites(t *testing.T) {
	a := newAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	data, err := os.ReadFile("testdata/valid/cudn-nooverlay-unmanaged.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, ri := a.object(t, data, "")
	obj.SetName("status-writes")
	created, err := create(t, ri, obj)
	if err != nil {
		t.Fatal(err)
	}
	cond := map[string]any{
		"type":               ovnkv1.ConditionTransportAccepted,
		"status":             "False",
		"reason":             ovnkv1.ReasonNoOverlayRouteAdvertisementsIsMissing,
		"message":            "No RouteAdvertisements CR is advertising the pod networks.",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
	if err := unstructured.SetNestedSlice(created.Object, []any{cond}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update ClusterUserDefinedNetwork status: %v", err)
	}

	data, err = os.ReadFile("testdata/valid/egressip-ipv6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, ri = a.object(t, data, "")
	obj.SetName("status-writes")
	created, err = create(t, ri, obj)
	if err != nil {
		t.Fatal(err)
	}
	item := map[string]any{"node": "ovn-worker", "egressIP": "fc00:f853:ccd:e793::100"}
	if err := unstructured.SetNestedSlice(created.Object, []any{item}, "status", "items"); err != nil {
		t.Fatal(err)
	}
	updated, err := ri.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update EgressIP status: %v", err)
	}
	items, _, _ := unstructured.NestedSlice(updated.Object, "status", "items")
	if len(items) != 1 {
		t.Fatalf("EgressIP status.items after update: %v, want the one assignment", items)
	}
}

// TestPrinterColumns asks the API server for tables, as kubectl get does, and checks the
// columns computed from the CRDs' JSONPaths: the role and subnets that live in layer3 or
// layer2, and whole lists (a server-side table shows only the first match of a [*] path,
// so the columns name lists instead).
func TestPrinterColumns(t *testing.T) {
	a := newAPIServer(t)
	ns := a.kube.Namespace(t)
	type row map[string]string // column name → cell; "" for an empty cell
	for _, tc := range []struct {
		sample string
		want   row
	}{
		{"cudn-nooverlay-unmanaged.yaml", row{"Topology": "Layer3", "Role": "Primary", "Subnets": `[{"cidr":"10.10.0.0/16","hostSubnet":24}]`, "Transport": "NoOverlay"}},
		{"cudn-layer2-dual-stack.yaml", row{"Topology": "Layer2", "Role": "Primary", "Subnets": `["10.100.0.0/16","fd00:10:100::/64"]`, "Transport": ""}},
		{"udn-layer3.yaml", row{"Topology": "Layer3", "Role": "Primary", "Subnets": `[{"cidr":"10.50.0.0/16","hostSubnet":24},{"cidr":"fd00:10:50::/48","hostSubnet":64}]`}},
		{"udn-layer2-secondary.yaml", row{"Topology": "Layer2", "Role": "Secondary", "Subnets": ""}},
		{"egressip.yaml", row{"EgressIPs": `["172.18.0.100","172.18.0.101"]`, "Assignments": `[{"egressIP":"172.18.0.100","node":"ovn-worker"},{"egressIP":"172.18.0.101","node":"ovn-worker2"}]`}},
		{"cnc-dual-stack.yaml", row{"Connect Subnets": `[{"cidr":"192.168.0.0/16","networkPrefix":24},{"cidr":"fd10:192:168::/112","networkPrefix":120}]`, "Connectivity": `["PodNetwork"]`, "Status": ""}},
		{"ra-blue.yaml", row{"Advertisements": `["PodNetwork","EgressIP"]`, "VRF": "auto"}},
	} {
		t.Run(tc.sample, func(t *testing.T) {
			data, err := os.ReadFile("testdata/valid/" + tc.sample)
			if err != nil {
				t.Fatal(err)
			}
			obj, ri := a.object(t, data, ns)
			obj.SetName(uniqueName(obj.GetName(), "columns"))
			if _, err := create(t, ri, obj); err != nil {
				t.Fatal(err)
			}
			res := a.resources[obj.GetKind()]
			path := []string{"/apis", res.gvr.Group, res.gvr.Version}
			if res.namespaced {
				path = append(path, "namespaces", ns)
			}
			path = append(path, res.gvr.Resource, obj.GetName())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			raw, err := a.kube.Client.CoreV1().RESTClient().Get().
				AbsPath(path...).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
				DoRaw(ctx)
			if err != nil {
				t.Fatalf("get table: %v", err)
			}
			var table metav1.Table
			if err := json.Unmarshal(raw, &table); err != nil {
				t.Fatalf("decode table: %v\n%s", err, raw)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("table has %d rows, want 1", len(table.Rows))
			}
			got := row{}
			for i, col := range table.ColumnDefinitions {
				if cell := table.Rows[0].Cells[i]; cell != nil {
					got[col.Name] = fmt.Sprint(cell)
				}
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("column %q = %q, want %q (row: %v)", name, got[name], want, got)
				}
			}
		})
	}
}

// uniqueName derives a DNS-label name from a sample's name and a test case, so cases
// reusing a sample do not collide on the shared server.
func uniqueName(base, suffix string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base + "-" + suffix) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}
