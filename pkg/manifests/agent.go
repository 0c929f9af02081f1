package manifests

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/version"
)

// The agent's fixed names and the defaults of AgentOptions.
const (
	// AgentName names the agent's ServiceAccount, ClusterRole, ClusterRoleBinding, Role,
	// RoleBinding, DaemonSet and the value of its app.kubernetes.io/name label.
	AgentName = "ovnk-agent"
	// FieldManager is the field manager ovnk applies its manifests with.
	FieldManager = "ovnk"

	// DefaultNamespace is where the agent runs unless AgentOptions.Namespace says otherwise.
	DefaultNamespace = "ovnk-system"
	// DefaultImageRepository is the agent's image without a tag; the default tag is the
	// build's version (see AgentOptions.Version).
	DefaultImageRepository = "ghcr.io/ovnk/ovnk-agent"
	// DefaultHTTPPort is the node port the agent serves /healthz, /readyz and metrics on.
	DefaultHTTPPort int32 = 9476
	// DefaultNBSocketDir is the host directory holding the node's OVN NB socket
	// (ovnnb_db.sock), where ovn-central puts it.
	DefaultNBSocketDir = "/var/run/ovn"
	// DefaultConfigMapName is the ConfigMap holding the agent's config file.
	DefaultConfigMapName = "ovnk-agent-config"
	// DefaultAgentConfig is the agent's config file unless AgentOptions.Config says
	// otherwise: Geneve overlay, pods in 10.244.0.0/16 with a /24 per node.
	DefaultAgentConfig = "[default]\ntransport = geneve\ncluster-subnets = 10.244.0.0/16/24\n"

	// AgentConfigDir is where the config volume is mounted in the agent's container.
	AgentConfigDir = "/etc/ovnk"
	// AgentConfigKey is the ConfigMap key, and the file name, of the agent's config.
	AgentConfigKey = "agent.conf"
	// AgentConfigPath is the config file the agent reads: AgentConfigDir/AgentConfigKey.
	AgentConfigPath = AgentConfigDir + "/" + AgentConfigKey
	// NBSocketName is the NB socket's file name inside the NB socket directory.
	NBSocketName = "ovnnb_db.sock"
	// SBSocketName is the SB socket's file name, in the same directory (ovn-central
	// keeps both there).
	SBSocketName = "ovnsb_db.sock"
	// AgentOVSAddress is the Open_vSwitch database the DaemonSet's agents use: the
	// node's, in OVS's run directory, which the pod mounts at the same path.
	AgentOVSAddress = "unix:" + ovsRunDir + "/db.sock"

	// ConfigHashAnnotation, on the agent's pod template, holds the SHA-256 of the config
	// file, so that applying a changed config rolls the agents (they read it at start).
	ConfigHashAnnotation = "ovnk.github.io/config-sha256"
)

// Standard labels on every object of the agent.
const (
	LabelName    = "app.kubernetes.io/name"
	LabelPartOf  = "app.kubernetes.io/part-of"
	LabelVersion = "app.kubernetes.io/version"
)

// AgentOptions configure the agent's manifests. The zero value means every default.
type AgentOptions struct {
	// Namespace is the agent's namespace, created by the manifests; default
	// DefaultNamespace. Use a namespace of its own: it is labelled to allow privileged
	// pods, and deleting the manifests deletes it.
	Namespace string
	// Version is the version the objects are labelled with and, unless Image is set, the
	// image tag; default version.String(). An untagged build, "(devel)", becomes
	// "latest"; a "+" (build metadata, as in "+dirty") becomes "_", which both labels and
	// image tags allow.
	Version string
	// Image is the agent's image; default DefaultImageRepository:<Version>.
	Image string
	// ImagePullPolicy defaults as Kubernetes would for the image: Always for a
	// ":latest" or untagged image, IfNotPresent otherwise.
	ImagePullPolicy corev1.PullPolicy
	// HTTPPort is the port on the node's addresses (the agent uses the host network)
	// where the agent serves /healthz, /readyz and metrics; default DefaultHTTPPort.
	HTTPPort int32
	// NBSocketDir is the absolute host directory of the node's NB socket, mounted at the
	// same path in the container; default DefaultNBSocketDir. The directory is mounted,
	// not the socket, so a socket that ovn-central creates after the agent started (or
	// re-creates on restart) is seen.
	NBSocketDir string
	// UpdateStrategy is how a changed DaemonSet reaches the nodes: RollingUpdate
	// (the default) replaces the agents one node at a time by itself; OnDelete
	// replaces a node's agent only once its pod is deleted, so the operator rolls
	// nodes in an order of their own (the Layer2 upgrade, docs/upgrade.md).
	UpdateStrategy appsv1.DaemonSetUpdateStrategyType
	// ConfigMapName names the ConfigMap holding Config; default DefaultConfigMapName.
	ConfigMapName string
	// Config is the content of the agent's config file (INI); default DefaultAgentConfig.
	// It is embedded as is: the agent validates it when it starts.
	Config string
}

// tagPattern is an OCI image tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// complete returns the options with every default filled in, checked.
func (o AgentOptions) complete() (AgentOptions, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Version == "" {
		o.Version = version.String()
	}
	if o.Version == "(devel)" {
		o.Version = "latest"
	}
	o.Version = strings.ReplaceAll(o.Version, "+", "_")
	if o.Image == "" {
		if !tagPattern.MatchString(o.Version) {
			return o, fmt.Errorf("version %q is not a valid image tag: set the image explicitly", o.Version)
		}
		o.Image = DefaultImageRepository + ":" + o.Version
	}
	if o.ImagePullPolicy == "" {
		o.ImagePullPolicy = defaultPullPolicy(o.Image)
	}
	if o.HTTPPort == 0 {
		o.HTTPPort = DefaultHTTPPort
	}
	if o.UpdateStrategy == "" {
		o.UpdateStrategy = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if o.NBSocketDir == "" {
		o.NBSocketDir = DefaultNBSocketDir
	}
	if o.ConfigMapName == "" {
		o.ConfigMapName = DefaultConfigMapName
	}
	if o.Config == "" {
		o.Config = DefaultAgentConfig
	}
	return o, o.validate()
}

// validate checks completed options, naming the offending value and what is expected.
func (o AgentOptions) validate() error {
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q is not a valid namespace name: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(o.Version); len(errs) > 0 {
		return fmt.Errorf("version %q cannot be the value of label %s: %s", o.Version, LabelVersion, strings.Join(errs, "; "))
	}
	if strings.ContainsFunc(o.Image, unicode.IsSpace) {
		return fmt.Errorf("image %q contains white space", o.Image)
	}
	switch o.ImagePullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return fmt.Errorf("image pull policy %q is not one of %s, %s, %s", o.ImagePullPolicy, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
	}
	switch o.UpdateStrategy {
	case appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType:
	default:
		return fmt.Errorf("update strategy %q is not one of %s, %s", o.UpdateStrategy, appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType)
	}
	if o.HTTPPort < 1 || o.HTTPPort > 65535 {
		return fmt.Errorf("HTTP port %d is outside 1-65535", o.HTTPPort)
	}
	if !path.IsAbs(o.NBSocketDir) || path.Clean(o.NBSocketDir) != o.NBSocketDir {
		return fmt.Errorf("NB socket directory %q is not a clean absolute path such as %s", o.NBSocketDir, DefaultNBSocketDir)
	}
	if errs := validation.IsDNS1123Subdomain(o.ConfigMapName); len(errs) > 0 {
		return fmt.Errorf("ConfigMap name %q is not valid: %s", o.ConfigMapName, strings.Join(errs, "; "))
	}
	return nil
}

// defaultPullPolicy is Kubernetes' default for an image: Always when it has no digest
// and its tag is "latest" or missing, IfNotPresent otherwise.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:] // a registry's ":port" is not a tag
	if i := strings.LastIndex(name, ":"); i < 0 || name[i+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// Agent returns the objects that run the agent, in the order to apply them: Namespace,
// ServiceAccount, ClusterRole, ClusterRoleBinding, Role, RoleBinding, ConfigMap,
// DaemonSet. Each has its apiVersion and kind set and carries the labels
// app.kubernetes.io/name=ovnk-agent, app.kubernetes.io/part-of=ovnk and
// app.kubernetes.io/version. The k8s.ovn.org CRDs (CRDs) must be installed too; they
// are not part of this list.
func Agent(opts AgentOptions) ([]client.Object, error) {
	o, err := opts.complete()
	if err != nil {
		return nil, fmt.Errorf("agent manifests: %w", err)
	}
	return []client.Object{
		o.namespace(),
		o.serviceAccount(),
		o.clusterRole(),
		o.clusterRoleBinding(),
		o.role(),
		o.roleBinding(),
		o.configMap(),
		o.daemonSet(),
	}, nil
}

// labels returns the labels of every object.
func (o AgentOptions) labels() map[string]string {
	return map[string]string{
		LabelName:    AgentName,
		LabelPartOf:  "ovnk",
		LabelVersion: o.Version,
	}
}

// meta returns the object metadata of a namespaced object of the agent.
func (o AgentOptions) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels()}
}

func (o AgentOptions) namespace() *corev1.Namespace {
	labels := o.labels()
	// The agent's pods are privileged (they program the host's dataplane); a cluster
	// that enforces a stricter Pod Security level by default would refuse them.
	labels["pod-security.kubernetes.io/enforce"] = "privileged"
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: labels},
	}
}

func (o AgentOptions) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: o.meta(AgentName),
	}
}

func (o AgentOptions) configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: o.meta(o.ConfigMapName),
		Data:       map[string]string{AgentConfigKey: o.Config},
	}
}
