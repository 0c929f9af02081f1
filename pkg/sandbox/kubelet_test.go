package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKubeletFailure(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ log, want string }{
		"the reason kubelet gave": {
			log:  "I1126 starting\nE1126 09:57:50.821191    1385 run.go:72] \"command failed\" err=\"failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1, path: \\\"x\\\"\"\n",
			want: `failed to validate kubelet configuration, error: kubelet is configured to not run on a host using cgroup v1, path: "x"`,
		},
		"no reason": {log: "I1126 starting\n", want: ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := kubeletFailure(path); got != tc.want {
			t.Errorf("%s: kubeletFailure = %q, want %q", name, got, tc.want)
		}
	}
}
