package clusterkind

import (
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// nbContainerNames are the names upstream's deployments give the container serving a
// zone's NB: its own manifests and Helm chart, then OpenShift's.
var nbContainerNames = []string{"nb-ovsdb", "nbdb"}

// nbServerWords are what the command of a container serving the NB says, whatever its
// name: upstream's entry script's commands (nb-ovsdb, local-nb-ovsdb) and ovn-ctl's.
var nbServerWords = []string{"nb-ovsdb", "run_nb_ovsdb"}

// NBContainer returns the container of an ovnkube-node (or ovnkube-db) pod spec that
// serves the NB: the one named as upstream names it, else one whose command says it
// starts the NB server, else one whose command or arguments name the NB's socket or
// database file (ovnnb_db), else nil — a pod of a deployment whose NB is elsewhere.
func NBContainer(spec *corev1.PodSpec) *corev1.Container {
	for _, match := range []func(*corev1.Container) bool{
		func(c *corev1.Container) bool { return slices.Contains(nbContainerNames, c.Name) },
		func(c *corev1.Container) bool { return saysAny(c, nbServerWords...) },
		func(c *corev1.Container) bool { return saysAny(c, "ovnnb_db") },
	} {
		for i := range spec.Containers {
			if match(&spec.Containers[i]) {
				return &spec.Containers[i]
			}
		}
	}
	return nil
}

// saysAny reports whether the container's command or arguments hold any of words.
func saysAny(c *corev1.Container, words ...string) bool {
	for _, s := range slices.Concat(c.Command, c.Args) {
		for _, w := range words {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	return false
}

// nbSocketPath finds an absolute path of the NB's socket in a command line, a script or
// an environment value: "--remote=punix:/var/run/ovn/ovnnb_db.sock", "unix:/run/ovn/…".
var nbSocketPath = regexp.MustCompile(`/[^\s"'=:,;]*/` + regexp.QuoteMeta(manifests.NBSocketName))

// nbRunDirs are the directories OVN's images keep the NB socket in, as the end of a
// volume's mount path, best first: OVN's run directory (/var/run/ovn or /run/ovn),
// OpenShift's host directory for it, and Open vSwitch's, where older releases put it.
var nbRunDirs = []string{"/run/ovn", "/run/ovn-ic", "/run/openvswitch"}

// DefaultNBSocket is where OVN's images serve the NB when the container says nothing
// that places it elsewhere.
const DefaultNBSocket = "/var/run/ovn/" + manifests.NBSocketName

// NBSocket returns the path, inside the container, of the unix socket its NB listens
// on: one its command, arguments or environment name; else the socket in a mounted run
// directory of OVN's (a mount path ending in /run/ovn, /run/ovn-ic or /run/openvswitch,
// in that order); else DefaultNBSocket.
func NBSocket(c *corev1.Container) string {
	texts := slices.Concat(c.Command, c.Args)
	for _, e := range c.Env {
		texts = append(texts, e.Value)
	}
	for _, s := range texts {
		if p := nbSocketPath.FindString(s); p != "" {
			return p
		}
	}
	for _, dir := range nbRunDirs {
		for _, m := range c.VolumeMounts {
			if mount := path.Clean(m.MountPath); strings.HasSuffix(mount, dir) {
				return path.Join(mount, manifests.NBSocketName)
			}
		}
	}
	return DefaultNBSocket
}
