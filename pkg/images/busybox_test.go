package images

import (
	"errors"
	"testing"
)

// A dynamic /bin/busybox is Debian's busybox package, which busybox-static replaces:
// the message says that. A dynamic busybox anywhere else keeps checkStatic's words.
func TestNotStatic(t *testing.T) {
	dynamic := errors.New("busybox /bin/busybox is dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2), and the test app's image has no C library: build it static (CGO_ENABLED=0)")
	if got, want := notStatic(BusyboxPath, dynamic).Error(),
		"/bin/busybox is Debian's dynamic busybox: install busybox-static (apt-get install busybox-static replaces it)"; got != want {
		t.Errorf("dynamic /bin/busybox: %q, want %q", got, want)
	}
	other := errors.New("busybox /opt/busybox is dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2), and the test app's image has no C library: build it static (CGO_ENABLED=0)")
	if got, want := notStatic("/opt/busybox", other).Error(), other.Error()+"; Debian's busybox-static is static"; got != want {
		t.Errorf("dynamic /opt/busybox: %q, want %q", got, want)
	}
	arch := errors.New("busybox /bin/busybox is for EM_AARCH64, the image for EM_X86_64")
	if got := notStatic(BusyboxPath, arch).Error(); got != arch.Error()+"; Debian's busybox-static is static" {
		t.Errorf("/bin/busybox of another machine: %q", got)
	}
}
