package versioncmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/version"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestGolden pins `version` piped and on an 80-column terminal, which print the same
// but for the terminal's folding a line too long for it (version does not colour),
// with testdata/version-*.golden: the plugin's version as the build sets it, the API
// server's, the cluster's kind (none here), and the k8s.ovn.org resources it serves. The server's version is the test server's, asked of it, and
// stands as <server> in the golden, which then holds whatever server the tests run.
func TestGolden(t *testing.T) {
	k := testenv.SharedKube(t)
	t.Setenv("KUBECACHEDIR", t.TempDir()) // kubectl's discovery cache: the test's own
	built := version.Version
	version.Version = "v0.9.0-golden"
	t.Cleanup(func() { version.Version = built })
	server, err := k.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outputs := map[clitest.Terminal]string{}
	clitest.Goldens(t, "version", []clitest.GoldenTerminal{clitest.Piped80, clitest.NoColour80}, func(t *testing.T, term clitest.Terminal) string {
		var out, errOut bytes.Buffer
		f := clitest.NewFactory(k.Kubeconfig, term, nil, &out, &errOut)
		f.Settings = &cmdutil.Settings{AgentNamespace: manifests.DefaultNamespace}
		if err := clitest.Execute(ctx, New(f), &out, &errOut); err != nil {
			t.Fatalf("version: %v\n%s", err, errOut.String())
		}
		line := "Server Version: " + server.GitVersion + "\n"
		if !strings.Contains(out.String(), line) {
			t.Fatalf("version does not print %q:\n%s", line, out.String())
		}
		outputs[term] = strings.Replace(out.String(), line, "Server Version: <server>\n", 1)
		return outputs[term]
	})
	// The terminal folds the cluster's line, and changes nothing else.
	folded := strings.Replace(outputs[clitest.NoColour80.Term], "\n  DaemonSet\n", " DaemonSet\n", 1)
	if outputs[clitest.Piped80.Term] != folded {
		t.Errorf("version prints differently on a terminal than folding its long line:\n%s\npiped:\n%s", outputs[clitest.NoColour80.Term], outputs[clitest.Piped80.Term])
	}
}
