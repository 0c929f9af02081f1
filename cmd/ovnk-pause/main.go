// Command ovnk-pause is the process of a pod's sandbox container, the first container of
// every pod, which holds the pod's namespaces while its other containers come and go.
// As PID 1 of the pod's PID namespace (when the pod shares one), it is the parent of
// every orphan there and reaps them, so exited processes do not pile up as zombies. It
// exits 0 on SIGTERM or SIGINT, as the runtime asks when the pod goes.
//
// It takes no arguments and needs nothing but the kernel: built with the standard
// library alone it is a static binary, and the image holds nothing else.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "ovnk-pause takes no arguments: it holds a pod's namespaces until SIGTERM")
		os.Exit(2)
	}
	// As PID 1 the kernel delivers no signal whose handler is the default, so SIGTERM
	// would be ignored: these handlers are what make it stop.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	// A child that exited before the handler was in sent its SIGCHLD to no one: collect
	// those once, now that no later one can be missed.
	reap()
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every child that has exited. One SIGCHLD may stand for several
// children (pending signals do not queue), so it loops until none is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
