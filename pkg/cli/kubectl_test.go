package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/connectcmd"
	"github.com/ovnk/ovnk/pkg/cli/versioncmd"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// The tests of this file are issue #19's items that need no agent, typed as an
// operator types them: the real kubectl finds kubectl-ovnk on PATH and runs it against
// the package's API server. test/e2e/operator_items_test.go has the items that need
// agents and zones.

// kubectlRun is one run of the real kubectl: what it printed and its exit status.
type kubectlRun struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r kubectlRun) String() string {
	return fmt.Sprintf("kubectl %s: exit status %d\nstdout:\n%sstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// kubectl runs the real kubectl against the package's API server with env, which puts
// the plugin on PATH (pluginEnv).
type kubectl struct {
	t   *testing.T
	k   *testenv.Kube
	env []string
}

// newKubectl builds the plugin (once per test binary) and starts the API server if
// they are not yet, before any run's timeout starts.
func newKubectl(t *testing.T) *kubectl {
	k := testenv.SharedKube(t)
	return &kubectl{t: t, k: k, env: pluginEnv(t, k)}
}

// run runs kubectl with args, stdin as its standard input.
func (kc *kubectl) run(stdin string, args ...string) kubectlRun {
	kc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kc.k.KubectlPath, args...)
	cmd.Env = kc.env
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := kubectlRun{args: args, stdout: o.String(), stderr: e.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		kc.t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// ovnk runs `kubectl ovnk args…`.
func (kc *kubectl) ovnk(args ...string) kubectlRun {
	kc.t.Helper()
	return kc.run("", append([]string{"ovnk"}, args...)...)
}

// mustOvnk runs `kubectl ovnk args…` and fails the test unless it exits 0.
func (kc *kubectl) mustOvnk(args ...string) kubectlRun {
	kc.t.Helper()
	r := kc.ovnk(args...)
	if r.code != 0 {
		kc.t.Fatalf("%s", r)
	}
	return r
}

// requireRefused requires r to have exited 1 printing nothing on standard output and
// one line of error on standard error, as kubectl prints a plugin's: "error: ", then
// the value, then each of want.
func requireRefused(t *testing.T, r kubectlRun, value string, want ...string) {
	t.Helper()
	if r.code != 1 || r.stdout != "" {
		t.Errorf("want exit status 1 and nothing on stdout; %s", r)
	}
	msg, ok := strings.CutSuffix(r.stderr, "\n")
	if !ok || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "error: "+value+": ") {
		t.Errorf("stderr %q: want one line beginning %q", r.stderr, "error: "+value+": ")
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("stderr %q lacks %q", r.stderr, w)
		}
	}
}

// networkNames lists every network of the cluster, as KIND NAMESPACE/NAME.
func networkNames(t *testing.T, c client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var udns ovnkv1.UserDefinedNetworkList
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := c.List(ctx, &udns); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &cudns); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range udns.Items {
		out = append(out, "UserDefinedNetwork "+n.Namespace+"/"+n.Name)
	}
	for _, n := range cudns.Items {
		out = append(out, "ClusterUserDefinedNetwork "+n.Name)
	}
	slices.Sort(out)
	return out
}

// newObjects is a Harness used only to create the objects a test reads and remove
// them when it ends; the commands run through kubectl.
func newObjects(t *testing.T) *clitest.Harness {
	return clitest.NewHarness(t, nil)
}

// TestCreateRefusesThroughKubectl is issue #19's item 3: `network create` refuses every
// subnet the leader would refuse, before anything is sent. Each refusal exits 1 with
// one line naming the value, why, and the fix, and creates nothing. The cluster's
// ranges are those of an agent installed with install's default configuration (an
// IPv4 cluster, cluster subnet 10.244.0.0/16, the default service, join, transit and
// masquerade subnets).
func TestCreateRefusesThroughKubectl(t *testing.T) {
	kc := newKubectl(t)
	h := newObjects(t)
	agent := h.AgentConfig(manifests.DefaultAgentConfig)
	ns := h.Namespace("", map[string]string{cluster.LabelPrimaryUDN: ""})
	before := networkNames(t, h.C)
	otherRange := "choose another --subnet"
	for _, tc := range []struct {
		name  string
		flags []string
		// value begins the message; why and fix follow it.
		value, why, fix string
	}{
		{"the join subnet", []string{"--subnet", "100.65.0.0/20"},
			"--subnet 100.65.0.0/20", "overlaps the network's join subnet 100.65.0.0/16", "choose another --subnet, or a --join-subnet outside it"},
		{"the transit subnet", []string{"--topology", "layer2", "--subnet", "100.88.0.0/20"},
			"--subnet 100.88.0.0/20", "overlaps transit subnet 100.88.0.0/16, one of the cluster's own ranges", otherRange},
		{"the masquerade subnet", []string{"--subnet", "169.254.0.0/20"},
			"--subnet 169.254.0.0/20", "overlaps masquerade subnet 169.254.0.0/17, one of the cluster's own ranges", otherRange},
		{"the service subnet", []string{"--subnet", "10.96.0.0/20"},
			"--subnet 10.96.0.0/20", "overlaps service subnet 10.96.0.0/16, one of the cluster's own ranges", otherRange},
		{"the default network's cluster subnet", []string{"--subnet", "10.244.0.0/20"},
			"--subnet 10.244.0.0/20", `overlaps cluster subnet 10.244.0.0/16 of network "default", one of the cluster's own ranges`, otherRange},
		{"every address", []string{"--subnet", "0.0.0.0/0"},
			"--subnet 0.0.0.0/0", "is every IPv4 address", "choose a private range"},
		{"multicast", []string{"--subnet", "224.1.0.0/16"},
			"--subnet 224.1.0.0/16", "overlaps the multicast range 224.0.0.0/4, which pods cannot use", "choose a private range"},
		{"loopback", []string{"--topology", "layer2", "--subnet", "127.0.0.0/24"},
			"--subnet 127.0.0.0/24", "overlaps the loopback range 127.0.0.0/8, which pods cannot use", "choose a private range"},
		{"a Layer3 /31, too small for a node's /24", []string{"--subnet", "10.62.0.0/31"},
			"--subnet 10.62.0.0/31", "cannot hold a node's block of /24, nor any block with an address for pods", "use a larger --subnet, of at most /28"},
		{"a Layer2 /31, too small for pods", []string{"--topology", "layer2", "--subnet", "10.61.0.0/31"},
			"--subnet 10.61.0.0/31", "leaves no address for pods", "use a larger subnet: at most /29 for IPv4"},
		{"dual-stack on an IPv4 cluster", []string{"--topology", "layer2", "--subnet", "10.63.0.0/16", "--subnet", "fd00:63::/64"},
			"--subnet fd00:63::/64", "is IPv6, and the cluster is IPv4 only", "give only IPv4 subnets, or make the cluster dual-stack first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc.t = t
			r := kc.ovnk(append([]string{"network", "create", "refused", "-n", ns, "--agent-namespace", agent}, tc.flags...)...)
			requireRefused(t, r, tc.value, tc.why, tc.fix)
		})
	}
	kc.t = t
	if after := networkNames(t, h.C); !slices.Equal(after, before) {
		t.Errorf("refused creates changed the networks:\nbefore: %q\nafter:  %q", before, after)
	}
}

// TestCreateWarnsAndDryRunsThroughKubectl is issue #19's item 10 for network create: a
// primary network serving a namespace without the label
// k8s.ovn.org/primary-user-defined-network, or one of the cluster's own namespaces, is
// created with a warning on stderr; --dry-run=server prints kubectl's line, and the
// network itself only when -o asks. Nothing is created by a dry run.
func TestCreateWarnsAndDryRunsThroughKubectl(t *testing.T) {
	kc := newKubectl(t)
	h := newObjects(t)
	agent := h.AgentConfig(manifests.DefaultAgentConfig)
	labelled := h.Namespace("", map[string]string{cluster.LabelPrimaryUDN: ""})
	plain := h.Namespace("", nil)
	before := networkNames(t, h.C)
	const line = "userdefinednetwork.k8s.ovn.org/n1 created (server dry run)\n"
	for _, tc := range []struct {
		name    string
		args    []string
		stdout  string
		warning string // a part of one warning; "" for none
	}{
		{"a labelled namespace", []string{"n1", "-n", labelled}, line, ""},
		{"a namespace without the label", []string{"n1", "-n", plain}, line,
			"Warning: namespace " + plain + " lacks the label " + cluster.LabelPrimaryUDN + ": pods already running there keep the default network"},
		{"a secondary network needs no label", []string{"n1", "-n", plain, "--role", "secondary"}, line, ""},
		{"kube-system", []string{"n1", "-n", "kube-system"}, line,
			"Warning: namespace kube-system runs the cluster's own pods, and every pod created there from now on gets this network as its primary network"},
		{"a cluster network serving default", []string{"n1", "--cluster", "--namespaces", "default," + labelled}, "clusteruserdefinednetwork.k8s.ovn.org/n1 created (server dry run)\n",
			"Warning: namespace default runs the cluster's own pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc.t = t
			r := kc.mustOvnk(append([]string{"network", "create", "--agent-namespace", agent, "--subnet", "10.70.0.0/16", "--dry-run=server"}, tc.args...)...)
			if r.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tc.stdout)
			}
			switch {
			case tc.warning == "" && r.stderr != "":
				t.Errorf("stderr %q, want nothing", r.stderr)
			case tc.warning != "" && !strings.Contains(r.stderr, tc.warning):
				t.Errorf("stderr %q lacks %q", r.stderr, tc.warning)
			}
			for _, l := range clitest.Lines(r.stderr) {
				if !strings.HasPrefix(l, "Warning: ") {
					t.Errorf("stderr line %q is no warning", l)
				}
			}
		})
	}
	kc.t = t

	r := kc.mustOvnk("network", "create", "n1", "-n", labelled, "--agent-namespace", agent, "--subnet", "10.70.0.0/16", "--dry-run=server", "-o", "yaml")
	var udn ovnkv1.UserDefinedNetwork
	if err := yaml.UnmarshalStrict([]byte(r.stdout), &udn); err != nil || udn.Kind != "UserDefinedNetwork" || udn.Namespace != labelled || udn.Name != "n1" {
		t.Errorf("--dry-run=server -o yaml printed %s/%s of kind %q (%v), want UserDefinedNetwork %s/n1:\n%s", udn.Namespace, udn.Name, udn.Kind, err, labelled, r.stdout)
	}
	if after := networkNames(t, h.C); !slices.Equal(after, before) {
		t.Errorf("dry runs changed the networks:\nbefore: %q\nafter:  %q", before, after)
	}
}

// TestConnectDryRunAppliesThroughKubectl is issue #19's item 5, as the operator piped it:
// `kubectl ovnk connect A B --dry-run -o yaml | kubectl apply -f -` must leave the
// cluster as `kubectl ovnk connect A B` does, on a copy of the networks: the label the
// connect selects on each network, and the connect itself.
func TestConnectDryRunAppliesThroughKubectl(t *testing.T) {
	kc := newKubectl(t)
	h := newObjects(t)
	agent := h.AgentConfig(manifests.DefaultAgentConfig)
	// network creates the ClusterUserDefinedNetwork name, unlabelled, serving a namespace
	// of its own.
	network := func(name, cidr string) {
		ns := h.Namespace("", map[string]string{cluster.LabelPrimaryUDN: ""})
		h.Create(&ovnkv1.ClusterUserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
					Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr)}},
				}},
			},
		})
	}
	for _, set := range []string{"kt-apply", "kt-real"} {
		network(set+"-blue", "10.10.0.0/16")
		network(set+"-red", "10.40.0.0/16")
		h.DeleteLater(&ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: set}})
	}

	printed := kc.mustOvnk("connect", "kt-apply-blue", "kt-apply-red", "--name", "kt-apply", "--agent-namespace", agent, "--dry-run", "-o", "yaml").stdout
	applied := kc.run(printed, "apply", "-f", "-")
	want := "clusteruserdefinednetwork.k8s.ovn.org/kt-apply-blue configured\nclusteruserdefinednetwork.k8s.ovn.org/kt-apply-red configured\nclusternetworkconnect.k8s.ovn.org/kt-apply created\n"
	if applied.code != 0 || applied.stdout != want {
		t.Fatalf("the dry run piped into kubectl apply -f -: want stdout %q; %s\nthe dry run printed:\n%s", want, applied, printed)
	}
	kc.mustOvnk("connect", "kt-real-blue", "kt-real-red", "--name", "kt-real", "--agent-namespace", agent)

	// What each run left, read back with the names of the real run.
	rename := strings.NewReplacer("kt-apply", "kt-real")
	state := func(set string) string {
		t.Helper()
		var b strings.Builder
		for _, color := range []string{"blue", "red"} {
			var n ovnkv1.ClusterUserDefinedNetwork
			if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: set + "-" + color}, &n); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "network %s: %s=%q\n", n.Name, connectcmd.NetworkNameLabel, n.Labels[connectcmd.NetworkNameLabel])
		}
		var cnc ovnkv1.ClusterNetworkConnect
		if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: set}, &cnc); err != nil {
			t.Fatal(err)
		}
		spec, err := json.Marshal(cnc.Spec)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "connect %s: %s\n", cnc.Name, spec)
		return rename.Replace(b.String())
	}
	viaApply, viaConnect := state("kt-apply"), state("kt-real")
	if viaApply != viaConnect {
		t.Errorf("after kubectl apply of the dry run:\n%s\nafter connect:\n%s", viaApply, viaConnect)
	}
	// Equal would hold too if neither run had labelled the networks.
	if !strings.Contains(viaApply, "network kt-real-red: "+connectcmd.NetworkNameLabel+`="kt-real-red"`) {
		t.Errorf("kubectl apply of the dry run did not label the networks:\n%s", viaApply)
	}
}

// TestRootHelpThroughKubectl is issue #19's item 8 as kubectl shows it: `kubectl ovnk
// --help` lists exactly the commands the tree has, every `kubectl ovnk …` of its
// examples reaches a command, and it mentions no k8s.ovn.org kind that no command
// handles (it promised EgressIP commands). TestDocsNameOnlyCommandsThatExist holds
// README.md and the user guide to the same.
func TestRootHelpThroughKubectl(t *testing.T) {
	r := newKubectl(t).mustOvnk("--help")
	if r.stderr != "" {
		t.Errorf("kubectl ovnk --help printed on stderr %q", r.stderr)
	}
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	want := []string{"help"} // cobra's, which the tree gets when it runs
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			want = append(want, c.Name())
		}
	}
	var listed, examples []string
	section := ""
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
			section = line
		case section == "Available Commands:" && strings.TrimSpace(line) != "":
			listed = append(listed, strings.Fields(line)[0])
		case section == "Examples:":
			examples = append(examples, line)
		}
	}
	slices.Sort(want)
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Errorf("kubectl ovnk --help lists the commands %q; the tree has %q:\n%s", listed, want, r.stdout)
	}
	shown := commandsIn(strings.Join(examples, "\n"), true)
	if len(shown) < 3 {
		t.Errorf("kubectl ovnk --help's examples show %d commands: too few for this check to mean anything:\n%s", len(shown), r.stdout)
	}
	for _, words := range shown {
		if bad := undefinedCommand(root, words); bad != "" {
			t.Errorf("kubectl ovnk --help shows `kubectl ovnk %s`: %s", strings.Join(words, " "), bad)
		}
	}
	for _, kind := range unhandledKinds(t, root) {
		if strings.Contains(strings.ToLower(r.stdout), strings.ToLower(kind)) {
			t.Errorf("kubectl ovnk --help mentions %s, which no command handles yet", kind)
		}
	}
}

// TestVersionLeavesDeletedCRDsOutThroughKubectl is issue #19's item 10 for version: with
// kubectl's discovery cache filled by kubectl itself while a k8s.ovn.org CRD was served,
// `kubectl ovnk version` leaves the CRD out once it is being deleted (held by an object
// with a finalizer), and once it is gone.
func TestVersionLeavesDeletedCRDsOutThroughKubectl(t *testing.T) {
	kc := newKubectl(t)
	kc.env = append(kc.env, "KUBECACHEDIR="+t.TempDir())
	group := ovnkv1.SchemeGroupVersion.Group
	crd := kc.k.CreateThrowawayCRD(t, group, "kubectlitems", "KubectlItem")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	listed := func() bool {
		t.Helper()
		out := kc.mustOvnk("version", "-o", "yaml").stdout
		var info versioncmd.Info
		if err := yaml.UnmarshalStrict([]byte(out), &info); err != nil {
			t.Fatalf("version -o yaml: %v\n%s", err, out)
		}
		return slices.Contains(info.Resources, "kubectlitems.v1")
	}
	await := func(what string, want bool) {
		t.Helper()
		err := testenv.Eventually(ctx, 20*time.Second, what, func(context.Context) error {
			if listed() != want {
				return fmt.Errorf("version lists it: %t", !want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	await("version to list the served CRD", true)
	// kubectl's own discovery, which fills the cache a stale version would read.
	if r := kc.run("", "api-resources", "--api-group", group); r.code != 0 || !strings.Contains(r.stdout, "kubectlitems") {
		t.Fatalf("kubectl api-resources does not list kubectlitems: %s", r)
	}

	if err := crd.HoldTerminating(ctx); err != nil {
		t.Fatalf("%v: the next step would test nothing", err)
	}
	await("version to leave out the CRD being deleted", false)

	if err := crd.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if listed() {
		t.Errorf("version lists kubectlitems.v1, whose CRD is gone")
	}
}
