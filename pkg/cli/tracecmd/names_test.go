package tracecmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/test/testenv"
)

// kubectlResult is what one run of the real kubectl printed, and its exit status.
type kubectlResult struct {
	stdout, stderr string
	exit           int
}

// kubectl runs the real kubectl, which finds the plugin on PATH, as a user runs
// `kubectl ovnk trace …` from a shell: its output a pipe, the zones read from the NBs
// the cluster's settings file names, nothing taken from the test's environment but
// what a shell has.
func (tc *traceCluster) kubectl(t *testing.T, args ...string) kubectlResult {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OVNK_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	pluginDir := filepath.Dir(testenv.Command(t, "kubectl-ovnk"))
	env = append(env, "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=", "XDG_CONFIG_HOME="+t.TempDir())
	env = append(env, tc.k.Env()...)
	for k, v := range tc.env {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.k.KubectlPath, append([]string{"ovnk", "trace"}, args...)...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	r := kubectlResult{}
	var exit *exec.ExitError
	switch err := cmd.Run(); {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("kubectl ovnk trace %s: %v", strings.Join(args, " "), err)
	}
	r.stdout, r.stderr = out.String(), errOut.String()
	return r
}

// TestTraceThroughKubectlNamesNetworksAsUsersDo traces between the pods of two
// namespaces on one ClusterUserDefinedNetwork, whose annotations name their
// attachments green-a/green and green-b/green: the trace, its saved pods, --network and
// its errors name the network green, as `kubectl ovnk network list` does.
func TestTraceThroughKubectlNamesNetworksAsUsersDo(t *testing.T) {
	tc := newTraceCluster(t, crossNamespace())
	save := filepath.Join(t.TempDir(), "trace.json")
	r := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--save", save)
	if r.exit != 0 {
		t.Fatalf("exit status %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if want := "DELIVERED: delivered to pod green-b/pod-node2 on node2"; !strings.Contains(r.stdout, want) {
		t.Errorf("the trace lacks %q:\n%s", want, r.stdout)
	}
	for _, attachment := range []string{"green-a/green", "green-b/green"} {
		if strings.Contains(r.stdout, attachment) {
			t.Errorf("the trace names network green by its attachment %s:\n%s", attachment, r.stdout)
		}
	}
	if want := "Saved what the trace read to " + save + "; replay it with: kubectl ovnk trace --from-file " + save + "\n"; r.stderr != want {
		t.Errorf("stderr %q, want only %q", r.stderr, want)
	}
	var saved struct {
		Pods []struct{ Pod, Network, NAD string }
	}
	data, err := os.ReadFile(save)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range saved.Pods {
		ns, _, _ := strings.Cut(p.Pod, "/")
		if ns != "green-a" && ns != "green-b" {
			continue
		}
		found++
		if p.Network != "green" || p.NAD != ns+"/green" {
			t.Errorf("saved pod %s on network %q, attachment %q; want green, %s/green", p.Pod, p.Network, p.NAD, ns)
		}
	}
	if found != 3 {
		t.Errorf("saved %d of the 3 green pods: %+v", found, saved.Pods)
	}

	// --network takes the network's name, its OVN name and the attachment's name.
	for _, network := range []string{"green", "cluster_udn_green", "green-a/green"} {
		if again := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--network", network); again.exit != 0 || again.stdout != r.stdout {
			t.Errorf("--network %s: exit status %d, a different trace:\n%s%s", network, again.exit, again.stdout, again.stderr)
		}
	}
	wrong := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--network", "red")
	if want := `error: SRC: pod green-a/pod-node1 is not on network "red"; it is on green` + "\n"; wrong.exit != 1 || wrong.stderr != want || wrong.stdout != "" {
		t.Errorf("--network red: exit status %d, stdout %q, stderr %q; want 1 and only %q", wrong.exit, wrong.stdout, wrong.stderr, want)
	}
}

// TestTraceThroughKubectlWithoutNetworkAccess: a user who may list the pods, nodes and
// namespaces but not the networks still traces, with the networks named by their
// pods' attachments and one warning naming the permission that would name them right.
func TestTraceThroughKubectlWithoutNetworkAccess(t *testing.T) {
	tc := newTraceCluster(t, crossNamespace())
	user := "trace-without-networks"
	c := clitest.NewClient(t, tc.k)
	clitest.CreateObjects(context.Background(), t, c,
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "namespaces"}, Verbs: []string{"get", "list"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		})
	waitAllowed(t, tc.k, user)

	r := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--as", user)
	if r.exit != 0 || !strings.Contains(r.stdout, "DELIVERED: delivered to pod green-b/pod-node2") {
		t.Fatalf("exit status %d, want 0 and the packet delivered:\n%s%s", r.exit, r.stdout, r.stderr)
	}
	resource := "clusteruserdefinednetworks." + ovnkv1.GroupName
	want := "Warning: cannot read the user-defined networks: you may not list " + resource + " (ask for list on " + resource +
		"); pods' networks are named by their network attachments (NAMESPACE/NAME), not as `kubectl ovnk network list` names them\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want once %q", r.stderr, want)
	}
	// A bare name still finds the attachment named after the network.
	if again := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--as", user, "--network", "green"); again.exit != 0 || again.stdout != r.stdout {
		t.Errorf("--network green: exit status %d, a different trace:\n%s%s", again.exit, again.stdout, again.stderr)
	}
	wrong := tc.kubectl(t, "green-a/pod-node1", "green-b/pod-node2", "--as", user, "--network", "red")
	if msg := `error: SRC: pod green-a/pod-node1 is not on network "red"; it is on green-a/green` + "\n"; wrong.exit != 1 || wrong.stderr != want+msg {
		t.Errorf("--network red: exit status %d, stderr %q; want 1 and %q", wrong.exit, wrong.stderr, want+msg)
	}
}

// waitAllowed waits until the API server's authorizer lets user list pods: RBAC
// objects take effect once its informers see them.
func waitAllowed(t *testing.T, k *testenv.Kube, user string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(k.ConfigAs(user))
	if err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(context.Background(), 30*time.Second, "user "+user+" may list pods", func(ctx context.Context) error {
		_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
