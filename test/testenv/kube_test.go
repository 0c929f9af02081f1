package testenv_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// TestKubeMainDiscardsControllerRuntimeLog shows KubeMain gave controller-runtime its
// logger: a logger set later is ignored (the first is kept), so what is logged does
// not reach it. Had no logger been set, the later one would take effect and receive the line
// (and a client made 30 s into the run would print a stack trace instead).
func TestKubeMainDiscardsControllerRuntimeLog(t *testing.T) {
	var got []string
	ctrllog.SetLogger(funcr.New(func(prefix, args string) { got = append(got, prefix+" "+args) }, funcr.Options{}))
	ctrllog.Log.Info("logged by a test")
	if len(got) != 0 {
		t.Errorf("controller-runtime had no logger before the test set one; it logged %q", got)
	}
}

func TestKubeAPIServerAnswers(t *testing.T) {
	k := testenv.SharedKube(t)
	t.Logf("etcd + kube-apiserver + CRDs started in %s", k.StartupTime.Round(time.Millisecond))
	ctx := context.Background()
	v, err := k.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	// An unstamped build reports v0.0.0-master, which kubectl cannot parse.
	if !strings.HasPrefix(v.GitVersion, "v1.") {
		t.Errorf("server version %q, want v1.x", v.GitVersion)
	}
	if out, err := k.Kubectl(ctx, "version"); err != nil {
		t.Errorf("kubectl version: %v\n%s", err, out)
	}
	// The admin is in system:masters, so RBAC lets it do anything; an impersonated
	// stranger must be refused, which shows RBAC is on (AlwaysAllow would let it list).
	if _, err := k.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin lists namespaces: %v", err)
	}
	stranger, err := kubernetes.NewForConfig(k.ConfigAs("ovnk-stranger"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("user without RBAC bindings lists namespaces: error %v, want Forbidden", err)
	}
}

func TestKubeCRDsEstablished(t *testing.T) {
	k := testenv.SharedKube(t)
	want, err := manifests.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("pkg/manifests embeds no CRDs")
	}
	client, err := apiextensionsclient.NewForConfig(k.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(k.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range want {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("get CRD %s: %v", crd.Name, err)
			continue
		}
		established := slices.ContainsFunc(got.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		})
		if !established {
			t.Errorf("CRD %s is not established: %+v", crd.Name, got.Status.Conditions)
		}
		// Established means served: listing the custom resources must work.
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storageVersion(crd), Resource: crd.Spec.Names.Plural}
		if _, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("list %s: %v", gvr, err)
		}
	}
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func TestKubectlListsCRDs(t *testing.T) {
	k := testenv.SharedKube(t)
	want, err := manifests.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	out, err := k.Kubectl(context.Background(), "get", "crd", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl (%s) get crd: %v", k.KubectlPath, err)
	}
	got := strings.Fields(out)
	for _, crd := range want {
		if name := "customresourcedefinition.apiextensions.k8s.io/" + crd.Name; !slices.Contains(got, name) {
			t.Errorf("kubectl get crd does not list %s; it printed:\n%s", name, out)
		}
	}
}

func TestKubeClientConfigMapRoundTrip(t *testing.T) {
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Controllers live on watches, so check one delivers the creation (etcd 3.4 lacks
	// the progress notifications newer API servers prefer, and must still work).
	w, err := k.Client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch configmaps in %s: %v", ns, err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns},
		Data:       map[string]string{"mtu": "1400"},
	}
	if _, err := k.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap %s/settings: %v", ns, err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if got, isCM := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != watch.Added || !isCM || got.Name != "settings" {
			t.Errorf("first watch event: %s %+v (channel open: %v), want ADDED of configmap settings", ev.Type, ev.Object, ok)
		}
	case <-ctx.Done():
		t.Errorf("watch in %s delivered no event for the new configmap: %v", ns, ctx.Err())
	}
	got, err := k.Client.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap %s/settings: %v", ns, err)
	}
	if got.Data["mtu"] != "1400" || got.UID == "" {
		t.Errorf("configmap %s/settings read back as %+v (uid %q), want mtu=1400 stored with a uid", ns, got.Data, got.UID)
	}
	// kubectl sees the same object through the same kubeconfig.
	out, err := k.Kubectl(ctx, "get", "configmap", "settings", "-n", ns, "-o", "jsonpath={.data.mtu}")
	if err != nil {
		t.Fatal(err)
	}
	if out != "1400" {
		t.Errorf("kubectl reads mtu %q, want 1400", out)
	}
}
