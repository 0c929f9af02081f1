// Package networkcmd implements `kubectl ovnk network` (alias `net`): create, list,
// describe and delete user-defined networks, both the namespaced UserDefinedNetworks
// and the ClusterUserDefinedNetworks that serve several namespaces.
package networkcmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// New returns the `network` command and its verbs.
func New(f *cmdutil.Factory) *cobra.Command {
	return newNetworkCmd(f, time.Now)
}

// newNetworkCmd is New with the clock that ages are measured against.
func newNetworkCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "network COMMAND",
		Aliases: []string{"net"},
		Short:   "Create, list, describe and delete user-defined networks",
		Long: `Manage OVN-Kubernetes user-defined networks: UserDefinedNetworks, which belong to one
namespace, and ClusterUserDefinedNetworks (--cluster), which serve the namespaces
they select.`,
		Example: `  # A Layer3 network for namespace blue, then where it stands
  kubectl ovnk network create blue-net -n blue --subnet 10.10.0.0/16
  kubectl ovnk network list
  kubectl ovnk network describe blue/blue-net

  # Remove it once no pod uses it
  kubectl ovnk net delete blue/blue-net`,
	}
	list := newListCmd(f, now)
	// kubectl users list with `get`, as `kubectl get` lists; no other verb here reads so.
	list.Aliases = append(list.Aliases, "get")
	cmd.AddCommand(
		newCreateCmd(f),
		list,
		newDescribeCmd(f, now),
		newDeleteCmd(f),
	)
	return cmd
}
