// Package images holds the recipes of the container images of the cluster that runs on
// this machine (the sandbox): the agent, the pods' pause process and the test pods'
// server. Each is built from binaries on disk into an OCI archive (pkg/ociarchive) that
// `ctr -n k8s.io images import` loads into a node's containerd, so no registry and no
// base image is involved, and an unchanged binary gives an unchanged image digest.
package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/pkg/ovnroot"
)

// The names of the images. The ovnk.local domain makes them fully qualified, so CRI
// looks them up as they are instead of on docker.io; "dev" says they are built here.
const (
	AgentImage   = "ovnk.local/ovnk-agent:dev"
	PauseImage   = "ovnk.local/pause:dev"
	TestAppImage = "ovnk.local/ovnk-testapp:dev"
)

// Paths inside the images.
const (
	// AgentPath is the agent's binary in the agent image; the DaemonSet runs
	// `ovnk-agent run …` (the image has no entrypoint).
	AgentPath = "/usr/bin/ovnk-agent"
	// CNIPath is the CNI plugin in the agent image, from where the agent copies it
	// onto its node.
	CNIPath = "/usr/libexec/ovnk/ovnk-cni"
	// PausePath is the pause image's one program and entrypoint.
	PausePath = "/pause"
	// TestAppPath is the test server in its image, and the image's entrypoint.
	TestAppPath = "/usr/bin/ovnk-testapp"
)

// BusyboxPath is where Debian's busybox-static puts its binary.
const BusyboxPath = "/bin/busybox"

// AgentTools are the OVS and OVN programs of the OVN root in the agent image, at
// /usr/bin/NAME: those the agent runs (ovs-ofctl) and those an operator reaches for in
// `kubectl exec`.
var AgentTools = []string{
	"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovsdb-client", "ovsdb-tool",
	"ovn-nbctl", "ovn-sbctl", "ovn-appctl", "ovn-trace",
}

// noLibc is why the pause and test app binaries must be static.
const noLibc = "its image has no C library"

// defaultPath is the PATH of the images with a shell.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Inputs are what the images are made of: binaries built by `make build` and found on
// this machine.
type Inputs struct {
	// Agent, CNI, Pause and TestApp are the paths of the built ovnk-agent, ovnk-cni,
	// ovnk-pause and ovnk-testapp. All but the agent must be static: the plugin runs
	// on the node, outside the image, and the other two images have no C library. A
	// dynamic agent gets the OVN root's (Debian trixie's glibc runs programs built
	// against older ones).
	Agent, CNI, Pause, TestApp string
	// Busybox is a static busybox (Debian's busybox-static); empty means BusyboxPath.
	Busybox string
	// OVNRoot is the root the agent image's OVS and OVN programs, their loader and
	// their libraries come from.
	OVNRoot ovnroot.Root
}

// Built is an image WriteAll wrote.
type Built struct {
	// Name is the image's name, such as AgentImage.
	Name string
	// Archive is the archive's path, for `ctr -n k8s.io images import`.
	Archive string
	// Written holds the image's digests.
	ociarchive.Written
}

// recipes are the images, each with its archive's file name.
var recipes = []struct {
	file  string
	image func(Inputs) (ociarchive.Image, error)
}{
	{"ovnk-agent.tar", Agent},
	{"pause.tar", Pause},
	{"ovnk-testapp.tar", TestApp},
}

// WriteAll writes the three images as archives into dir (created if missing), in the
// order agent, pause, test app, and returns them in that order. Each archive replaces
// an earlier one whole; unchanged inputs give byte-identical archives.
func WriteAll(dir string, in Inputs) ([]Built, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("images directory: %w", err)
	}
	built := make([]Built, 0, len(recipes))
	for _, r := range recipes {
		img, err := r.image(in)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, r.file)
		w, err := ociarchive.WriteFile(context.Background(), p, img) // local files only
		if err != nil {
			return nil, err
		}
		built = append(built, Built{Name: img.Name, Archive: p, Written: w})
	}
	return built, nil
}

// Pause is the image of the pods' sandbox containers (containerd's sandbox_image):
// ovnk-pause alone, as its entrypoint.
func Pause(in Inputs) (ociarchive.Image, error) {
	if err := checkStatic("pause binary", in.Pause, noLibc); err != nil {
		return ociarchive.Image{}, fmt.Errorf("image %s: %w", PauseImage, err)
	}
	return ociarchive.Image{
		Name:   PauseImage,
		Files:  []ociarchive.File{ociarchive.FromDisk(PausePath, in.Pause, 0o755)},
		Config: ociarchive.Config{Entrypoint: []string{PausePath}},
	}, nil
}

// TestApp is the image of the test pods: ovnk-testapp as the entrypoint (a pod's args
// go to it: ["--port", "9000"]), and busybox for the tester's shell and tools (sh,
// ping, ip, nc, wget, …) for `kubectl exec`.
func TestApp(in Inputs) (ociarchive.Image, error) {
	if err := checkStatic("test app binary", in.TestApp, noLibc); err != nil {
		return ociarchive.Image{}, fmt.Errorf("image %s: %w", TestAppImage, err)
	}
	shell, err := busyboxFiles(in.Busybox)
	if err != nil {
		return ociarchive.Image{}, fmt.Errorf("image %s: %w", TestAppImage, err)
	}
	files := append(baseFiles(), shell...)
	files = append(files, ociarchive.FromDisk(TestAppPath, in.TestApp, 0o755))
	return ociarchive.Image{
		Name:   TestAppImage,
		Files:  files,
		Config: ociarchive.Config{Entrypoint: []string{TestAppPath}, Env: []string{defaultPath}},
	}, nil
}

// Agent is the image of the agent's DaemonSet: ovnk-agent, the CNI plugin it installs
// on its node, the OVS and OVN tools of the OVN root (AgentTools) runnable as plain
// /usr/bin/NAME with the root's loader and libraries, and busybox for a shell. It has
// no entrypoint: the DaemonSet names the command.
func Agent(in Inputs) (ociarchive.Image, error) {
	img, err := agent(in)
	if err != nil {
		return ociarchive.Image{}, fmt.Errorf("image %s: %w", AgentImage, err)
	}
	return img, nil
}

func agent(in Inputs) (ociarchive.Image, error) {
	c, err := openOVNRoot(in.OVNRoot, "the OVS and OVN tools")
	if err != nil {
		return ociarchive.Image{}, err
	}
	if in.Agent == "" {
		return ociarchive.Image{}, fmt.Errorf("no agent binary given")
	}
	if err := c.addProgram(AgentPath, in.Agent); err != nil {
		return ociarchive.Image{}, fmt.Errorf("agent binary: %w", err)
	}
	if in.CNI == "" {
		return ociarchive.Image{}, fmt.Errorf("no CNI plugin binary given")
	}
	if err := checkStatic("CNI plugin binary", in.CNI, "it runs on the node, outside the image and its libraries"); err != nil {
		return ociarchive.Image{}, err
	}
	c.add(ociarchive.FromDisk(CNIPath, in.CNI, 0o755))
	for _, tool := range AgentTools {
		if err := c.addTreeProgram("/usr/bin/" + tool); err != nil {
			return ociarchive.Image{}, err
		}
	}
	// The tools' default places for their sockets (OVS_RUNDIR, OVN_RUNDIR), where the
	// DaemonSet mounts the node's; /var/run is /run, as on the node.
	return c.shellImage(AgentImage, in.Busybox,
		ociarchive.Dir("/run/openvswitch", 0),
		ociarchive.Dir("/run/ovn", 0),
		ociarchive.Link("/var/run", "../run"),
	)
}

// openOVNRoot starts an image of programs from root, the OVN root, which must be given:
// uses says what of the image comes from it.
func openOVNRoot(root ovnroot.Root, uses string) (*closure, error) {
	if root.Dir == "" {
		return nil, fmt.Errorf("no OVN root given: %s come from it (pkg/ovnroot.Find)", uses)
	}
	return newClosure(root.Dir)
}

// shellImage is the image named name of c's programs, with their loader and libraries,
// extra files, the base files and busybox (bin) for a shell, with PATH set. It has no
// entrypoint: the images of OVN root programs are run by DaemonSets naming the command.
func (c *closure) shellImage(name, bin string, extra ...ociarchive.File) (ociarchive.Image, error) {
	shell, err := busyboxFiles(bin)
	if err != nil {
		return ociarchive.Image{}, err
	}
	files := append(baseFiles(), shell...)
	files = append(files, extra...)
	for _, f := range c.files {
		files = append(files, f)
	}
	return ociarchive.Image{
		Name:   name,
		Files:  files,
		Config: ociarchive.Config{Env: []string{defaultPath}},
	}, nil
}

// baseFiles are what a shell user expects of a Linux root: users for ps and id, a
// world-writable /tmp, root's home.
func baseFiles() []ociarchive.File {
	return []ociarchive.File{
		ociarchive.FromBytes("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"), 0o644),
		ociarchive.FromBytes("/etc/group", []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644),
		ociarchive.Dir("/tmp", 0o1777),
		ociarchive.Dir("/root", 0o700),
	}
}
