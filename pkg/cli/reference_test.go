package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli"
	"github.com/ovnk/ovnk/pkg/cli/docgen"
	"github.com/ovnk/ovnk/test/golden"
)

const referenceDir = "../../docs/reference"

// TestReferenceIsCurrent regenerates the command reference and fails when it differs
// from docs/reference: the reference must say what --help says. `make docs` rewrites it.
func TestReferenceIsCurrent(t *testing.T) {
	// kubectl's --cache-dir default comes from KUBECACHEDIR, else the home directory
	// (which the reference writes as ~): neither may leak in from whoever runs this.
	t.Setenv("KUBECACHEDIR", "")
	t.Setenv("HOME", "/home/reference")
	root := cli.NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	if golden.Updating() {
		if err := docgen.Write(root, referenceDir); err != nil {
			t.Fatal(err)
		}
		return
	}
	fresh := t.TempDir()
	if err := docgen.Write(root, fresh); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Glob(filepath.Join(fresh, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := filepath.Glob(filepath.Join(referenceDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(have) != len(want) {
		t.Errorf("docs/reference has %d pages, the command tree %d: run make docs", len(have), len(want))
	}
	for _, p := range want {
		got, _ := os.ReadFile(filepath.Join(referenceDir, filepath.Base(p)))
		exp, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(exp) {
			t.Errorf("docs/reference/%s is stale: run make docs", filepath.Base(p))
		}
	}
}

// TestEveryCommandHasExamples holds the promise that every command's --help shows how
// to use it.
func TestEveryCommandHasExamples(t *testing.T) {
	root := cli.NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	stack := root.Commands()
	for len(stack) > 0 {
		c := stack[0]
		stack = append(stack[1:], c.Commands()...)
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if c.Runnable() && c.Example == "" {
			t.Errorf("%s has no examples in its help", c.CommandPath())
		}
	}
}
