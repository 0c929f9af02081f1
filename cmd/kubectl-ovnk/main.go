// Command kubectl-ovnk is the kubectl plugin for OVN-Kubernetes networking; kubectl
// runs it as `kubectl ovnk` when it is on PATH.
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := cli.NewRootCommand(streams).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
