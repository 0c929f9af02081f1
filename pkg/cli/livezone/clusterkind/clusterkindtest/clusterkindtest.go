// Package clusterkindtest builds ovnkube-node DaemonSets laid out as upstream
// OVN-Kubernetes' deployments lay out theirs — its own manifests for interconnect and
// for a central NB, and OpenShift's — the ovnkube-db Deployment and StatefulSet that
// serve a central NB, and their pods, for the tests of the code that finds them and
// reads zones through them. The layouts keep what that code looks at (names, labels,
// containers, commands, mounts) and drop the rest.
package clusterkindtest

import (
	"fmt"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
)

// Image is the image every container of the layouts runs: upstream's one image.
const Image = "docker.io/ovnkube/ovn-daemonset:latest"

// Upstream is ovnkube-node in interconnect mode as upstream's own manifests deploy it
// (ovnkube-single-node-zone): per node an NB, an SB, northd, ovnkube-controller and
// ovn-controller, each in a container running the image's entry script, with the
// host's OVS run directory mounted at /var/run/ovn/ and /var/run/openvswitch/. Those
// paths are put under root, for a node that has no container filesystem ("" for a
// real one).
func Upstream(namespace, root string) *appsv1.DaemonSet {
	runMounts := []corev1.VolumeMount{
		{Name: "host-var-run-ovs", MountPath: path.Join("/", root, "var/run/ovn") + "/"},
		{Name: "host-var-run-ovs", MountPath: path.Join("/", root, "var/run/openvswitch") + "/"},
	}
	script := func(name, command string) corev1.Container {
		return corev1.Container{Name: name, Image: Image, Command: []string{"/root/ovnkube.sh", command}, VolumeMounts: runMounts}
	}
	return daemonSet(namespace, map[string]string{"app": "ovnkube-node", "name": "ovnkube-node", "component": "network"},
		[]corev1.Volume{hostPath("host-var-run-ovs", "/var/run/openvswitch")},
		script("nb-ovsdb", "local-nb-ovsdb"),
		script("sb-ovsdb", "local-sb-ovsdb"),
		script("ovn-northd", "run-ovn-northd"),
		script("ovnkube-controller", "ovnkube-controller-with-node"),
		script("ovn-controller", "ovn-controller"),
	)
}

// Centralized is ovnkube-node as upstream's manifests deploy it with one central NB
// (served by ovnkube-db): no container of the node's pod serves an NB.
func Centralized(namespace string) *appsv1.DaemonSet {
	mounts := []corev1.VolumeMount{{Name: "host-var-run-ovs", MountPath: "/var/run/ovn/"}}
	return daemonSet(namespace, map[string]string{"app": "ovnkube-node", "name": "ovnkube-node", "component": "network"},
		[]corev1.Volume{hostPath("host-var-run-ovs", "/var/run/openvswitch")},
		corev1.Container{Name: "ovnkube-node", Image: Image, Command: []string{"/root/ovnkube.sh", "ovn-node"}, VolumeMounts: mounts},
		corev1.Container{Name: "ovn-controller", Image: Image, Command: []string{"/root/ovnkube.sh", "ovn-controller"}, VolumeMounts: mounts},
	)
}

// CentralDB is ovnkube-db as upstream's manifests deploy it beside Centralized: a
// Deployment of one pod whose nb-ovsdb and sb-ovsdb containers run the image's entry
// script, with the host's OVS run directory mounted at /var/run/ovn/ and
// /var/run/openvswitch/ (under root, as for Upstream).
func CentralDB(namespace, root string) *appsv1.Deployment {
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: clusterkind.UpstreamDB, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": clusterkind.UpstreamDB}},
			Template: dbTemplate(root, "nb-ovsdb", "sb-ovsdb"),
		},
	}
}

// CentralDBRaft is ovnkube-db as upstream's raft manifests deploy it: a StatefulSet of
// replicas pods (ovnkube-db-0, -1, …), each a member of the NB's and the SB's raft
// clusters, with a third container checking the databases.
func CentralDBRaft(namespace, root string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: clusterkind.UpstreamDB, Namespace: namespace},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: clusterkind.UpstreamDB,
			Replicas:    &replicas,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"name": clusterkind.UpstreamDB}},
			Template:    dbTemplate(root, "nb-ovsdb-raft", "sb-ovsdb-raft", "ovn-dbchecker"),
		},
	}
}

// dbTemplate is ovnkube-db's pod: a container per entry script command, the first two
// named after the database they serve (nb-ovsdb, sb-ovsdb) whatever the command.
func dbTemplate(root string, commands ...string) corev1.PodTemplateSpec {
	runMounts := []corev1.VolumeMount{
		{Name: "host-var-run-ovs", MountPath: path.Join("/", root, "var/run/ovn") + "/"},
		{Name: "host-var-run-ovs", MountPath: path.Join("/", root, "var/run/openvswitch") + "/"},
	}
	names := []string{"nb-ovsdb", "sb-ovsdb", "ovn-dbchecker"}
	var containers []corev1.Container
	for i, command := range commands {
		containers = append(containers, corev1.Container{
			Name: names[i], Image: Image, Command: []string{"/root/ovnkube.sh", command}, VolumeMounts: runMounts,
		})
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": clusterkind.UpstreamDB, "component": "network", "type": "infra"}},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			DNSPolicy:   corev1.DNSDefault,
			Volumes:     []corev1.Volume{hostPath("host-var-run-ovs", "/var/run/openvswitch")},
			Containers:  containers,
		},
	}
}

// OpenShift is ovnkube-node as OpenShift deploys it in interconnect mode: containers
// named after the daemons (nbdb, sbdb, northd, ovnkube-controller, ovn-controller and
// sidecars), each a bash script that starts its daemon (the NB through ovn-ctl), and
// the host's /var/run/ovn-ic mounted at /run/ovn/ (under root).
func OpenShift(namespace, root string) *appsv1.DaemonSet {
	mounts := []corev1.VolumeMount{
		{Name: "run-openvswitch", MountPath: path.Join("/", root, "run/openvswitch") + "/"},
		{Name: "run-ovn", MountPath: path.Join("/", root, "run/ovn") + "/"},
	}
	bash := func(name, script string) corev1.Container {
		return corev1.Container{Name: name, Image: Image, Command: []string{"/bin/bash", "-c", script}, VolumeMounts: mounts}
	}
	return daemonSet(namespace, map[string]string{"app": "ovnkube-node", "component": "network"},
		[]corev1.Volume{hostPath("run-openvswitch", "/var/run/openvswitch"), hostPath("run-ovn", "/var/run/ovn-ic")},
		bash("ovn-controller", "exec ovn-controller unix:/var/run/openvswitch/db.sock --pidfile=/var/run/ovn/ovn-controller.pid"),
		bash("kube-rbac-proxy-node", "exec /usr/bin/kube-rbac-proxy --secure-listen-address=:9103"),
		bash("northd", "exec ovn-northd --pidfile /var/run/ovn/ovn-northd.pid"),
		bash("nbdb", "exec /usr/share/ovn/scripts/ovn-ctl --no-monitor run_nb_ovsdb"),
		bash("sbdb", "exec /usr/share/ovn/scripts/ovn-ctl --no-monitor run_sb_ovsdb"),
		bash("ovnkube-controller", "exec /usr/bin/ovnkube --init-ovnkube-controller \"${K8S_NODE}\" --enable-interconnect"),
	)
}

func daemonSet(namespace string, labels map[string]string, volumes []corev1.Volume, containers ...corev1.Container) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: clusterkind.UpstreamDaemonSet, Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork: true,
					DNSPolicy:   corev1.DNSDefault,
					Volumes:     volumes,
					Containers:  containers,
				},
			},
		},
	}
}

func hostPath(name, dir string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}
}

// Pod is the pod ds would create on node, its status unset.
func Pod(ds *appsv1.DaemonSet, node string) *corev1.Pod {
	return podOf(ds.Namespace, metav1.ObjectMeta{GenerateName: ds.Name + "-"}, ds.Spec.Template, node)
}

// DeploymentPod is a pod d would create, scheduled on node, its status unset.
func DeploymentPod(d *appsv1.Deployment, node string) *corev1.Pod {
	return podOf(d.Namespace, metav1.ObjectMeta{GenerateName: d.Name + "-"}, d.Spec.Template, node)
}

// StatefulSetPod is sts's pod of the given ordinal (named <sts>-<ordinal>), scheduled
// on node, its status unset.
func StatefulSetPod(sts *appsv1.StatefulSet, ordinal int, node string) *corev1.Pod {
	return podOf(sts.Namespace, metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", sts.Name, ordinal)}, sts.Spec.Template, node)
}

func podOf(namespace string, name metav1.ObjectMeta, template corev1.PodTemplateSpec, node string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name.Name, GenerateName: name.GenerateName, Namespace: namespace, Labels: template.Labels},
		Spec:       *template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	return pod
}

// Running sets pod's status to what a kubelet reports once every container started,
// ready or not.
func Running(pod *corev1.Pod, ready bool) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: condition(ready)}}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		})
	}
}

func condition(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}
