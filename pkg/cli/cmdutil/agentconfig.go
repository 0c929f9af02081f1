package cmdutil

import (
	"fmt"

	"github.com/spf13/pflag"

	agentconfig "github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// LoadAgentConfig loads the agent's config file, text, as an agent of the DaemonSet
// that `kubectl ovnk install` makes loads it when it starts (agentconfig.LoadText),
// with what the pod adds: a node name (any name stands in for the pod's), the flags
// the DaemonSet passes (manifests.AgentArgs, at the default port and NB socket
// directory), which override the file's keys, and the Lease's namespace from the
// agent's namespace. Install checks a config this way before writing it into the
// agent's ConfigMap, and the commands that check against the cluster's ranges read
// that ConfigMap this way, so both see the configuration the agents run with.
// Messages name the file as source.
func LoadAgentConfig(text, source, namespace string) (*agentconfig.Config, error) {
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	agentconfig.AddFlags(fs)
	args := append([]string{"--node-name", "config-check"}, manifests.AgentArgs(manifests.DefaultHTTPPort, manifests.DefaultNBSocketDir)...)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("load the agent config %s with the DaemonSet's flags: %w", source, err)
	}
	env := map[string]string{"POD_NAMESPACE": namespace}
	return agentconfig.LoadText(fs, func(k string) string { return env[k] }, text, source)
}
