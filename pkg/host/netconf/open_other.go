//go:build !linux

package netconf

import (
	"errors"
	"fmt"
)

// Open fails: netlink exists on Linux only. Fake works everywhere.
func Open(ns string) (*Host, error) {
	return nil, fmt.Errorf("open network namespace %q: %w", ns, errors.ErrUnsupported)
}
