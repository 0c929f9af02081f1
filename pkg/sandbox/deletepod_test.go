package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestDeletePodWithoutKubelet holds what docs/demo.md tells about deleting a pod whose
// node's kubelet is not running (a node the sandbox lost, issue #19): the API server
// only marks such a pod for deletion, waiting for the kubelet to confirm, so a plain
// `kubectl delete pod` waits; `--grace-period=0 --force` removes it without the
// kubelet. The shared API server has no kubelet at all, which is that situation.
func TestDeletePodWithoutKubelet(t *testing.T) {
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.PodSpec{
			// Bound to a node, as a scheduled pod is: an unbound one would go at once.
			NodeName:   "ovnk-node-2",
			Containers: []corev1.Container{{Name: "app", Image: "ovnk.local/ovnk-testapp:dev", ImagePullPolicy: corev1.PullNever}},
		},
	}
	if _, err := k.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}

	// Without waiting, which would last as long as the kubelet stays away.
	if out, err := k.Kubectl(ctx, "delete", "pod", "web", "-n", ns, "--wait=false"); err != nil {
		t.Fatalf("kubectl delete pod: %v\n%s", err, out)
	}
	got, err := k.Client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pod went without its kubelet: %v", err)
	}
	if got.DeletionTimestamp == nil {
		t.Fatalf("pod %s/web is not marked for deletion after kubectl delete", ns)
	}

	if out, err := k.Kubectl(ctx, "delete", "pod", "web", "-n", ns, "--grace-period=0", "--force"); err != nil {
		t.Fatalf("kubectl delete pod --grace-period=0 --force: %v\n%s", err, out)
	}
	if err := testenv.Eventually(ctx, 30*time.Second, "pod web gone from the API server", func(ctx context.Context) error {
		_, err := k.Client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get pod %s/web: %w", ns, err)
		}
		return fmt.Errorf("pod %s/web still there", ns)
	}); err != nil {
		t.Fatal(err)
	}
}
