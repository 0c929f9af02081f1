package versioncmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestVersionLeavesDeletedCRDsOut runs `version` as kubectl ovnk runs it, with kubectl's
// discovery cache, while a k8s.ovn.org CRD of the test's own is created, deleted (held
// terminating by an object with a finalizer) and then gone. Served, it is listed; being
// deleted, or gone, it is not. Each run finds the cache written by the one before: a
// version that read it would never see the CRD come, nor go.
func TestVersionLeavesDeletedCRDsOut(t *testing.T) {
	t.Setenv("KUBECACHEDIR", t.TempDir()) // the cache the commands share, and only theirs
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, _ func() time.Time) []*cobra.Command {
		return []*cobra.Command{New(f)}
	})
	crd := h.Kube.CreateThrowawayCRD(t, ovnGroup, "versiontests", "VersionTest")

	resources := func() []string {
		out := h.MustRun("version", "-o", "yaml")
		var info Info
		if err := yaml.UnmarshalStrict([]byte(out), &info); err != nil {
			t.Fatalf("version -o yaml: %v\n%s", err, out)
		}
		return info.Resources
	}
	await := func(what string, want bool) {
		t.Helper()
		err := testenv.Eventually(h.Ctx(), 20*time.Second, what, func(context.Context) error {
			if got := resources(); slices.Contains(got, "versiontests.v1") != want {
				return fmt.Errorf("version lists %s", strings.Join(got, ", "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	await("version to list the served CRD", true)

	// An object with a finalizer keeps the CRD terminating after its deletion.
	if err := crd.HoldTerminating(h.Ctx()); err != nil {
		t.Fatal(err)
	}
	await("version to leave out the CRD being deleted", false)
	if err := crd.Terminating(h.Ctx()); err != nil {
		t.Fatalf("%v: the step above tested nothing", err)
	}

	// Released, the CRD goes.
	if err := crd.Release(h.Ctx()); err != nil {
		t.Fatal(err)
	}
	await("version to leave out the deleted CRD", false)
}
