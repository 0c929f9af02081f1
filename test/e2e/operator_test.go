package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/test/sandboxtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestOperatorsKubectl repeats, through the real kubectl on the sandbox, what an
// operator ran into (issue #19): a mistyped sub-command of `kubectl ovnk network` fails
// with the command it meant, and kubectl's verbs reach the plugin's; and pods are
// deleted as docs/demo.md says: by their kubelet with a plain `kubectl delete pod`, and,
// on a node whose kubelet is gone, only marked until `--grace-period=0 --force`.
func TestOperatorsKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	r := ec.ovnk(ctx, nil, "network", "delet", "blue")
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("kubectl ovnk network delet blue: %v, want exit status 1\n%s%s", r.err, r.stdout, r.stderr)
	}
	if want := "error: unknown command \"delet\" for \"kubectl ovnk network\"\n\nDid you mean this?\n\tdelete\n"; r.stderr != want {
		t.Errorf("kubectl ovnk network delet blue printed on stderr %q, want %q", r.stderr, want)
	}
	ec.must(ctx, "network", "get", "-o", "name")

	const ns = "del"
	ec.create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	withKubelet, lost := ec.nodes[1], ec.nodes[2]
	ec.create(ctx, pod(ns, "a", withKubelet.name), pod(ns, "b", lost.name))
	for _, name := range []string{"a", "b"} {
		if err := testenv.Eventually(ctx, 2*time.Minute, "pod "+ns+"/"+name+" running", func(ctx context.Context) error {
			var p corev1.Pod
			if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
				return fmt.Errorf("get pod %s/%s: %w", ns, name, err)
			}
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s/%s is %s", ns, name, p.Status.Phase)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	// kubectl waits until the kubelet has confirmed, so the pod is gone when it returns.
	if out, err := ec.plainKubectl(ctx, "delete", "pod", "-n", ns, "a", "--timeout=2m"); err != nil {
		t.Fatalf("kubectl delete pod %s/a: %v\n%s", ns, err, out)
	}
	if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "a"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod %s/a after kubectl delete returned: %v, want not found", ns, err)
	}

	ec.stopNode(ctx, lost)
	if out, err := ec.plainKubectl(ctx, "delete", "pod", "-n", ns, "b", "--wait=false"); err != nil {
		t.Fatalf("kubectl delete pod %s/b --wait=false: %v\n%s", ns, err, out)
	}
	var b corev1.Pod
	if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "b"}, &b); err != nil {
		t.Fatalf("pod %s/b went without its kubelet: %v", ns, err)
	}
	if b.DeletionTimestamp == nil {
		t.Fatalf("pod %s/b is not marked for deletion after kubectl delete", ns)
	}
	if out, err := ec.plainKubectl(ctx, "delete", "pod", "-n", ns, "b", "--grace-period=0", "--force"); err != nil {
		t.Fatalf("kubectl delete pod %s/b --grace-period=0 --force: %v\n%s", ns, err, out)
	}
	if err := testenv.Eventually(ctx, 30*time.Second, "pod "+ns+"/b gone", func(ctx context.Context) error {
		err := ec.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "b"}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get pod %s/b: %w", ns, err)
		}
		return fmt.Errorf("pod %s/b still there", ns)
	}); err != nil {
		t.Fatal(err)
	}
}

// plainKubectl runs the real kubectl with args against the sandbox and returns what it
// printed, both streams.
func (ec *e2eCluster) plainKubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, ec.kubectl, args...)
	cmd.Env = append(os.Environ(), sandboxtest.KubectlEnv(ec.t, ec.s)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}
