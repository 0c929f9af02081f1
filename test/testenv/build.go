package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// builds holds one build per command, per test binary.
var builds struct {
	sync.Mutex
	dir   string
	paths map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// RemoveBuilds removes what Command built; a test package's TestMain calls it after
// its tests (KubeMain does), so no test run leaves binaries behind.
func RemoveBuilds() {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
		builds.dir, builds.paths = "", nil
	}
}

// BuildsMain runs a test package's tests and then removes what Command built: a
// package whose tests build commands calls it from TestMain, as
// os.Exit(testenv.BuildsMain(m)); KubeMain does the same.
func BuildsMain(m *testing.M) int {
	defer RemoveBuilds()
	return m.Run()
}

// Command builds the project's command cmd/NAME once per test binary, statically, and
// returns the path of the binary. Every command lands in one directory, so the directory can go on
// PATH (kubectl finds kubectl-ovnk there). A failed build fails the test with the
// compiler's output.
func Command(t testing.TB, name string) string {
	t.Helper()
	builds.Lock()
	if builds.paths == nil {
		builds.paths = map[string]*build{}
	}
	b := builds.paths[name]
	if b == nil {
		b = &build{}
		builds.paths[name] = b
	}
	builds.Unlock()
	b.once.Do(func() {
		builds.Lock()
		if builds.dir == "" {
			builds.dir, b.err = os.MkdirTemp("", "ovnk-test-bin-")
		}
		dir := builds.dir
		builds.Unlock()
		if b.err != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		b.path = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", b.path, "./cmd/"+name)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		// Static, as make build's: some go into container images with no C library.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %w\n%s", name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}
