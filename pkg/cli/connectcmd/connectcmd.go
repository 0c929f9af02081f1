// Package connectcmd implements the commands that connect user-defined networks to each
// other through a ClusterNetworkConnect (OKEP-5224): `kubectl ovnk connect`,
// `disconnect`, and `connections` with `connections describe`.
//
// A connect made here selects exactly the networks it names: Primary
// UserDefinedNetworks by their namespace's kubernetes.io/metadata.name label, and
// ClusterUserDefinedNetworks by NetworkNameLabel, which `connect` puts on each named
// ClusterUserDefinedNetwork (with its own name as the value) when it is missing.
package connectcmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// NetworkNameLabel names a ClusterUserDefinedNetwork by a label, so that a connect can
// select it, and nothing else, by name: Kubernetes labels only namespaces with their
// name (kubernetes.io/metadata.name), not custom resources. Its value is the
// ClusterUserDefinedNetwork's own name.
const NetworkNameLabel = "ovnk.io/network-name"

// NewConnect returns `connect A B [C…]`, which creates a ClusterNetworkConnect.
func NewConnect(f *cmdutil.Factory) *cobra.Command { return newConnectCmd(f) }

// NewDisconnect returns `disconnect NAME | A B [C…]`, which deletes one.
func NewDisconnect(f *cmdutil.Factory) *cobra.Command { return newDisconnectCmd(f) }

// NewConnections returns `connections`, the table of connects, with its `describe` verb.
func NewConnections(f *cmdutil.Factory) *cobra.Command { return newConnectionsCmd(f, time.Now) }
