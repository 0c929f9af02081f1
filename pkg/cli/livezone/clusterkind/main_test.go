package clusterkind_test

import (
	"os"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }
