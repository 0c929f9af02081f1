// Package testenv starts real servers for tests: an OVN Northbound ovsdb-server,
// ovn-northd with a Southbound database and ovn-trace, an OVS userspace bridge,
// etcd with kube-apiserver, and network namespaces running FRR.
//
// The OVN and OVS programs and schemas are always those of the OVN 25.03 / OVS 3.5 root
// that scripts/ovn-root.sh provisions (pkg/ovnroot), never the host's.
//
// Every server runs in the test's temporary directory, listens only on unix sockets or
// loopback, and is stopped by t.Cleanup even when the test fails. A missing binary or
// missing root privileges skips the test with the reason, unless OVNK_REQUIRE_ALL=1 is
// set (as CI does): then the same condition fails the test, so nothing is skipped silently.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/poll"
)

// RequireAllEnv names the environment variable that turns skips into failures.
const RequireAllEnv = "OVNK_REQUIRE_ALL"

// RequireAll reports whether a missing component must fail the test instead of skipping it.
func RequireAll() bool { return os.Getenv(RequireAllEnv) == "1" }

// Missing ends the test because a component it needs is not available: a skip that
// names the reason, or a failure under OVNK_REQUIRE_ALL=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatalf("%s (%s=1 forbids skipping; run `make deps` to install what is missing)", reason, RequireAllEnv)
	}
	t.Skip(reason + " (`make deps` installs what is missing; host packages need root)")
}

// NeedBinaries returns the paths of the named host programs (go, ip, vtysh, …), or ends
// the test through Missing. OVN and OVS programs come from NeedOVN instead.
func NeedBinaries(t testing.TB, names ...string) map[string]string {
	t.Helper()
	paths := make(map[string]string, len(names))
	var absent []string
	for _, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			absent = append(absent, name)
			continue
		}
		paths[name] = p
	}
	if len(absent) > 0 {
		Missing(t, "not on PATH: %s", strings.Join(absent, ", "))
	}
	return paths
}

// NeedOVN returns the OVN 25.03 / OVS 3.5 root every OVN and OVS server of the tests
// runs from (pkg/ovnroot), or ends the test through Missing with the command that
// provisions it. The first test of a package to need it logs the releases it found, so
// `go test -v` shows what was tested against.
func NeedOVN(t testing.TB) ovnroot.Root {
	t.Helper()
	root, err := ovnroot.Find()
	if err != nil {
		Missing(t, "%v", err)
	}
	versionsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		versions, versionsErr = root.Versions(ctx)
		if versionsErr == nil {
			t.Log(versions)
		}
	})
	if versionsErr != nil {
		t.Fatalf("the OVN root at %s does not run: %v", root.Dir, versionsErr)
	}
	return root
}

var (
	versionsOnce sync.Once
	versions     string
	versionsErr  error
)

// ovnProgram returns the path of a program of the OVN root, or ends the test.
func ovnProgram(t testing.TB, name string) string {
	t.Helper()
	p, err := NeedOVN(t).Program(name)
	if err != nil {
		Missing(t, "%v", err)
	}
	return p
}

// NeedRoot ends the test through Missing unless it runs as root.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root: %s", why)
	}
}

// Eventually polls check until it returns nil or the timeout passes, and returns the
// last error wrapped with what was awaited. It is the only way tests here wait.
func Eventually(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	return poll.Until(ctx, timeout, what, check)
}
