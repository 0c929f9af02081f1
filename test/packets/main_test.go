package packets_test

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}
