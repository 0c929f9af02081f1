package manifests_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// newClient returns a controller-runtime client for cfg that knows the built-in kinds
// and k8s.ovn.org.
func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// apply sends obj as `kubectl ovnk install` will: a server-side apply by field manager
// ovnk that takes over fields other managers own. It returns the resourceVersion of the
// server's answer.
func apply(ctx context.Context, t *testing.T, c client.Client, obj client.Object, opts ...client.ApplyOption) (string, error) {
	t.Helper()
	u, err := manifests.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]client.ApplyOption{client.FieldOwner(manifests.FieldManager), client.ForceOwnership}, opts...)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return "", explain(err)
	}
	return u.GetResourceVersion(), nil
}

// explain adds the remedy to the refusal of a privileged pod by an API server started
// without --allow-privileged=true. Real clusters allow privileged pods (kubeadm and kind
// start the API server with the flag); the agent needs them.
func explain(err error) error {
	if strings.Contains(err.Error(), "privileged: Forbidden: disallowed by cluster policy") {
		return fmt.Errorf("%w (test/testenv must start kube-apiserver with --allow-privileged=true, as real clusters do)", err)
	}
	return err
}

// TestAgentServerSideApplyDryRun has the API server validate every object fully (schema,
// defaulting, admission) without storing it. The objects go to a fresh namespace, which
// must exist for the namespaced objects to be admitted even in a dry run.
func TestAgentServerSideApplyDryRun(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(t, kube.RESTConfig)
	ns := kube.Namespace(t)
	objs := agentObjects(t, manifests.AgentOptions{Namespace: ns, Version: "v1.2.3"})
	for _, obj := range objs {
		if _, err := apply(ctx, t, c, obj, client.DryRunAll); err != nil {
			t.Errorf("%s %q refused: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: manifests.AgentName}, &appsv1.DaemonSet{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, getting the DaemonSet returned %v, want NotFound", err)
	}
}

// TestAgentYAMLAppliesWithKubectl applies the rendered YAML the way docs/install.md
// says, with the real kubectl (in a server-side dry run).
func TestAgentYAMLAppliesWithKubectl(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rendered, err := manifests.AgentYAML(manifests.AgentOptions{Namespace: kube.Namespace(t), Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(file, rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := kube.Kubectl(ctx, "apply", "--server-side", "--field-manager="+manifests.FieldManager, "--dry-run=server", "-f", file)
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", explain(err), out)
	}
	t.Logf("kubectl apply:\n%s", out)
}

// TestAgentApplyIsIdempotent installs the namespaced objects (and the namespace) in a
// fresh namespace and applies them again: the second apply changes nothing, so the
// manifests do not fight the server's defaults.
func TestAgentApplyIsIdempotent(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var namespaced []client.Object
	for _, obj := range agentObjects(t, manifests.AgentOptions{Namespace: kube.Namespace(t), Version: "v1.2.3"}) {
		switch obj.(type) {
		case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding: // TestAgentRBAC's
		default:
			namespaced = append(namespaced, obj)
		}
	}
	applyTwice(ctx, t, newClient(t, kube.RESTConfig), namespaced)
}

// applyTwice applies objs for real, in order, then again, and checks that the second
// apply left every object as it was (the same resourceVersion).
func applyTwice(ctx context.Context, t *testing.T, c client.Client, objs []client.Object) {
	t.Helper()
	first := make([]string, len(objs))
	for i, obj := range objs {
		var err error
		if first[i], err = apply(ctx, t, c, obj); err != nil {
			t.Fatalf("apply %s %q: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	for i, obj := range objs {
		again, err := apply(ctx, t, c, obj)
		if err != nil {
			t.Fatalf("apply %s %q again: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
		if again == "" || again != first[i] {
			t.Errorf("applying %s %q again changed it (resourceVersion %q -> %q)",
				obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), first[i], again)
		}
	}
}

// access is one request the agent's service account may or may not make.
type access struct {
	verb, group, resource, subresource, namespace string
}

// TestAgentRBAC installs the namespace and the RBAC objects for real and asks the API
// server's own authorizer what the agent's service account may do: everything it needs,
// and nothing more of what matters.
func TestAgentRBAC(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := newClient(t, kube.RESTConfig)
	var rbac []client.Object
	for _, obj := range agentObjects(t, manifests.AgentOptions{Version: "v1.2.3"}) {
		switch obj.(type) {
		case *appsv1.DaemonSet, *corev1.ConfigMap:
		default:
			rbac = append(rbac, obj)
		}
	}
	applyTwice(ctx, t, admin, rbac)

	const sa = "system:serviceaccount:ovnk-system:ovnk-agent"
	agentConfig := kube.ConfigAs(sa, "system:serviceaccounts", "system:serviceaccounts:ovnk-system")
	agent := newClient(t, agentConfig)
	allowed := func(ctx context.Context, a access) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.namespace,
			},
		}}
		if err := agent.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	}
	// The authorizer learns of new bindings from a watch: wait for them to be seen.
	err := testenv.Eventually(ctx, 30*time.Second, "the agent's bindings to reach the authorizer", func(ctx context.Context) error {
		for _, a := range []access{{verb: "list", resource: "nodes"}, {verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "ovnk-system"}} {
			if ok, err := allowed(ctx, a); err != nil || !ok {
				return errForbidden(a, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	ovn := ovnkv1.GroupName
	var may []access
	for _, r := range []string{"nodes", "pods"} {
		for _, v := range []string{"get", "list", "watch", "patch", "update"} {
			may = append(may, access{verb: v, resource: r})
		}
	}
	for _, v := range []string{"get", "list", "watch"} {
		may = append(may, access{verb: v, resource: "namespaces"})
	}
	for _, v := range []string{"create", "patch"} {
		may = append(may, access{verb: v, resource: "events", namespace: "default"}, access{verb: v, group: "events.k8s.io", resource: "events", namespace: "default"})
	}
	for _, r := range []string{"clusteruserdefinednetworks", "userdefinednetworks", "clusternetworkconnects", "egressips", "routeadvertisements"} {
		for _, v := range []string{"get", "list", "watch", "patch", "update"} {
			may = append(may, access{verb: v, group: ovn, resource: r})
		}
	}
	for _, r := range []string{"clusteruserdefinednetworks", "userdefinednetworks", "clusternetworkconnects", "routeadvertisements"} {
		may = append(may, access{verb: "update", group: ovn, resource: r, subresource: "status"}, access{verb: "patch", group: ovn, resource: r, subresource: "status"})
	}
	for _, v := range []string{"get", "create", "update"} {
		may = append(may, access{verb: v, group: "coordination.k8s.io", resource: "leases", namespace: "ovnk-system"})
	}
	// The networks' NetworkAttachmentDefinitions, in any namespace.
	for _, v := range []string{"get", "list", "watch", "create", "patch", "update", "delete"} {
		may = append(may, access{verb: v, group: "k8s.cni.cncf.io", resource: "network-attachment-definitions", namespace: "default"})
	}
	for _, r := range []string{"clusteruserdefinednetworks", "userdefinednetworks"} {
		may = append(may, access{verb: "update", group: ovn, resource: r, subresource: "finalizers"})
	}
	mayNot := []access{
		{verb: "delete", resource: "nodes"},
		{verb: "create", resource: "nodes"},
		{verb: "update", resource: "nodes", subresource: "status"},
		{verb: "delete", resource: "pods", namespace: "default"},
		{verb: "create", resource: "pods", namespace: "default"},
		{verb: "create", resource: "pods", subresource: "exec", namespace: "default"},
		{verb: "update", resource: "namespaces"},
		{verb: "get", resource: "secrets", namespace: "ovnk-system"},
		{verb: "list", resource: "secrets"},
		{verb: "get", resource: "configmaps", namespace: "ovnk-system"},
		{verb: "update", resource: "events", namespace: "default"},
		{verb: "create", group: ovn, resource: "clusteruserdefinednetworks"},
		{verb: "delete", group: ovn, resource: "egressips"},
		{verb: "update", group: ovn, resource: "egressips", subresource: "status"},
		{verb: "update", group: ovn, resource: "clusternetworkconnects", subresource: "finalizers"},
		{verb: "deletecollection", group: "k8s.cni.cncf.io", resource: "network-attachment-definitions", namespace: "default"},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "default"},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system"},
		{verb: "list", group: "coordination.k8s.io", resource: "leases", namespace: "ovnk-system"},
		{verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace: "ovnk-system"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
		{verb: "impersonate", resource: "users"},
		{verb: "update", group: "apps", resource: "daemonsets", namespace: "ovnk-system"},
	}
	for _, tc := range []struct {
		want     bool
		accesses []access
	}{{true, may}, {false, mayNot}} {
		for _, a := range tc.accesses {
			ok, err := allowed(ctx, a)
			if err != nil {
				t.Fatalf("access review of %+v: %v", a, err)
			}
			if ok != tc.want {
				t.Errorf("the agent may %s %s/%s (subresource %q) in namespace %q: %v, want %v", a.verb, a.group, a.resource, a.subresource, a.namespace, ok, tc.want)
			}
		}
	}

	t.Run("real requests", func(t *testing.T) { agentRequests(ctx, t, admin, agent) })
}

// errForbidden says which access is not (yet) allowed.
func errForbidden(a access, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("not allowed to %s %s/%s in namespace %q", a.verb, a.group, a.resource, a.namespace)
}

// agentRequests makes real requests as the agent: the ones it needs succeed, and
// destructive or foreign ones are forbidden.
func agentRequests(ctx context.Context, t *testing.T, admin, agent client.Client) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "ovnk-rbac-"}}
	if err := admin.Create(ctx, node); err != nil {
		t.Fatalf("create node: %v", err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), node) })
	cudn := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ovnk-rbac-"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: ovnkv1.NetworkSpec{
			Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: &ovnkv1.Layer3Config{
				Role:    ovnkv1.NetworkRolePrimary,
				Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.200.0.0/16", HostSubnet: 24}},
			},
		}},
	}
	if err := admin.Create(ctx, cudn); err != nil {
		t.Fatalf("create CUDN: %v", err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), cudn) })

	if err := agent.List(ctx, &corev1.NodeList{}); err != nil {
		t.Errorf("agent lists nodes: %v", err)
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"k8s.ovn.org/node-id":"7"}}}`))
	if err := agent.Patch(ctx, node.DeepCopy(), patch); err != nil {
		t.Errorf("agent patches node %s: %v", node.Name, err)
	}
	got := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := agent.Get(ctx, client.ObjectKeyFromObject(cudn), got); err != nil {
		t.Fatalf("agent gets CUDN %s: %v", cudn.Name, err)
	}
	got.Status.Conditions = []metav1.Condition{{
		Type: "NetworkCreated", Status: metav1.ConditionTrue, Reason: "NetworkCreated",
		Message: "created by the RBAC test", LastTransitionTime: metav1.Now(),
	}}
	if err := agent.Status().Update(ctx, got); err != nil {
		t.Errorf("agent updates the status of CUDN %s: %v", cudn.Name, err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ovnk-system", GenerateName: "ovnk-agent-"}}
	if err := agent.Create(ctx, lease); err != nil {
		t.Errorf("agent creates a lease in ovnk-system: %v", err)
	}

	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("agent %s: %v, want Forbidden", what, err)
		}
	}
	forbidden("deletes node "+node.Name, agent.Delete(ctx, node.DeepCopy()))
	forbidden("lists secrets in ovnk-system", agent.List(ctx, &corev1.SecretList{}, client.InNamespace("ovnk-system")))
	forbidden("gets a secret in ovnk-system", agent.Get(ctx, types.NamespacedName{Namespace: "ovnk-system", Name: "any"}, &corev1.Secret{}))
	forbidden("creates a lease in default", agent.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "ovnk-agent-"}}))
}
