package installcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

func TestImageReference(t *testing.T) {
	for _, good := range []string{
		"", // the default
		"ovnk-agent",
		"ghcr.io/ovnk/ovnk-agent:v1.2.3",
		"localhost:5000/ovnk-agent:dev_1",
		"registry.example/team/ovnk-agent@sha256:" + strings.Repeat("ab", 32),
		"registry.example/ovnk-agent:v1@sha256:" + strings.Repeat("0", 64),
	} {
		if err := checkImage(good); err != nil {
			t.Errorf("checkImage(%q): %v", good, err)
		}
	}
	for _, bad := range []string{
		"Ghcr.io/OVNK/Agent", "ovnk agent", "ovnk-agent:", "ovnk-agent:-x", "ovnk-agent@sha256:abc",
		"/ovnk-agent", "ovnk-agent:" + strings.Repeat("x", 129), "registry.example//agent",
	} {
		err := checkImage(bad)
		if err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) || !strings.Contains(err.Error(), "e.g. ghcr.io/ovnk/ovnk-agent:v1.0.0") {
			t.Errorf("checkImage(%q) = %v, want an error naming it and showing a valid one", bad, err)
		}
	}
}

// command runs install or uninstall against kube with the agent in namespace.
type command struct {
	f           *cmdutil.Factory
	out, errOut *bytes.Buffer
}

func newTestCommand(kube *testenv.Kube, namespace string) *command {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := clitest.NewFactory(kube.Kubeconfig, clitest.Terminal{}, nil, out, errOut)
	f.Settings = &cmdutil.Settings{AgentNamespace: namespace}
	return &command{f: f, out: out, errOut: errOut}
}

func (c *command) run(ctx context.Context, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) error {
	c.out.Reset()
	c.errOut.Reset()
	cmd := newCmd(c.f)
	cmd.SetArgs(append([]string{}, args...)) // never nil, which would mean os.Args
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.ExecuteContext(ctx)
}

// freshNamespace is a namespace name no test used: install creates it, and uninstall
// leaves it Terminating (the test API server has no namespace controller).
func freshNamespace() string { return "ovnk-it-" + rand.String(6) }

// expectedNames are the lines install prints for its objects, in order, without the
// outcome.
func expectedNames(t *testing.T, namespace string) []string {
	t.Helper()
	crds, shared, agent, err := manifestObjects(manifests.AgentOptions{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, obj := range slices.Concat(crds, shared, agent) {
		names = append(names, displayName(obj))
	}
	return names
}

// outcomes parses install's output into the name and outcome of each line.
func outcomes(t *testing.T, out string) (names, results []string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		name, result, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("output line %q is not NAME OUTCOME", line)
		}
		names, results = append(names, name), append(results, result)
	}
	return names, results
}

// resourceVersions reads the resourceVersion of every object install applies.
func resourceVersions(ctx context.Context, t *testing.T, c client.Client, namespace string) map[string]string {
	t.Helper()
	crds, shared, agent, err := manifestObjects(manifests.AgentOptions{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, obj := range slices.Concat(crds, shared, agent) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatalf("get %s: %v", displayName(obj), err)
		}
		out[displayName(obj)] = got.GetResourceVersion()
	}
	return out
}

func namespaceExists(ctx context.Context, t *testing.T, c client.Client, name string) bool {
	t.Helper()
	err := c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestBadInputCreatesNothing: a bad image or agent config is refused in one line before
// anything is sent.
func TestBadInputCreatesNothing(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := freshNamespace()
	dir := t.TempDir()
	badConfig := filepath.Join(dir, "agent.conf")
	if err := os.WriteFile(badConfig, []byte("[default]\nmtu = lots\ncluster-subnet = 10.0.0.0/16/24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--image", "Registry.Example/Agent:v1"}, []string{`--image "Registry.Example/Agent:v1" is not an image reference`}},
		{[]string{"--config", badConfig}, []string{"the agent config " + badConfig + " is not valid", "cluster-subnet", "docs/agent-config.md"}},
		{[]string{"--config", filepath.Join(dir, "missing.conf")}, []string{"missing.conf", "no such file"}},
		{[]string{"-o", "wide"}, []string{`unknown output format "wide"`}},
		{[]string{"--timeout", "0s"}, []string{"--timeout 0s is not positive"}},
	} {
		cmd := newTestCommand(kube, ns)
		clitest.OneLine(t, cmd.run(ctx, NewInstall, tc.args...), tc.want...)
		if cmd.out.Len() > 0 {
			t.Errorf("install %v printed %q", tc.args, cmd.out.String())
		}
	}
	if namespaceExists(ctx, t, c, ns) {
		t.Errorf("namespace %s was created by a refused install", ns)
	}
}

// TestDryRunCreatesNothing runs install --dry-run into a namespace that does not exist
// and one that does: the objects are listed, and nothing is stored.
func TestDryRunCreatesNothing(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	crdVersions := func() []string {
		var versions []string
		for _, crd := range expectedNames(t, "x")[:6] {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apiextensions.k8s.io/v1")
			u.SetKind("CustomResourceDefinition")
			if err := c.Get(ctx, client.ObjectKey{Name: strings.TrimPrefix(crd, "customresourcedefinition.apiextensions.k8s.io/")}, u); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, u.GetResourceVersion())
		}
		return versions
	}
	before := crdVersions()

	missing := freshNamespace()
	cmd := newTestCommand(kube, missing)
	if err := cmd.run(ctx, NewInstall, "--dry-run", "--image", "registry.example/ovnk-agent:dry"); err != nil {
		t.Fatal(err)
	}
	names, results := outcomes(t, cmd.out.String())
	if want := expectedNames(t, missing); !slices.Equal(names, want) {
		t.Errorf("dry run listed %v, want %v", names, want)
	}
	for i, r := range results {
		switch {
		case i < 6 && !strings.HasSuffix(r, "(server dry run)"):
			t.Errorf("CRD %s: %q, want a server dry run", names[i], r)
		case names[i] == nadCRDName && r != found+" (server dry run)":
			t.Errorf("%s: %q, want found (server dry run)", names[i], r)
		case names[i] == "namespace/"+missing && r != "created (server dry run)":
			t.Errorf("%s: %q, want created (server dry run)", names[i], r)
		case strings.HasPrefix(names[i], "daemonset") && r != "created (dry run, not checked by the server: namespace "+missing+" does not exist yet)":
			t.Errorf("%s: %q, want created without a server check", names[i], r)
		}
	}
	if namespaceExists(ctx, t, c, missing) {
		t.Errorf("a dry run created namespace %s", missing)
	}

	existing := kube.Namespace(t)
	cmd = newTestCommand(kube, existing)
	if err := cmd.run(ctx, NewInstall, "--dry-run", "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string                       `json:"kind"`
		Items []*unstructured.Unstructured `json:"items"`
	}
	if err := yaml.Unmarshal(cmd.out.Bytes(), &list); err != nil {
		t.Fatalf("-o yaml does not parse: %v", err)
	}
	var kinds []string
	for _, item := range list.Items {
		kinds = append(kinds, item.GetKind())
		if item.GetManagedFields() != nil {
			t.Errorf("%s %s: -o yaml shows managedFields", item.GetKind(), item.GetName())
		}
	}
	wantKinds := []string{"CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition",
		"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap", "DaemonSet"}
	if list.Kind != "List" || !slices.Equal(kinds, wantKinds) {
		t.Errorf("-o yaml: a %s of %v, want a List of %v", list.Kind, kinds, wantKinds)
	}
	// The server filled in defaults: the objects were really checked.
	ds := list.Items[len(list.Items)-1]
	if policy, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "spec", "restartPolicy"); policy != "Always" {
		t.Errorf("the DaemonSet of the dry run has restartPolicy %q: not defaulted by the server", policy)
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: existing, Name: manifests.AgentName}, &appsv1.DaemonSet{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, the DaemonSet: %v, want NotFound", err)
	}
	if after := crdVersions(); !slices.Equal(before, after) {
		t.Errorf("a dry run changed the CRDs (resourceVersions %v -> %v)", before, after)
	}
}

// TestInstallIsIdempotent installs with an image and a config, then again: the second
// install reports and changes nothing.
func TestInstallIsIdempotent(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := freshNamespace()
	config := filepath.Join(t.TempDir(), "agent.conf")
	const configText = "[default]\ntransport = geneve\ncluster-subnets = 10.128.0.0/14/23\n"
	if err := os.WriteFile(config, []byte(configText), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--image", "registry.example/ovnk-agent:dev", "--config", config}
	cmd := newTestCommand(kube, ns)
	if err := cmd.run(ctx, NewInstall, args...); err != nil {
		t.Fatal(err)
	}
	names, results := outcomes(t, cmd.out.String())
	if want := expectedNames(t, ns); !slices.Equal(names, want) {
		t.Errorf("install printed %v, want %v", names, want)
	}
	if i := slices.Index(names, "daemonset.apps/"+manifests.AgentName); i < 0 || results[i] != created {
		t.Errorf("install printed %v for the DaemonSet, want created", results)
	}
	if !strings.Contains(cmd.errOut.String(), "kubectl ovnk status --wait") {
		t.Errorf("install does not say how to wait for the agents: %q", cmd.errOut.String())
	}
	var ds appsv1.DaemonSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.AgentName}, &ds); err != nil {
		t.Fatal(err)
	}
	if got := ds.Spec.Template.Spec.Containers[0].Image; got != "registry.example/ovnk-agent:dev" {
		t.Errorf("DaemonSet image %q", got)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.DefaultConfigMapName}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[manifests.AgentConfigKey] != configText {
		t.Errorf("ConfigMap holds %q, want the --config file", cm.Data[manifests.AgentConfigKey])
	}

	before := resourceVersions(ctx, t, c, ns)
	if err := cmd.run(ctx, NewInstall, args...); err != nil {
		t.Fatal(err)
	}
	_, results = outcomes(t, cmd.out.String())
	for i, r := range results {
		want := unchanged
		if names[i] == nadCRDName {
			want = found
		}
		if r != want {
			t.Errorf("installing again: %s %s, want %s", names[i], r, want)
		}
	}
	if after := resourceVersions(ctx, t, c, ns); !mapsEqual(before, after) {
		t.Errorf("installing again changed objects: %v -> %v", before, after)
	}
	// A dry run predicts what a real install would change, here only the image.
	if err := cmd.run(ctx, NewInstall, "--dry-run", "--image", "registry.example/ovnk-agent:next", "--config", config); err != nil {
		t.Fatal(err)
	}
	_, results = outcomes(t, cmd.out.String())
	for i, r := range results {
		want := unchanged + " (server dry run)"
		switch {
		case strings.HasPrefix(names[i], "daemonset.apps/"):
			want = configured + " (server dry run)"
		case names[i] == nadCRDName:
			want = found + " (server dry run)"
		}
		if r != want {
			t.Errorf("dry run of a new image: %s %s, want %s", names[i], r, want)
		}
	}
	if after := resourceVersions(ctx, t, c, ns); !mapsEqual(before, after) {
		t.Errorf("a dry run changed objects: %v -> %v", before, after)
	}
	if err := cmd.run(ctx, NewInstall, append(args, "-o", "name")...); err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(cmd.out.String()), "\n"); !slices.Equal(got, expectedNames(t, ns)) {
		t.Errorf("-o name printed %v", got)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestForceConflicts changes the agent's image with another field manager: install
// refuses to take the field back, in one line, unless --force-conflicts.
func TestForceConflicts(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := freshNamespace()
	cmd := newTestCommand(kube, ns)
	if err := cmd.run(ctx, NewInstall, "--image", "registry.example/ovnk-agent:v1"); err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.AgentName}, &ds); err != nil {
		t.Fatal(err)
	}
	ds.Spec.Template.Spec.Containers[0].Image = "registry.example/ovnk-agent:hotfix"
	if err := c.Update(ctx, &ds, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	err := cmd.run(ctx, NewInstall, "--image", "registry.example/ovnk-agent:v1")
	clitest.OneLine(t, err, "daemonset.apps/ovnk-agent", "kubectl-edit", "--force-conflicts")
	if err := cmd.run(ctx, NewInstall, "--image", "registry.example/ovnk-agent:v1", "--force-conflicts"); err != nil {
		t.Fatalf("install --force-conflicts: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&ds), &ds); err != nil {
		t.Fatal(err)
	}
	if got := ds.Spec.Template.Spec.Containers[0].Image; got != "registry.example/ovnk-agent:v1" {
		t.Errorf("after --force-conflicts the image is %q", got)
	}
}

// TestUpdateStrategyIsKept installs with OnDelete, then again without the flag, which
// keeps OnDelete (a roll-out node by node stays so), then with RollingUpdate; a new
// install without the flag gets RollingUpdate, and a bad value is refused.
func TestUpdateStrategyIsKept(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	strategy := func(ns string) appsv1.DaemonSetUpdateStrategyType {
		t.Helper()
		var ds appsv1.DaemonSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.AgentName}, &ds); err != nil {
			t.Fatal(err)
		}
		return ds.Spec.UpdateStrategy.Type
	}
	ns := freshNamespace()
	cmd := newTestCommand(kube, ns)
	for _, step := range []struct {
		args []string
		want appsv1.DaemonSetUpdateStrategyType
	}{
		{[]string{"--update-strategy", "OnDelete"}, appsv1.OnDeleteDaemonSetStrategyType},
		{nil, appsv1.OnDeleteDaemonSetStrategyType},
		{[]string{"--update-strategy", "RollingUpdate"}, appsv1.RollingUpdateDaemonSetStrategyType},
		{nil, appsv1.RollingUpdateDaemonSetStrategyType},
	} {
		if err := cmd.run(ctx, NewInstall, append([]string{"--image", "registry.example/ovnk-agent:v1"}, step.args...)...); err != nil {
			t.Fatalf("install %v: %v", step.args, err)
		}
		if got := strategy(ns); got != step.want {
			t.Errorf("after install %v the update strategy is %s, want %s", step.args, got, step.want)
		}
	}
	fresh := freshNamespace()
	if err := newTestCommand(kube, fresh).run(ctx, NewInstall, "--image", "registry.example/ovnk-agent:v1"); err != nil {
		t.Fatal(err)
	}
	if got := strategy(fresh); got != appsv1.RollingUpdateDaemonSetStrategyType {
		t.Errorf("a new install's update strategy is %s, want RollingUpdate", got)
	}
	err := cmd.run(ctx, NewInstall, "--image", "registry.example/ovnk-agent:v1", "--update-strategy", "Recreate")
	if err == nil || !strings.Contains(err.Error(), `update strategy "Recreate" is not one of RollingUpdate, OnDelete`) {
		t.Errorf("install --update-strategy Recreate: %v, want a refusal naming the value and the choices", err)
	}
}

// TestUninstall removes the agent, refuses to delete the CRDs while a network exists,
// deletes them with --yes, and installs again on the cluster without CRDs.
func TestUninstall(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := freshNamespace()
	cmd := newTestCommand(kube, ns)
	if err := cmd.run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
	cudn := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "uninstall-blue"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "blue"}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.20.0.0/16", HostSubnet: 24}},
			}},
		},
	}
	if err := c.Create(ctx, cudn); err != nil {
		t.Fatal(err)
	}

	clitest.OneLine(t, cmd.run(ctx, NewUninstall),
		"refusing to delete the CRDs", "ClusterUserDefinedNetwork uninstall-blue", "--yes", "--keep-crds")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.AgentName}, &appsv1.DaemonSet{}); err != nil {
		t.Errorf("a refused uninstall removed the DaemonSet: %v", err)
	}

	if err := cmd.run(ctx, NewUninstall, "--keep-crds"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"daemonset.apps/ovnk-agent deleted", "clusterrole.rbac.authorization.k8s.io/ovnk-agent deleted", "namespace/" + ns + " deleted"} {
		if !strings.Contains(cmd.out.String(), line+"\n") {
			t.Errorf("uninstall --keep-crds did not print %q:\n%s", line, cmd.out.String())
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifests.AgentName}, &appsv1.DaemonSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("after uninstall the DaemonSet: %v, want NotFound", err)
	}
	var namespace corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err == nil && namespace.DeletionTimestamp == nil {
		t.Errorf("after uninstall namespace %s is not being deleted", ns)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cudn), &ovnkv1.ClusterUserDefinedNetwork{}); err != nil {
		t.Errorf("uninstall --keep-crds removed the network: %v", err)
	}

	if err := cmd.run(ctx, NewUninstall, "--yes"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmd.out.String(), "daemonset.apps/ovnk-agent not found\n") ||
		!strings.Contains(cmd.out.String(), "customresourcedefinition.apiextensions.k8s.io/clusteruserdefinednetworks.k8s.ovn.org deleted\n") {
		t.Errorf("uninstall --yes printed:\n%s", cmd.out.String())
	}
	if !strings.Contains(cmd.errOut.String(), "Deleting the CRDs deletes 1 k8s.ovn.org object: ClusterUserDefinedNetwork uninstall-blue") {
		t.Errorf("uninstall --yes did not warn about the network: %q", cmd.errOut.String())
	}
	crds := &unstructured.UnstructuredList{}
	crds.SetAPIVersion("apiextensions.k8s.io/v1")
	crds.SetKind("CustomResourceDefinitionList")
	if err := c.List(ctx, crds); err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		if strings.HasSuffix(crd.GetName(), ".k8s.ovn.org") {
			t.Errorf("CRD %s is still there after uninstall --yes", crd.GetName())
		}
	}

	// A cluster without the CRDs: install creates them and waits until they are served.
	again := newTestCommand(kube, freshNamespace())
	if err := again.run(ctx, NewInstall); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(again.out.String(), "customresourcedefinition.apiextensions.k8s.io/userdefinednetworks.k8s.ovn.org created\n") {
		t.Errorf("install on a cluster without CRDs printed:\n%s", again.out.String())
	}
	if err := clitest.NewClient(t, kube).List(ctx, &ovnkv1.UserDefinedNetworkList{}); err != nil {
		t.Errorf("right after install, listing UserDefinedNetworks: %v", err)
	}
}
