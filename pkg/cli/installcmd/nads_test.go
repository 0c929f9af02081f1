package installcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/test/testenv"
)

// nadCRDName is how install and uninstall name the NetworkAttachmentDefinition CRD.
const nadCRDName = "customresourcedefinition.apiextensions.k8s.io/" + nadv1.Resource + "." + nadv1.GroupName

// ourNADCRD is the NetworkAttachmentDefinition CRD install creates.
func ourNADCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	shared, err := manifests.SharedCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(shared) != 1 || shared[0].Spec.Names.Kind != "NetworkAttachmentDefinition" {
		t.Fatalf("the shared CRDs are %d, want the NetworkAttachmentDefinition CRD alone", len(shared))
	}
	return shared[0]
}

// multusNADCRD is a NetworkAttachmentDefinition CRD as another project ships it: the
// same names, another schema.
func multusNADCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	crd := ourNADCRD(t).DeepCopy()
	crd.Annotations = map[string]string{"example.com/installed-by": "multus"}
	crd.Spec.Versions[0].Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "Multus' own schema",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		},
	}}
	return crd
}

// replaceNADCRD deletes the NAD CRD and waits until it is gone, then creates crd
// instead when it is not nil, and returns what the server holds.
func replaceNADCRD(ctx context.Context, t *testing.T, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	name := ourNADCRD(t).Name
	current := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, current); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	err := poll.Until(ctx, 30*time.Second, "CRD "+name+" to be deleted", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Name: name}, current)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	if err != nil {
		t.Fatal(err)
	}
	if crd == nil {
		return nil
	}
	crd = crd.DeepCopy()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	// The server writes the status once it serves the kind: read it after that.
	err = poll.Until(ctx, 30*time.Second, "CRD "+name+" to be established", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		if !crdEstablished(crd) {
			return fmt.Errorf("not established: %+v", crd.Status.Conditions)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// crdEstablished reports whether the API server serves crd's kind.
func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
		return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
	})
}

// crdClient is a client that reads and writes CRDs as typed objects, which the plugin's
// scheme leaves out.
func crdClient(t *testing.T, kube *testenv.Kube) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := nadv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(kube.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// getNADCRD reads the NAD CRD.
func getNADCRD(ctx context.Context, t *testing.T, c client.Client) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: ourNADCRD(t).Name}, crd); err != nil {
		t.Fatalf("get the NAD CRD: %v", err)
	}
	return crd
}

// outcomeOf is the outcome install printed for name.
func outcomeOf(t *testing.T, out, name string) string {
	t.Helper()
	names, results := outcomes(t, out)
	i := slices.Index(names, name)
	if i < 0 {
		t.Fatalf("the output does not name %s:\n%s", name, out)
	}
	return results[i]
}

// TestSharedNADCRD: install creates the NAD CRD where it is absent, finds and leaves
// another project's, says which, and uninstall never deletes it.
func TestSharedNADCRD(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := crdClient(t, kube)
	// Leave the package's API server with our CRD, as it started.
	t.Cleanup(func() { replaceNADCRD(context.Background(), t, c, ourNADCRD(t)) })

	replaceNADCRD(ctx, t, c, nil)
	cmd := newTestCommand(kube, freshNamespace())
	// No NAD CRD: uninstall has no NAD to release, and says nothing of one.
	if err := cmd.run(ctx, NewUninstall, "--keep-crds"); err != nil {
		t.Fatalf("uninstall without the NAD CRD: %v", err)
	}
	if strings.Contains(cmd.out.String(), "networkattachmentdefinition") {
		t.Errorf("uninstall without the NAD CRD printed:\n%s", cmd.out.String())
	}
	if err := cmd.run(ctx, NewInstall, "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if got := outcomeOf(t, cmd.out.String(), nadCRDName); got != created+" (server dry run)" {
		t.Errorf("install --dry-run without the NAD CRD: %q, want created (server dry run)", got)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: ourNADCRD(t).Name}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
		t.Errorf("after install --dry-run, the NAD CRD: %v, want NotFound", err)
	}
	if err := cmd.run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
	if got := outcomeOf(t, cmd.out.String(), nadCRDName); got != created {
		t.Errorf("install without the NAD CRD: %q, want %q", got, created)
	}
	ours := getNADCRD(ctx, t, c)
	if got, want := ours.Spec.Versions[0].Schema.OpenAPIV3Schema.Description, ourNADCRD(t).Spec.Versions[0].Schema.OpenAPIV3Schema.Description; got != want {
		t.Errorf("install created a NAD CRD whose schema reads %q, want the embedded one's %q", got, want)
	}
	if !crdEstablished(ours) {
		t.Errorf("install returned before the NAD CRD was established: %+v", ours.Status.Conditions)
	}
	// Right after install the kind is served: the leader can list NADs.
	if err := c.List(ctx, &nadv1.NetworkAttachmentDefinitionList{}); err != nil {
		t.Errorf("right after install, listing NADs: %v", err)
	}

	theirs := replaceNADCRD(ctx, t, c, multusNADCRD(t))
	for _, args := range [][]string{nil, {"--dry-run"}, {"--force-conflicts"}, {"-o", "name"}} {
		if err := cmd.run(ctx, NewInstall, args...); err != nil {
			t.Fatalf("install %v: %v", args, err)
		}
		switch {
		case slices.Contains(args, "-o"):
			if !slices.Contains(strings.Split(cmd.out.String(), "\n"), nadCRDName) {
				t.Errorf("install -o name does not name the NAD CRD:\n%s", cmd.out.String())
			}
		case slices.Contains(args, "--dry-run"):
			if got := outcomeOf(t, cmd.out.String(), nadCRDName); got != found+" (server dry run)" {
				t.Errorf("install --dry-run over Multus' NAD CRD: %q, want found (server dry run)", got)
			}
		default:
			if got := outcomeOf(t, cmd.out.String(), nadCRDName); got != found {
				t.Errorf("install %v over Multus' NAD CRD: %q, want %q", args, got, found)
			}
		}
		after := getNADCRD(ctx, t, c)
		if after.ResourceVersion != theirs.ResourceVersion || !equality.Semantic.DeepEqual(after.Spec, theirs.Spec) {
			t.Errorf("install %v changed Multus' NAD CRD (resourceVersion %s -> %s)", args, theirs.ResourceVersion, after.ResourceVersion)
		}
	}

	if err := cmd.run(ctx, NewUninstall, "--yes"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cmd.out.String(), nadCRDName) {
		t.Errorf("uninstall --yes names the NAD CRD:\n%s", cmd.out.String())
	}
	if after := getNADCRD(ctx, t, c); after.ResourceVersion != theirs.ResourceVersion || after.DeletionTimestamp != nil {
		t.Errorf("uninstall --yes touched Multus' NAD CRD (resourceVersion %s -> %s, deletion %v)", theirs.ResourceVersion, after.ResourceVersion, after.DeletionTimestamp)
	}
	// The other tests of the package expect the k8s.ovn.org CRDs. The agent's old
	// namespace stays Terminating: the test API server has no namespace controller.
	if err := newTestCommand(kube, freshNamespace()).run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
}

// TestUninstallReleasesNADs: with the agent gone, uninstall removes the leader's
// finalizer from a NAD a UserDefinedNetwork controls, keeps its other finalizers, and
// leaves alone a NAD that is no network's, though it has the same label and finalizer;
// with --yes it does so before deleting the CRDs, and says so.
func TestUninstallReleasesNADs(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	cmd := newTestCommand(kube, freshNamespace())
	if err := cmd.run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
	ns := kube.Namespace(t)
	udn := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "red"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
			Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.30.0.0/16", HostSubnet: 24}},
		}},
	}
	if err := c.Create(ctx, udn); err != nil {
		t.Fatal(err)
	}
	const otherFinalizer = "example.com/keep"
	nad := func(name string, owner metav1.OwnerReference, finalizers ...string) *nadv1.NetworkAttachmentDefinition {
		t.Helper()
		n := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: map[string]string{cluster.LabelUserDefinedNetwork: ""},
			OwnerReferences: []metav1.OwnerReference{owner}, Finalizers: finalizers,
		}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		// The test API server has no garbage collector: without their finalizers the
		// NADs would stay; this leaves the namespace deletable.
		t.Cleanup(func() {
			err := c.Patch(context.Background(), n, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("clean up NAD %s: %v", name, err)
			}
		})
		return n
	}
	ours := nad("red", metav1.OwnerReference{APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "UserDefinedNetwork", Name: udn.Name, UID: udn.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}, otherFinalizer, cluster.FinalizerUserDefinedNetwork)
	// Same label and finalizer, but controlled by something else: not ours to release.
	foreign := nad("foreign", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "UserDefinedNetwork", Name: "x", UID: "f1", Controller: ptr.To(true)},
		cluster.FinalizerUserDefinedNetwork, otherFinalizer)
	released := fmt.Sprintf("%s/red released (namespace %s): finalizer %s removed\n", nadKind, ns, cluster.FinalizerUserDefinedNetwork)

	if err := cmd.run(ctx, NewUninstall, "--keep-crds"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmd.out.String(), released) || strings.Contains(cmd.out.String(), "/foreign") {
		t.Errorf("uninstall --keep-crds printed:\n%s\nwant %q and nothing of NAD foreign", cmd.out.String(), released)
	}
	got := &nadv1.NetworkAttachmentDefinition{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ours), got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Finalizers, []string{otherFinalizer}) {
		t.Errorf("after uninstall, NAD red has finalizers %v, want [%s]", got.Finalizers, otherFinalizer)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("uninstall changed NAD foreign: finalizers %v (resourceVersion %s -> %s)", got.Finalizers, foreign.ResourceVersion, got.ResourceVersion)
	}

	// A new agent protects the NAD again; uninstall --yes releases it before it deletes
	// the CRDs, whose deletion would otherwise wait on it. The agent's old namespace stays
	// Terminating: the test API server has no namespace controller.
	cmd = newTestCommand(kube, freshNamespace())
	if err := cmd.run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`[{"op":"add","path":"/metadata/finalizers/-","value":%q}]`, cluster.FinalizerUserDefinedNetwork)
	if err := c.Patch(ctx, ours, client.RawPatch("application/json-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
	if err := cmd.run(ctx, NewUninstall, "--yes"); err != nil {
		t.Fatal(err)
	}
	out := cmd.out.String()
	crdDeleted := "customresourcedefinition.apiextensions.k8s.io/userdefinednetworks.k8s.ovn.org deleted\n"
	if i, j := strings.Index(out, released), strings.Index(out, crdDeleted); i < 0 || j < 0 || i > j {
		t.Errorf("uninstall --yes printed:\n%s\nwant %q before %q", out, released, crdDeleted)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ours), got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Finalizers, []string{otherFinalizer}) {
		t.Errorf("after uninstall --yes, NAD red has finalizers %v, want [%s]", got.Finalizers, otherFinalizer)
	}
	// The other tests of the package expect the k8s.ovn.org CRDs.
	if err := newTestCommand(kube, freshNamespace()).run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
}
