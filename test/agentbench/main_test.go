// Package agentbench measures the real ovnk-agent binary at scale: a cluster of
// topologytest.Scale's shape in a real kube-apiserver, the agent's zone in a real NB
// ovsdb-server, and the agent's own process under /proc. Its one benchmark is not run
// by `make test`; its test (the cluster's objects build back into the fixture) is, and
// needs no servers.
package agentbench

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain starts the package's API server on first use and stops it, and removes the
// agent binary the benchmark built, when the package is done.
func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }
