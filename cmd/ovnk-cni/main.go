// Command ovnk-cni is ovnk's CNI plugin: the container runtime runs it on a node for
// every pod sandbox (CNI_COMMAND ADD, DEL, CHECK, VERSION), and the node's agent
// installs it (docs/agent.md, "CNI"). Package cni does the work.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ovnk/ovnk/pkg/cni"
)

func main() {
	// The runtime bounds a call by its own timeout and kills the plugin: a SIGTERM
	// first lets an ADD undo what it made.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cni.Plugin{}).Run(ctx, os.Getenv, os.Stdin, os.Stdout)
	stop()
	os.Exit(code)
}
