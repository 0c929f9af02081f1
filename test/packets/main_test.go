package packets_test

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }
