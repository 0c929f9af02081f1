package images

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"

	"github.com/ovnk/ovnk/pkg/ociarchive"
)

// notStatic is the error for a busybox at bin that checkStatic refused (err). Debian's
// busybox package installs a dynamic /bin/busybox, and busybox-static replaces that
// very file: the message for it says so, rather than "build it static".
func notStatic(bin string, err error) error {
	if bin == BusyboxPath && strings.Contains(err.Error(), "dynamically linked") {
		return fmt.Errorf("%s is Debian's dynamic busybox: install busybox-static (apt-get install busybox-static replaces it)", bin)
	}
	return fmt.Errorf("%w; Debian's busybox-static is static", err)
}

// busyboxFiles are /bin/busybox and a link in /bin for each of its applets, as
// `busybox --list` names them, so `sh`, `ping`, `ip`, `nc`, `wget` … work by name.
func busyboxFiles(bin string) ([]ociarchive.File, error) {
	if bin == "" {
		bin = BusyboxPath
	}
	if _, err := os.Stat(bin); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("busybox %s does not exist: install Debian's busybox-static (apt-get install busybox-static)", bin)
		}
		return nil, fmt.Errorf("busybox: %w", err)
	}
	if err := checkStatic("busybox", bin, "the test app's image has no C library"); err != nil {
		return nil, notStatic(bin, err)
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Errorf("list the applets of busybox %s: %w", bin, err)
	}
	applets := strings.Fields(string(out))
	if len(applets) == 0 || !slices.Contains(applets, "sh") {
		return nil, fmt.Errorf("busybox %s lists no sh among its %d applets", bin, len(applets))
	}
	sort.Strings(applets)
	files := []ociarchive.File{ociarchive.FromDisk("/bin/busybox", bin, 0o755)}
	for _, a := range applets {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		files = append(files, ociarchive.Link("/bin/"+a, "busybox"))
	}
	return files, nil
}
