package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/images"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/poll"
)

// A sandbox can be made to look, to whoever reads the cluster, like one running upstream
// OVN-Kubernetes in interconnect mode: a DaemonSet ovnkube-node in namespace
// ovn-kubernetes, laid out as upstream's (hostNetwork, app=ovnkube-node, the containers
// upstream names), whose nb-ovsdb container serves its node's zone NB on
// /var/run/ovn/ovnnb_db.sock inside the container. The container's ovsdb-server is a
// relay of the node's NB: it holds the zone's rows and answers reads itself, and writes
// reach the node's NB, as with upstream's nb-ovsdb, which serves the node's database
// file. The node's daemons (northd, ovn-controller) keep using the node's NB directly;
// upstream's other containers are idle here.

const (
	// UpstreamNamespace and UpstreamDaemonSet are where upstream's manifests put the
	// node DaemonSet.
	UpstreamNamespace = "ovn-kubernetes"
	UpstreamDaemonSet = "ovnkube-node"
	// upstreamNBContainer is the container serving the zone's NB, as upstream names it.
	upstreamNBContainer = "nb-ovsdb"
	// nodeRunOVN is where, inside the nb-ovsdb container, the node's /run/ovn (the node
	// directory with its NB socket) is mounted: not /var/run/ovn, where the container
	// serves its own socket.
	nodeRunOVN = "/run/ovn-node"
	// upstreamTimeout bounds the wait for the DaemonSet's pods, and for the agent's to go.
	upstreamTimeout = 2 * time.Minute
)

// upstreamNBCommand is the nb-ovsdb container's command: an ovsdb-server relaying the
// node's NB, serving it at the socket upstream's container serves the NB on.
var upstreamNBCommand = "exec ovsdb-server --remote=punix:/var/run/ovn/" + nbSocket +
	" --unixctl=/var/run/ovn/ovnnb_db.ctl --pidfile=/var/run/ovn/ovnnb_db.pid -vconsole:info -vfile:off" +
	" relay:OVN_Northbound:unix:" + nodeRunOVN + "/" + nbSocket

// idleCommand keeps a container running and stops at once on SIGTERM (a shell as pid 1
// gets no default action for it).
const idleCommand = `trap 'exit 0' TERM; while :; do sleep 3600 & wait; done`

// ServeZonesAsUpstream imports the OVN image (images.OVN) into every node's containerd,
// creates the ovnkube-node DaemonSet in UpstreamNamespace, and returns once every node
// runs its pod, ready: every container running (they have no probes).
func (s *Sandbox) ServeZonesAsUpstream(ctx context.Context) error {
	client, err := s.prepareUpstream(ctx)
	if err != nil {
		return err
	}
	if _, err := client.AppsV1().DaemonSets(UpstreamNamespace).Create(ctx, upstreamDaemonSet(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create DaemonSet %s/%s: %w", UpstreamNamespace, UpstreamDaemonSet, err)
	}
	return poll.Until(ctx, upstreamTimeout, "a ready "+UpstreamDaemonSet+" pod on every node", func(ctx context.Context) error {
		return s.upstreamPodsReady(ctx, client)
	})
}

// importOVNImage writes the OVN image's archive into the sandbox's images directory and
// imports it into every node's containerd.
func (s *Sandbox) importOVNImage(ctx context.Context) error {
	root, err := ovnroot.Open(s.OVNRoot)
	if err != nil {
		return err
	}
	img, err := images.OVN(images.Inputs{Busybox: images.BusyboxPath, OVNRoot: root})
	if err != nil {
		return err
	}
	archive := filepath.Join(s.Dir, "images", "ovn-daemonset.tar")
	w, err := ociarchive.WriteFile(ctx, archive, img)
	if err != nil {
		return err
	}
	for _, n := range s.Nodes {
		if err := s.importImages(ctx, n, []images.Built{{Name: img.Name, Archive: archive, Written: w}}); err != nil {
			return err
		}
	}
	return nil
}

// upstreamDaemonSet is ovnkube-node as upstream's single-zone-per-node manifests lay it
// out, its nb-ovsdb container relaying the node's NB.
func upstreamDaemonSet() *appsv1.DaemonSet {
	labels := map[string]string{"app": UpstreamDaemonSet}
	container := func(name, script string) corev1.Container {
		return corev1.Container{
			Name:            name,
			Image:           images.OVNImage,
			ImagePullPolicy: corev1.PullNever,
			Command:         []string{"/bin/sh", "-c", script},
		}
	}
	nb := container(upstreamNBContainer, upstreamNBCommand)
	nb.VolumeMounts = []corev1.VolumeMount{{Name: "host-var-run-ovn", MountPath: nodeRunOVN}}
	noToken := false
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: UpstreamNamespace, Name: UpstreamDaemonSet},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:                  true,
					AutomountServiceAccountToken: &noToken,
					Containers: []corev1.Container{
						nb,
						container("sb-ovsdb", idleCommand),
						container("ovn-northd", idleCommand),
						container("ovnkube-controller", idleCommand),
					},
					Volumes: []corev1.Volume{{
						Name:         "host-var-run-ovn",
						VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/run/ovn"}},
					}},
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				},
			},
		},
	}
}

// upstreamPodsReady says which nodes lack a ready ovnkube-node pod.
func (s *Sandbox) upstreamPodsReady(ctx context.Context, client kubernetes.Interface) error {
	pods, err := client.CoreV1().Pods(UpstreamNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + UpstreamDaemonSet})
	if err != nil {
		return err
	}
	ready := map[string]bool{}
	for i := range pods.Items {
		if PodReady(&pods.Items[i]) {
			ready[pods.Items[i].Spec.NodeName] = true
		}
	}
	var missing []string
	for _, n := range s.Nodes {
		if !ready[n.Name] {
			missing = append(missing, n.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no ready %s pod on %s", UpstreamDaemonSet, strings.Join(missing, ", "))
	}
	return nil
}

// RemoveAgent deletes the agent's DaemonSet and returns once its pods are gone. The
// zones stay as the agents left them: the nodes' NBs are the nodes' daemons, not the
// agents'.
func (s *Sandbox) RemoveAgent(ctx context.Context) error {
	client, err := s.client()
	if err != nil {
		return err
	}
	err = client.AppsV1().DaemonSets(manifests.DefaultNamespace).Delete(ctx, manifests.AgentName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the agent's DaemonSet: %w", err)
	}
	return poll.Until(ctx, upstreamTimeout, "the agent pods to be gone", func(ctx context.Context) error {
		pods, err := client.CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{
			LabelSelector: manifests.LabelName + "=" + manifests.AgentName,
		})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return errors.New(pods.Items[0].Name + " still exists")
		}
		return nil
	})
}

// prepareUpstream imports the OVN image into every node's containerd and creates
// UpstreamNamespace, for the workloads that make the sandbox look upstream's; it
// returns a client to create them with.
func (s *Sandbox) prepareUpstream(ctx context.Context) (kubernetes.Interface, error) {
	if err := s.importOVNImage(ctx); err != nil {
		return nil, err
	}
	client, err := s.client()
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: UpstreamNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", UpstreamNamespace, err)
	}
	return client, nil
}
