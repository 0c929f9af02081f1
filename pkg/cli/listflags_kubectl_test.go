package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/test/testenv"
)

// layer2 is a Secondary Layer2 UserDefinedNetwork without IPAM, of ns, with labels.
func layer2(ns, name string, labels map[string]string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRoleSecondary, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled},
		}},
	}
}

// TestListFlagsThroughKubectl types kubectl get's flags to `kubectl ovnk network
// list` through the real kubectl, against the real API server: -l, --sort-by,
// -o custom-columns, `network get NAME` (and kubectl's exit status when it names
// nothing), and -w printing a network created while it watches, until Ctrl-C.
func TestListFlagsThroughKubectl(t *testing.T) {
	k := testenv.SharedKube(t)
	env := pluginEnv(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := k.Namespace(t)
	c := clitest.NewClient(t, k)
	clitest.CreateObjects(ctx, t, c,
		layer2(ns, "alpha", map[string]string{"tier": "web", "order": "b"}),
		layer2(ns, "beta", map[string]string{"tier": "db", "order": "a"}))
	kubectl := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, k.KubectlPath, append([]string{"ovnk"}, args...)...)
		cmd.Env = env
		return cmd
	}
	run := func(args ...string) (stdout, stderr string, err error) {
		cmd := kubectl(args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"network", "list", "-n", ns, "-l", "tier=web", "-o", "name"},
			"userdefinednetwork.k8s.ovn.org/alpha\n"},
		{[]string{"network", "list", "-n", ns, "--sort-by", ".metadata.labels.order", "-o", "name"},
			"userdefinednetwork.k8s.ovn.org/beta\nuserdefinednetwork.k8s.ovn.org/alpha\n"},
		{[]string{"network", "list", "-n", ns, "--sort-by", ".metadata.name", "-o", "custom-columns=NAME:.metadata.name,TIER:.metadata.labels.tier,KIND:.kind"},
			"NAME    TIER   KIND\nalpha   web    UserDefinedNetwork\nbeta    db     UserDefinedNetwork\n"},
		{[]string{"network", "get", ns + "/beta", "-o", "name"},
			"userdefinednetwork.k8s.ovn.org/beta\n"},
		{[]string{"network", "get", "alpha", "-n", ns, "-o", "jsonpath={.kind}/{.metadata.name}"},
			"UserDefinedNetwork/alpha"},
	} {
		if out, stderr, err := run(tc.args...); err != nil || out != tc.want {
			t.Errorf("kubectl ovnk %s: %v\nstdout:\n%s\nstderr: %s\nwant:\n%s", strings.Join(tc.args, " "), err, out, stderr, tc.want)
		}
	}
	out, stderr, err := run("network", "get", ns+"/nope")
	var exit *exec.ExitError
	want := fmt.Sprintf("error: no UserDefinedNetwork \"nope\" in namespace %s: `kubectl ovnk network list -n %s` shows its networks\n", ns, ns)
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || out != "" || stderr != want {
		t.Errorf("kubectl ovnk network get %s/nope: %v\nstdout: %q\nstderr: %q\nwant on stderr: %q", ns, err, out, stderr, want)
	}

	// -w: the list, then the network created while it watches; Ctrl-C ends it
	// cleanly. kubectl runs the plugin in its own process, which the signal reaches.
	watch := kubectl("network", "list", "-n", ns, "-w")
	var wout, werr clitest.LockedBuffer
	watch.Stdout, watch.Stderr = &wout, &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	await := func(what string) {
		t.Helper()
		err := testenv.Eventually(ctx, 30*time.Second, what+" in the output of kubectl ovnk network list -w", func(context.Context) error {
			if !strings.Contains(wout.String(), what) {
				return fmt.Errorf("stdout so far %q, stderr %q", wout.String(), werr.String())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	await(ns + "/beta ")
	clitest.CreateObjects(ctx, t, c, layer2(ns, "gamma", nil))
	await(ns + "/gamma ")
	if err := watch.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("kubectl ovnk network list -w after Ctrl-C: %v, want exit status 0; stderr %q", err, werr.String())
	}
	lines := clitest.Lines(wout.String())
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME ") || !strings.HasPrefix(lines[3], ns+"/gamma ") {
		t.Errorf("kubectl ovnk network list -w printed, want the header, alpha, beta and gamma:\n%s", wout.String())
	}
}
