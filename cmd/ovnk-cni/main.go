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
	// The runtime's own timeout does not come as a signal: containerd's libcni kills
	// the plugin with SIGKILL when its context ends, which no handler sees. ADD therefore
	// bounds itself (cni.DefaultAddTimeout) and undoes its work before that. SIGINT and
	// SIGTERM, from a person or a supervisor, end the call the same way: ADD undoes its
	// work, DEL and CHECK stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cni.Plugin{}).Run(ctx, os.Getenv, os.Stdin, os.Stdout)
	stop()
	os.Exit(code)
}
