package versioncmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/version"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestGolden pins `version` piped and on an 80-column terminal, which print the same
// (version neither colours nor fits anything), with testdata/version-*.golden: the
// plugin's version as the build sets it, the API server's, and the k8s.ovn.org
// resources it serves. The server's version is the test server's, asked of it, and
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
	if outputs[clitest.Piped80.Term] != outputs[clitest.NoColour80.Term] {
		t.Errorf("version prints differently on a terminal:\n%s\npiped:\n%s", outputs[clitest.NoColour80.Term], outputs[clitest.Piped80.Term])
	}
}
