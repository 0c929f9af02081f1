package sandbox

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain provides the shared API server the pods daemon's test runs against.
func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }
