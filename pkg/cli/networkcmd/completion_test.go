package networkcmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	ns := h.namespace("", nil)
	h.cudnLater("comp-cluster")
	h.mustRun("create", "comp-cluster", "--cluster", "--namespaces", ns, "--subnet", "10.1.0.0/16", "--role", "secondary")
	h.mustRun("create", "comp-udn", "-n", ns, "--subnet", "10.2.0.0/16")

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", "comp"}, []string{"comp-cluster"}},
		{[]string{"delete", ""}, []string{"comp-cluster", ns + "/comp-udn"}},
		{[]string{"describe", "-n", ns, ""}, []string{"comp-cluster", "comp-udn"}},
		{[]string{"create", "x", "--topology", ""}, []string{"layer3", "layer2"}},
		{[]string{"create", "x", "--role", ""}, []string{"primary", "secondary"}},
		{[]string{"create", "x", "--transport", ""}, []string{"geneve", "no-overlay"}},
		{[]string{"create", "x", "--outbound-snat", ""}, []string{"enabled", "disabled"}},
		{[]string{"create", "x", "--routing", ""}, []string{"managed", "unmanaged"}},
		{[]string{"create", "x", "--ipam", ""}, []string{"enabled", "disabled", "persistent"}},
		{[]string{"create", "x", "--namespaces", "default," + ns[:8]}, []string{"default," + ns}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h.t = t
			got := completions(t, h, tc.args...)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %v lack %q", got, w)
				}
			}
		})
	}
}

// completions runs `__complete network args…` and returns the candidates, without
// cobra's trailing directive line.
func completions(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	out, _, err := h.runRoot(append([]string{cobra.ShellCompRequestCmd, "network"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, ":") {
			got = append(got, l)
		}
	}
	return got
}

// TestHelp checks that every command has examples and speaks of `kubectl ovnk`.
func TestHelp(t *testing.T) {
	f := &cmdutil.Factory{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "kubectl ovnk ") && !strings.HasPrefix(l, "--") {
				t.Errorf("%s: example line %q does not run kubectl ovnk", c.CommandPath(), l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(New(f))
}
