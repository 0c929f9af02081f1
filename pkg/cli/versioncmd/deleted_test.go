package versioncmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestVersionLeavesDeletedCRDsOut runs `version` as kubectl ovnk runs it, with kubectl's
// discovery cache, while a k8s.ovn.org CRD of the test's own is created, deleted (held
// terminating by an object with a finalizer) and then gone. Served, it is listed; being
// deleted, or gone, it is not. Each run finds the cache written by the one before: a
// version that read it would never see the CRD come, nor go.
func TestVersionLeavesDeletedCRDsOut(t *testing.T) {
	t.Setenv("KUBECACHEDIR", t.TempDir()) // the cache the commands share, and only theirs
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, _ func() time.Time) []*cobra.Command {
		return []*cobra.Command{New(f)}
	})
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(h.Kube.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "versiontests." + ovnGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: ovnGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "versiontests", Singular: "versiontest", Kind: "VersionTest", ListKind: "VersionTestList"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
			}},
		},
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ovnGroup + "/v1")
	obj.SetKind("VersionTest")
	obj.SetName("held")
	// Whatever happens, the test's CRD goes: the other tests expect ovnk's alone.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.IgnoreNotFound(c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))); err != nil {
			t.Errorf("release %s: %v", obj.GetName(), err)
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, crd)); err != nil {
			t.Errorf("delete CRD %s: %v", crd.Name, err)
		}
	})
	if err := c.Create(h.Ctx(), crd); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}

	resources := func() []string {
		out := h.MustRun("version", "-o", "yaml")
		var info Info
		if err := yaml.UnmarshalStrict([]byte(out), &info); err != nil {
			t.Fatalf("version -o yaml: %v\n%s", err, out)
		}
		return info.Resources
	}
	await := func(what string, want bool) {
		t.Helper()
		err := testenv.Eventually(h.Ctx(), 20*time.Second, what, func(context.Context) error {
			if got := resources(); slices.Contains(got, "versiontests.v1") != want {
				return fmt.Errorf("version lists %s", strings.Join(got, ", "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	await("version to list the served CRD", true)

	// An object with a finalizer keeps the CRD terminating after its deletion.
	obj.SetFinalizers([]string{"ovnk.test/hold"})
	if err := c.Create(h.Ctx(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
	if err := c.Delete(h.Ctx(), crd); err != nil {
		t.Fatalf("delete CRD %s: %v", crd.Name, err)
	}
	await("version to leave out the CRD being deleted", false)
	if err := c.Get(h.Ctx(), client.ObjectKeyFromObject(crd), crd); err != nil || crd.DeletionTimestamp == nil {
		t.Fatalf("the CRD is not held terminating (err %v): the step above tested nothing", err)
	}

	// Released, the CRD goes.
	if err := c.Patch(h.Ctx(), obj, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatalf("release %s: %v", obj.GetName(), err)
	}
	err = testenv.Eventually(h.Ctx(), 20*time.Second, "the CRD to be gone", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{}); client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("CRD %s still there (%v)", crd.Name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	await("version to leave out the deleted CRD", false)
}
