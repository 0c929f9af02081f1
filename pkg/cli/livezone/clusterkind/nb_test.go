package clusterkind_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
)

func TestNBContainerAndSocket(t *testing.T) {
	run := func(dir string) []corev1.VolumeMount { return []corev1.VolumeMount{{Name: "run", MountPath: dir}} }
	for _, tc := range []struct {
		name       string
		spec       corev1.PodSpec
		container  string // "" for none
		wantSocket string
	}{
		{"upstream interconnect", clusterkindtest.Upstream("ovn-kubernetes", "").Spec.Template.Spec, "nb-ovsdb", "/var/run/ovn/ovnnb_db.sock"},
		{"upstream under a root", clusterkindtest.Upstream("ovn-kubernetes", "/srv/node1").Spec.Template.Spec, "nb-ovsdb", "/srv/node1/var/run/ovn/ovnnb_db.sock"},
		{"OpenShift", clusterkindtest.OpenShift("openshift-ovn-kubernetes", "").Spec.Template.Spec, "nbdb", "/run/ovn/ovnnb_db.sock"},
		{"upstream central NB", clusterkindtest.Centralized("ovn-kubernetes").Spec.Template.Spec, "", ""},
		{"upstream's ovnkube-db", clusterkindtest.CentralDB("ovn-kubernetes", "").Spec.Template.Spec, "nb-ovsdb", "/var/run/ovn/ovnnb_db.sock"},
		{"upstream's raft ovnkube-db", clusterkindtest.CentralDBRaft("ovn-kubernetes", "", 3).Spec.Template.Spec, "nb-ovsdb", "/var/run/ovn/ovnnb_db.sock"},
		{"renamed, started by the entry script, older run directory", corev1.PodSpec{Containers: []corev1.Container{
			{Name: "controller", Command: []string{"/root/ovnkube.sh", "ovnkube-controller-with-node"}},
			{Name: "northbound", Command: []string{"/root/ovnkube.sh", "local-nb-ovsdb"}, VolumeMounts: run("/var/run/openvswitch")},
		}}, "northbound", "/var/run/openvswitch/ovnnb_db.sock"},
		{"an ovsdb-server naming its socket", corev1.PodSpec{Containers: []corev1.Container{
			{Name: "db", Command: []string{"ovsdb-server"}, Args: []string{"--remote=punix:/run/custom/ovnnb_db.sock", "/etc/ovn/ovnnb_db.db"}, VolumeMounts: run("/run/ovn")},
		}}, "db", "/run/custom/ovnnb_db.sock"},
		{"the socket in the environment", corev1.PodSpec{Containers: []corev1.Container{
			{Name: "nb-ovsdb", Env: []corev1.EnvVar{{Name: "OVN_NB_DB", Value: "unix:/var/lib/ovn/ovnnb_db.sock"}}},
		}}, "nb-ovsdb", "/var/lib/ovn/ovnnb_db.sock"},
		{"a client of the NB is not its server", corev1.PodSpec{Containers: []corev1.Container{
			{Name: "ovnkube-controller", Args: []string{"--nb-address=unix:/var/run/ovn/ovnnb_db.sock"}},
			{Name: "nbdb", VolumeMounts: run("/run/ovn-ic/")},
		}}, "nbdb", "/run/ovn-ic/ovnnb_db.sock"},
		{"nothing says where", corev1.PodSpec{Containers: []corev1.Container{{Name: "nb-ovsdb", VolumeMounts: run("/etc/ovn")}}}, "nb-ovsdb", clusterkind.DefaultNBSocket},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clusterkind.NBContainer(&tc.spec)
			switch {
			case c == nil && tc.container == "":
				return
			case c == nil:
				t.Fatalf("no NB container; want %s", tc.container)
			case c.Name != tc.container:
				t.Fatalf("NB container %q; want %q", c.Name, tc.container)
			}
			if got := clusterkind.NBSocket(c); got != tc.wantSocket {
				t.Errorf("NB socket %s; want %s", got, tc.wantSocket)
			}
		})
	}
}

func TestClusterSaysWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		c    clusterkind.Cluster
		want string
	}{
		{clusterkind.Cluster{Kind: clusterkind.OVNK, Namespace: "ovnk-system", DaemonSet: "ovnk-agent"}, "ovnk (agent DaemonSet ovnk-system/ovnk-agent)"},
		{clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: "ovn-kubernetes", DaemonSet: "ovnkube-node", Interconnect: true},
			"OVN-Kubernetes, interconnect, a zone per node (DaemonSet ovn-kubernetes/ovnkube-node)"},
		{clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: "ovn-kubernetes", DaemonSet: "ovnkube-node"},
			"OVN-Kubernetes, one central NB (DaemonSet ovn-kubernetes/ovnkube-node)"},
		{clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: "ovn-kubernetes", DaemonSet: "ovnkube-node",
			CentralNB: &clusterkind.Workload{Kind: "Deployment", Namespace: "ovn-kubernetes", Name: "ovnkube-db"}},
			"OVN-Kubernetes, one central NB served by Deployment ovn-kubernetes/ovnkube-db (DaemonSet ovn-kubernetes/ovnkube-node)"},
		{clusterkind.Cluster{Kind: clusterkind.None}, "no OVN-Kubernetes found: neither ovnk's agent nor an ovnkube-node DaemonSet"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
