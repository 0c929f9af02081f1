package sandbox

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/images"
)

// TestPod is a pod of the test application (images.TestAppImage: it answers who it is
// and whom it saw on TCP and UDP 8080, and has busybox's shell and ping) that the
// scheduler places on node. The image is in every node's containerd already: it is
// never pulled.
func TestPod(namespace, name, node string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{
				Name:            "app",
				Image:           images.TestAppImage,
				ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
}
