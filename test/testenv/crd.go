package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ThrowawayCRD is a cluster-scoped CRD of a test's own, served as version v1, that the
// test takes through the three states discovery must tell apart: served, being deleted
// (Terminating) and gone. The API server has no controller that would finish a CRD's
// deletion early: an object of its kind with a finalizer holds it Terminating until
// Release removes the finalizer.
type ThrowawayCRD struct {
	// Name is the CRD's name, "<plural>.<group>".
	Name string

	c    client.Client
	crd  *apiextensionsv1.CustomResourceDefinition
	held *unstructured.Unstructured
}

// releaseFinalizers is the merge patch that drops the held object's finalizer.
var releaseFinalizers = client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))

// CreateThrowawayCRD creates a served, cluster-scoped CRD in group with the given plural
// and kind (its object schema accepts anything) and, in t.Cleanup, releases and deletes
// whatever of it is left: the tests sharing the API server expect ovnk's CRDs alone.
// Plural must be unique among the package's tests. It does not wait for the CRD to be
// Established; a test awaits what it checks (usually discovery listing it).
func (k *Kube) CreateThrowawayCRD(t testing.TB, group, plural, kind string) *ThrowawayCRD {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(k.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client for CRD %s.%s: %v", plural, group, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List",
			},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
			}},
		},
	}
	held := &unstructured.Unstructured{}
	held.SetAPIVersion(group + "/v1")
	held.SetKind(kind)
	held.SetName("held")
	x := &ThrowawayCRD{Name: crd.Name, c: c, crd: crd, held: held}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.IgnoreNotFound(c.Patch(ctx, held, releaseFinalizers)); err != nil {
			t.Errorf("release %s of CRD %s: %v", held.GetName(), crd.Name, err)
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, crd)); err != nil {
			t.Errorf("delete CRD %s: %v", crd.Name, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
	return x
}

// HoldTerminating creates an object of the CRD's kind with a finalizer, deletes the CRD
// and checks that it is Terminating: the object keeps it so until Release.
func (x *ThrowawayCRD) HoldTerminating(ctx context.Context) error {
	x.held.SetFinalizers([]string{"ovnk.test/hold"})
	if err := x.c.Create(ctx, x.held); err != nil {
		return fmt.Errorf("create %s of CRD %s: %w", x.held.GetName(), x.Name, err)
	}
	if err := x.c.Delete(ctx, x.crd); err != nil {
		return fmt.Errorf("delete CRD %s: %w", x.Name, err)
	}
	return x.Terminating(ctx)
}

// Terminating returns an error unless the CRD exists and is being deleted. A test calls
// it after checking the Terminating state, to show that the CRD had not gone meanwhile
// (which would have made the check one of the gone state).
func (x *ThrowawayCRD) Terminating(ctx context.Context) error {
	got := &apiextensionsv1.CustomResourceDefinition{}
	if err := x.c.Get(ctx, client.ObjectKeyFromObject(x.crd), got); err != nil {
		return fmt.Errorf("CRD %s is not held terminating: %w", x.Name, err)
	}
	if got.DeletionTimestamp == nil {
		return fmt.Errorf("CRD %s is not held terminating: it has no deletion timestamp", x.Name)
	}
	return nil
}

// Release removes the held object's finalizer and waits up to 20 seconds for the CRD
// to be gone.
func (x *ThrowawayCRD) Release(ctx context.Context) error {
	if err := x.c.Patch(ctx, x.held, releaseFinalizers); err != nil {
		return fmt.Errorf("release %s of CRD %s: %w", x.held.GetName(), x.Name, err)
	}
	return Eventually(ctx, 20*time.Second, "CRD "+x.Name+" gone", func(ctx context.Context) error {
		err := x.c.Get(ctx, client.ObjectKeyFromObject(x.crd), &apiextensionsv1.CustomResourceDefinition{})
		if err == nil || client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("CRD %s still there (%v)", x.Name, err)
		}
		return nil
	})
}
