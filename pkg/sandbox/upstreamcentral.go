package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/poll"
)

// A sandbox can also be made to look like upstream OVN-Kubernetes with one central NB
// (not interconnect): a DaemonSet ovnkube-node none of whose containers serves an NB,
// and a Deployment ovnkube-db whose nb-ovsdb container serves the NB on
// /var/run/ovn/ovnnb_db.sock. Here that NB is one node's zone, relayed as for
// interconnect: the sandbox's nodes keep their zones, and the central NB a reader finds
// is the one node's.

// UpstreamDB is where upstream's manifests put the workload serving the central NB, in
// UpstreamNamespace.
const UpstreamDB = "ovnkube-db"

// ServeCentralNBAsUpstream imports the OVN image into every node's containerd, creates
// an ovnkube-node DaemonSet without an NB container and an ovnkube-db Deployment whose
// pod, on node, relays node's zone NB, and returns once that pod is ready. The
// DaemonSet's pods are not waited for: nothing reads them.
func (s *Sandbox) ServeCentralNBAsUpstream(ctx context.Context, node string) error {
	if !slices.ContainsFunc(s.Nodes, func(n Node) bool { return n.Name == node }) {
		return fmt.Errorf("no node %s in the sandbox", node)
	}
	client, err := s.prepareUpstream(ctx)
	if err != nil {
		return err
	}
	ds := upstreamDaemonSet()
	spec := &ds.Spec.Template.Spec
	spec.Containers = slices.DeleteFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == upstreamNBContainer })
	spec.Volumes = nil
	if _, err := client.AppsV1().DaemonSets(UpstreamNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create DaemonSet %s/%s: %w", UpstreamNamespace, UpstreamDaemonSet, err)
	}
	if _, err := client.AppsV1().Deployments(UpstreamNamespace).Create(ctx, upstreamDBDeployment(node), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Deployment %s/%s: %w", UpstreamNamespace, UpstreamDB, err)
	}
	return poll.Until(ctx, upstreamTimeout, "a ready "+UpstreamDB+" pod", func(ctx context.Context) error {
		return upstreamDBReady(ctx, client)
	})
}

// upstreamDBDeployment is ovnkube-db as upstream's manifests lay it out (name=ovnkube-db,
// hostNetwork, containers nb-ovsdb and sb-ovsdb), its one pod placed on node, its
// nb-ovsdb relaying node's zone NB.
func upstreamDBDeployment(node string) *appsv1.Deployment {
	labels := map[string]string{"name": UpstreamDB}
	ds := upstreamDaemonSet()
	var containers []corev1.Container
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == upstreamNBContainer || c.Name == "sb-ovsdb" {
			containers = append(containers, c)
		}
	}
	spec := ds.Spec.Template.Spec
	spec.Containers = containers
	spec.NodeName = node
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: UpstreamNamespace, Name: UpstreamDB},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// A new pod starts only once the old one is gone, as with upstream's single
			// database (its file is the host's).
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// upstreamDBReady says whether a pod of ovnkube-db is ready.
func upstreamDBReady(ctx context.Context, client kubernetes.Interface) error {
	pods, err := client.CoreV1().Pods(UpstreamNamespace).List(ctx, metav1.ListOptions{LabelSelector: "name=" + UpstreamDB})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return PodReady(&p) }) {
		return errors.New("no ready " + UpstreamDB + " pod")
	}
	return nil
}
