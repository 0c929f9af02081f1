package manifests_test

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/golden"
)

// goldenOptions are the defaults with the version pinned: an untagged build's.
var goldenOptions = manifests.AgentOptions{Version: "(devel)"}

func agentObjects(t *testing.T, opts manifests.AgentOptions) []client.Object {
	t.Helper()
	objs, err := manifests.Agent(opts)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// find returns the only object of type T in objs.
func find[T client.Object](t *testing.T, objs []client.Object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if typed, ok := o.(T); ok {
			found = append(found, typed)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func TestAgentObjectsInApplyOrder(t *testing.T) {
	objs := agentObjects(t, manifests.AgentOptions{Version: "v1.2.3"})
	want := []string{
		"v1/Namespace /ovnk-system",
		"v1/ServiceAccount ovnk-system/ovnk-agent",
		"rbac.authorization.k8s.io/v1/ClusterRole /ovnk-agent",
		"rbac.authorization.k8s.io/v1/ClusterRoleBinding /ovnk-agent",
		"rbac.authorization.k8s.io/v1/Role ovnk-system/ovnk-agent",
		"rbac.authorization.k8s.io/v1/RoleBinding ovnk-system/ovnk-agent",
		"v1/ConfigMap ovnk-system/ovnk-agent-config",
		"apps/v1/DaemonSet ovnk-system/ovnk-agent",
	}
	var got []string
	for _, o := range objs {
		gvk := o.GetObjectKind().GroupVersionKind()
		got = append(got, fmt.Sprintf("%s/%s %s/%s", gvk.GroupVersion(), gvk.Kind, o.GetNamespace(), o.GetName()))
		wantLabels := map[string]string{
			"app.kubernetes.io/name":    "ovnk-agent",
			"app.kubernetes.io/part-of": "ovnk",
			"app.kubernetes.io/version": "v1.2.3",
		}
		for k, v := range wantLabels {
			if o.GetLabels()[k] != v {
				t.Errorf("%s %s: label %s=%q, want %q", gvk.Kind, o.GetName(), k, o.GetLabels()[k], v)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ns := find[*corev1.Namespace](t, objs)
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("namespace enforces pod security level %q, want privileged (the agent is privileged)", got)
	}
	cm := find[*corev1.ConfigMap](t, objs)
	if want := "[default]\ntransport = geneve\ncluster-subnets = 10.244.0.0/16/24\n"; cm.Data["agent.conf"] != want {
		t.Errorf("config file %q, want %q", cm.Data["agent.conf"], want)
	}
}

func TestAgentClusterRoleIsLeastPrivilege(t *testing.T) {
	objs := agentObjects(t, manifests.AgentOptions{})
	role := find[*rbacv1.ClusterRole](t, objs)
	ovn := "k8s.ovn.org"
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{ovn}, Resources: []string{
			"clusteruserdefinednetworks", "userdefinednetworks", "clusternetworkconnects", "egressips", "routeadvertisements",
		}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		{APIGroups: []string{ovn}, Resources: []string{
			"clusteruserdefinednetworks/status", "userdefinednetworks/status", "clusternetworkconnects/status", "routeadvertisements/status",
		}, Verbs: []string{"patch", "update"}},
		{APIGroups: []string{"k8s.cni.cncf.io"}, Resources: []string{"network-attachment-definitions"},
			Verbs: []string{"get", "list", "watch", "create", "patch", "update", "delete"}},
		{APIGroups: []string{ovn}, Resources: []string{"clusteruserdefinednetworks/finalizers", "userdefinednetworks/finalizers"},
			Verbs: []string{"update"}},
	}
	if !reflect.DeepEqual(role.Rules, want) {
		got, _ := yaml.Marshal(role.Rules)
		exp, _ := yaml.Marshal(want)
		t.Errorf("ClusterRole rules:\n%s\nwant:\n%s", got, exp)
	}
	ns := find[*rbacv1.Role](t, objs)
	wantNS := []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
	}
	if !reflect.DeepEqual(ns.Rules, wantNS) {
		t.Errorf("Role rules %+v, want %+v", ns.Rules, wantNS)
	}
	for _, r := range append(role.Rules, ns.Rules...) {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
			for _, v := range field {
				if strings.Contains(v, "*") {
					t.Errorf("rule %+v has the wildcard %q", r, v)
				}
			}
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %+v grants non-resource URLs", r)
		}
	}

	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "ovnk-agent", Namespace: "ovnk-system"}
	crb := find[*rbacv1.ClusterRoleBinding](t, objs)
	if crb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name}) ||
		!reflect.DeepEqual(crb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("ClusterRoleBinding binds %+v to %+v, want ClusterRole %s to %+v", crb.RoleRef, crb.Subjects, role.Name, sa)
	}
	rb := find[*rbacv1.RoleBinding](t, objs)
	if rb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: ns.Name}) ||
		!reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{sa}) || rb.Namespace != "ovnk-system" {
		t.Errorf("RoleBinding %s/%s binds %+v to %+v, want Role %s to %+v", rb.Namespace, rb.Name, rb.RoleRef, rb.Subjects, ns.Name, sa)
	}
}

func TestAgentDaemonSet(t *testing.T) {
	ds := find[*appsv1.DaemonSet](t, agentObjects(t, manifests.AgentOptions{
		Version: "v1.2.3", HTTPPort: 9999, NBSocketDir: "/run/ovn-nb",
	}))
	pod := ds.Spec.Template.Spec
	if !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet ||
		pod.PriorityClassName != "system-node-critical" || pod.ServiceAccountName != "ovnk-agent" {
		t.Errorf("pod: hostNetwork %v, dnsPolicy %s, priorityClassName %q, serviceAccountName %q",
			pod.HostNetwork, pod.DNSPolicy, pod.PriorityClassName, pod.ServiceAccountName)
	}
	if want := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}; !reflect.DeepEqual(pod.Tolerations, want) {
		t.Errorf("tolerations %+v, want %+v (every taint)", pod.Tolerations, want)
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, ds.Spec.Template.Labels)
		}
	}
	if _, ok := ds.Spec.Selector.MatchLabels["app.kubernetes.io/version"]; ok {
		t.Errorf("selector %v has the version label, which would make upgrades impossible (a selector is immutable)", ds.Spec.Selector.MatchLabels)
	}
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType ||
		ru == nil || ru.MaxUnavailable == nil || *ru.MaxUnavailable != intstr.FromInt32(1) {
		t.Errorf("update strategy %+v, want RollingUpdate with maxUnavailable 1", ds.Spec.UpdateStrategy)
	}

	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Name != "agent" || c.Image != "ghcr.io/ovnk/ovnk-agent:v1.2.3" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("container %s: image %s, pull policy %s", c.Name, c.Image, c.ImagePullPolicy)
	}
	if got, want := strings.Join(append(c.Command, c.Args...), " "),
		"ovnk-agent run --config /etc/ovnk/agent.conf --http-address=:9999 --nb-address=unix:/run/ovn-nb/ovnnb_db.sock"+
			" --sb-address=unix:/run/ovn-nb/ovnsb_db.sock --ovs-address=unix:/var/run/openvswitch/db.sock"+
			" --cni-bin-dir=/opt/cni/bin --cni-conf-dir=/etc/cni/net.d --cni-socket=/var/run/ovnk/cni.sock"; got != want {
		t.Errorf("command %q, want %q", got, want)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			t.Errorf("env %s is not from the downward API: %+v", e.Name, e)
			continue
		}
		env[e.Name] = e.ValueFrom.FieldRef.FieldPath
	}
	if want := map[string]string{"NODE_NAME": "spec.nodeName", "POD_NAMESPACE": "metadata.namespace"}; !reflect.DeepEqual(env, want) {
		t.Errorf("downward-API env %v, want %v", env, want)
	}
	for name, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != name || p.HTTPGet.Port != intstr.FromInt32(9999) {
			t.Errorf("probe %s: %+v, want httpGet %s on port 9999", name, p, name)
		}
	}
	if want := []corev1.ContainerPort{{Name: "http", ContainerPort: 9999, HostPort: 9999, Protocol: corev1.ProtocolTCP}}; !reflect.DeepEqual(c.Ports, want) {
		t.Errorf("ports %+v, want %+v", c.Ports, want)
	}
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Errorf("securityContext %+v, want privileged", c.SecurityContext)
	}
	if cpu, mem := c.Resources.Requests.Cpu().String(), c.Resources.Requests.Memory().String(); cpu != "50m" || mem != "128Mi" {
		t.Errorf("requests cpu %s memory %s, want 50m and 128Mi", cpu, mem)
	}

	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("mount %s of volume %s, which the pod does not have", m.MountPath, m.Name)
		}
	}
	if hp := volumes[mounts["/run/ovn-nb"]].HostPath; hp == nil || hp.Path != "/run/ovn-nb" {
		t.Errorf("/run/ovn-nb is not the host's /run/ovn-nb: mounts %v, volumes %+v", mounts, volumes)
	}
	if cm := volumes[mounts["/etc/ovnk"]].ConfigMap; cm == nil || cm.Name != "ovnk-agent-config" {
		t.Errorf("/etc/ovnk is not ConfigMap ovnk-agent-config: mounts %v, volumes %+v", mounts, volumes)
	}
	// Every directory the flags name is the host's same directory, mounted: the agent
	// installs the CNI plugin where the runtime looks, and its socket is where the
	// plugin, on the host, dials it.
	for _, arg := range c.Args {
		flag, value, _ := strings.Cut(arg, "=")
		dir := value
		switch flag {
		case "--cni-bin-dir", "--cni-conf-dir":
		case "--cni-socket":
			dir = path.Dir(value)
		default:
			continue
		}
		hp := volumes[mounts[dir]].HostPath
		if hp == nil || hp.Path != dir || hp.Type == nil || *hp.Type != corev1.HostPathDirectoryOrCreate {
			t.Errorf("%s: %s is not the host's %s (DirectoryOrCreate): mounts %v, volume %+v", arg, dir, dir, mounts, hp)
		}
	}
}

func TestAgentConfigChangeRollsThePods(t *testing.T) {
	hash := func(config string) string {
		ds := find[*appsv1.DaemonSet](t, agentObjects(t, manifests.AgentOptions{Config: config}))
		return ds.Spec.Template.Annotations[manifests.ConfigHashAnnotation]
	}
	a, b := hash(""), hash("[default]\ntransport = no-overlay\n")
	if a == "" || a == b {
		t.Errorf("pod template annotation %s is %q for the default config and %q for another: want two different hashes", manifests.ConfigHashAnnotation, a, b)
	}
}

func TestAgentUpdateStrategy(t *testing.T) {
	for _, tc := range []struct {
		strategy appsv1.DaemonSetUpdateStrategyType
		want     appsv1.DaemonSetUpdateStrategyType
		rolling  bool
	}{
		{"", appsv1.RollingUpdateDaemonSetStrategyType, true},
		{appsv1.RollingUpdateDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType, true},
		{appsv1.OnDeleteDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType, false},
	} {
		got := find[*appsv1.DaemonSet](t, agentObjects(t, manifests.AgentOptions{UpdateStrategy: tc.strategy})).Spec.UpdateStrategy
		if got.Type != tc.want || (got.RollingUpdate != nil) != tc.rolling {
			t.Errorf("UpdateStrategy %q gave %+v, want type %s (rolling parameters: %v)", tc.strategy, got, tc.want, tc.rolling)
		}
	}
}

func TestAgentOptionDefaults(t *testing.T) {
	for _, tc := range []struct {
		opts         manifests.AgentOptions
		image        string
		pullPolicy   corev1.PullPolicy
		versionLabel string
	}{
		{manifests.AgentOptions{Version: "(devel)"}, "ghcr.io/ovnk/ovnk-agent:latest", corev1.PullAlways, "latest"},
		{manifests.AgentOptions{Version: "v0.0.0-20260101000000-abcdef012345+dirty"}, "ghcr.io/ovnk/ovnk-agent:v0.0.0-20260101000000-abcdef012345_dirty", corev1.PullIfNotPresent, "v0.0.0-20260101000000-abcdef012345_dirty"},
		{manifests.AgentOptions{Version: "v1", Image: "registry.local:5000/agent"}, "registry.local:5000/agent", corev1.PullAlways, "v1"},
		{manifests.AgentOptions{Version: "v1", Image: "registry.local:5000/agent:dev"}, "registry.local:5000/agent:dev", corev1.PullIfNotPresent, "v1"},
		{manifests.AgentOptions{Version: "v1", Image: "agent@sha256:0123"}, "agent@sha256:0123", corev1.PullIfNotPresent, "v1"},
		{manifests.AgentOptions{Version: "v1", ImagePullPolicy: corev1.PullNever}, "ghcr.io/ovnk/ovnk-agent:v1", corev1.PullNever, "v1"},
	} {
		objs := agentObjects(t, tc.opts)
		c := find[*appsv1.DaemonSet](t, objs).Spec.Template.Spec.Containers[0]
		if c.Image != tc.image || c.ImagePullPolicy != tc.pullPolicy || objs[0].GetLabels()["app.kubernetes.io/version"] != tc.versionLabel {
			t.Errorf("%+v: image %s, pull policy %s, version label %q; want %s, %s, %q",
				tc.opts, c.Image, c.ImagePullPolicy, objs[0].GetLabels()["app.kubernetes.io/version"], tc.image, tc.pullPolicy, tc.versionLabel)
		}
	}
}

func TestAgentOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts manifests.AgentOptions
		want string
	}{
		{manifests.AgentOptions{Version: "v1", Namespace: "Ovnk_System"}, `namespace "Ovnk_System" is not a valid namespace name`},
		{manifests.AgentOptions{Version: "v1/2"}, `version "v1/2" is not a valid image tag: set the image explicitly`},
		{manifests.AgentOptions{Version: "v1/2", Image: "x:y"}, `version "v1/2" cannot be the value of label app.kubernetes.io/version`},
		{manifests.AgentOptions{Version: "v1", Image: "x y"}, `image "x y" contains white space`},
		{manifests.AgentOptions{Version: "v1", ImagePullPolicy: "Sometimes"}, `image pull policy "Sometimes" is not one of Always, IfNotPresent, Never`},
		{manifests.AgentOptions{Version: "v1", HTTPPort: 70000}, "HTTP port 70000 is outside 1-65535"},
		{manifests.AgentOptions{Version: "v1", UpdateStrategy: "Recreate"}, `update strategy "Recreate" is not one of RollingUpdate, OnDelete`},
		{manifests.AgentOptions{Version: "v1", NBSocketDir: "var/run/ovn"}, `NB socket directory "var/run/ovn" is not a clean absolute path`},
		{manifests.AgentOptions{Version: "v1", NBSocketDir: "/var/run/ovn/"}, `NB socket directory "/var/run/ovn/" is not a clean absolute path`},
		{manifests.AgentOptions{Version: "v1", ConfigMapName: "Agent.Config"}, `ConfigMap name "Agent.Config" is not valid`},
	} {
		_, err := manifests.Agent(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Agent(%+v) = %v, want an error containing %q", tc.opts, err, tc.want)
		}
		if _, yerr := manifests.AgentYAML(tc.opts); yerr == nil || yerr.Error() != err.Error() {
			t.Errorf("AgentYAML(%+v) = %v, want the error of Agent: %v", tc.opts, yerr, err)
		}
	}
}

// TestAgentYAML compares the rendering of the defaults with testdata/agent.yaml, which is
// reviewed by hand, and checks that it decodes back into the same objects.
func TestAgentYAML(t *testing.T) {
	got, err := manifests.AgentYAML(goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	again, err := manifests.AgentYAML(goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Errorf("two renderings of the same options differ")
	}
	golden.File(t, filepath.Join("testdata", "agent.yaml"), string(got))

	docs := strings.Split(string(got), "\n---\n")[1:] // the header comes first
	objs := agentObjects(t, goldenOptions)
	if len(docs) != len(objs) {
		t.Fatalf("%d YAML documents, want %d", len(docs), len(objs))
	}
	for i, doc := range docs {
		decoded := objs[i].DeepCopyObject().(client.Object)
		reflect.ValueOf(decoded).Elem().SetZero()
		if err := yaml.UnmarshalStrict([]byte(doc), decoded); err != nil {
			t.Errorf("document %d does not decode into a %T: %v", i, decoded, err)
			continue
		}
		if !reflect.DeepEqual(decoded, objs[i]) {
			t.Errorf("document %d decodes into %+v, want %+v", i, decoded, objs[i])
		}
	}
}
