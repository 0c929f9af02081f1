package networkcmd

import (
	"testing"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	h.cudnLater("comp-cluster")
	h.MustRun("create", "comp-cluster", "--cluster", "--namespaces", ns, "--subnet", "10.1.0.0/16", "--role", "secondary")
	h.MustRun("create", "comp-udn", "-n", ns, "--subnet", "10.2.0.0/16")

	h.CheckCompletions(t, []clitest.Completion{
		{Args: []string{"describe", "comp"}, Want: []string{"comp-cluster"}},
		{Args: []string{"delete", ""}, Want: []string{"comp-cluster", ns + "/comp-udn"}},
		{Args: []string{"describe", "-n", ns, ""}, Want: []string{"comp-cluster", "comp-udn"}},
		{Args: []string{"get", ""}, Want: []string{"comp-cluster", ns + "/comp-udn"}},
		{Args: []string{"list", "-o", "custom"}, Want: []string{"custom-columns", "custom-columns-file"}},
		{Args: []string{"create", "x", "--topology", ""}, Want: []string{"layer3", "layer2"}},
		{Args: []string{"create", "x", "--role", ""}, Want: []string{"primary", "secondary"}},
		{Args: []string{"create", "x", "--transport", ""}, Want: []string{"geneve", "no-overlay"}},
		{Args: []string{"create", "x", "--outbound-snat", ""}, Want: []string{"enabled", "disabled"}},
		{Args: []string{"create", "x", "--routing", ""}, Want: []string{"managed", "unmanaged"}},
		{Args: []string{"create", "x", "--ipam", ""}, Want: []string{"enabled", "disabled", "persistent"}},
		{Args: []string{"create", "x", "--namespaces", "default," + ns[:8]}, Want: []string{"default," + ns}},
	})
}

// TestHelp checks that every command has examples and speaks of `kubectl ovnk`.
func TestHelp(t *testing.T) {
	clitest.CheckHelp(t, New(&cmdutil.Factory{}))
}
