package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Names inside the agent's pod.
const (
	agentContainer = "agent"
	configVolume   = "config"
	nbSocketVolume = "ovn-run"
	ovsRunVolume   = "ovs-run"
	// ovsRunDir is where OVS keeps its database socket and the bridges' OpenFlow
	// sockets on a node, which the agent's node part talks to.
	ovsRunDir    = "/var/run/openvswitch"
	httpPortName = "http"
	// The container runtime's CNI directories on a node, where the agent installs its
	// plugin and, once the node can wire pods, the network configuration; and the
	// directory of the agent's socket, on which the plugin (run by the runtime on the
	// host) asks for the pods' plans. Each is mounted at the same path as on the host,
	// and the agent is told the same paths by flag (cni-bin-dir, cni-conf-dir,
	// cni-socket), so mounts and settings cannot disagree.
	cniBinVolume    = "cni-bin"
	cniBinDir       = "/opt/cni/bin"
	cniConfVolume   = "cni-conf"
	cniConfDir      = "/etc/cni/net.d"
	cniSocketVolume = "ovnk-run"
	cniSocketDir    = "/var/run/ovnk"
	cniSocket       = cniSocketDir + "/cni.sock"
)

// AgentArgs are the flags the DaemonSet passes its agents after --config, for an HTTP
// port and NB socket directory. The settings that must agree with the rest of the pod
// spec (the probes' port, the mounted directories) are flags, which override the config
// file's keys of the same names (docs/agent-config.md); whoever loads the config file
// as an agent of the DaemonSet does (kubectl ovnk) passes the same.
func AgentArgs(httpPort int32, nbSocketDir string) []string {
	return []string{
		"--http-address=:" + strconv.Itoa(int(httpPort)),
		"--nb-address=unix:" + nbSocketDir + "/" + NBSocketName,
		"--sb-address=unix:" + nbSocketDir + "/" + SBSocketName,
		"--ovs-address=" + AgentOVSAddress,
		"--cni-bin-dir=" + cniBinDir,
		"--cni-conf-dir=" + cniConfDir,
		"--cni-socket=" + cniSocket,
	}
}

// selector returns the DaemonSet's selector labels: only the ones that never change,
// because a DaemonSet's selector is immutable (the version label changes on upgrade).
func selector() map[string]string {
	return map[string]string{LabelName: AgentName, LabelPartOf: "ovnk"}
}

// daemonSet runs one agent per node, on every node whatever its taints, in the host's
// network namespace and privileged: it programs the node's OVN zone, OVS, routes and
// nftables.
func (o AgentOptions) daemonSet() *appsv1.DaemonSet {
	configHash := sha256.Sum256([]byte(o.Config))
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet"},
		ObjectMeta: o.meta(AgentName),
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selector()},
			UpdateStrategy: o.updateStrategy(),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      o.labels(),
					Annotations: map[string]string{ConfigHashAnnotation: hex.EncodeToString(configHash[:])},
				},
				Spec: o.podSpec(),
			},
		},
	}
}

// updateStrategy replaces one node's agent at a time, or, with OnDelete, a node's agent
// once its pod is deleted.
func (o AgentOptions) updateStrategy() appsv1.DaemonSetUpdateStrategy {
	if o.UpdateStrategy == appsv1.OnDeleteDaemonSetStrategyType {
		return appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	}
	return appsv1.DaemonSetUpdateStrategy{
		Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			// No surge: the new pod could not bind the node's HTTP port while the old
			// one holds it.
			MaxSurge: ptr.To(intstr.FromInt32(0)),
		},
	}
}

// hostDirVolume is the host's directory path as a volume, created if missing.
func hostDirVolume(name, path string) corev1.Volume {
	return corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: path,
			Type: ptr.To(corev1.HostPathDirectoryOrCreate),
		}},
	}
}

func (o AgentOptions) podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: AgentName,
		HostNetwork:        true,
		// The agent resolves cluster names (the API server's service) from the host
		// network.
		DNSPolicy:         corev1.DNSClusterFirstWithHostNet,
		PriorityClassName: "system-node-critical",
		// Every node needs its agent, whatever its taints (NoSchedule, NoExecute,
		// not-ready, unreachable).
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers:  []corev1.Container{o.container()},
		// The host's directories, created if missing, so the agent starts (and reports
		// not ready, naming what is missing) before ovn-central or OVS has made its
		// socket; the directories rather than the sockets, so a socket made later is seen.
		Volumes: []corev1.Volume{
			hostDirVolume(nbSocketVolume, o.NBSocketDir),
			hostDirVolume(ovsRunVolume, ovsRunDir),
			hostDirVolume(cniBinVolume, cniBinDir),
			hostDirVolume(cniConfVolume, cniConfDir),
			hostDirVolume(cniSocketVolume, cniSocketDir),
			{
				Name: configVolume,
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: o.ConfigMapName},
				}},
			},
		},
	}
}

func (o AgentOptions) container() corev1.Container {
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path:   path,
				Port:   intstr.FromInt32(o.HTTPPort),
				Scheme: corev1.URISchemeHTTP,
			}},
			PeriodSeconds:    period,
			TimeoutSeconds:   5,
			SuccessThreshold: 1,
			FailureThreshold: failures,
		}
	}
	return corev1.Container{
		Name:            agentContainer,
		Image:           o.Image,
		ImagePullPolicy: o.ImagePullPolicy,
		Command:         []string{"ovnk-agent", "run", "--config", AgentConfigPath},
		Args:            AgentArgs(o.HTTPPort, o.NBSocketDir),
		Env: []corev1.EnvVar{
			{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"},
			}},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}},
		},
		// With the host network, the container port is the node's port.
		Ports: []corev1.ContainerPort{{
			Name:          httpPortName,
			ContainerPort: o.HTTPPort,
			HostPort:      o.HTTPPort,
			Protocol:      corev1.ProtocolTCP,
		}},
		// Restarted after a minute of failing /healthz; out of rotation after 15s of
		// failing /readyz (not connected to the NB, or not synced).
		LivenessProbe:  probe("/healthz", 10, 6),
		ReadinessProbe: probe("/readyz", 5, 3),
		Resources: corev1.ResourceRequirements{
			// Requests only: no limits, so a large resync is never throttled or killed.
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("50m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			},
		},
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		VolumeMounts: []corev1.VolumeMount{
			{Name: nbSocketVolume, MountPath: o.NBSocketDir},
			{Name: ovsRunVolume, MountPath: ovsRunDir},
			{Name: cniBinVolume, MountPath: cniBinDir},
			{Name: cniConfVolume, MountPath: cniConfDir},
			{Name: cniSocketVolume, MountPath: cniSocketDir},
			{Name: configVolume, MountPath: AgentConfigDir, ReadOnly: true},
		},
	}
}
