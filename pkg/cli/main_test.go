package cli_test

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain provides the shared API server that the real kubectl runs the plugin against,
// and removes the plugin binary the tests build.
func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }
