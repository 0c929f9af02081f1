// Package ctrlruntimelog holds the one rule for controller-runtime's log in programs and
// tests that report through their errors and output instead: it discards.
package ctrlruntimelog

import (
	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Discard gives controller-runtime a logger that discards. Without one, a client it
// creates more than 30 s after the process started (in a long wait or watch, or in a
// test late in a run) prints a "log.SetLogger(...) was never called" stack trace to
// stderr. controller-runtime keeps the first logger it is given, so Discard changes
// nothing after another was set, and calling it again is harmless.
func Discard() { ctrllog.SetLogger(logr.Discard()) }
