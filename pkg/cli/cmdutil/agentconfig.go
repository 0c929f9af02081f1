package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	agentconfig "github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// LoadAgentConfig loads the agent's config file, text, as an agent of the DaemonSet
// that `kubectl ovnk install` makes loads it when it starts (agentconfig.Load), with
// what the pod adds: a node name (any name stands in for the pod's), the HTTP and NB
// addresses the DaemonSet passes as flags, and the Lease's namespace from the agent's
// namespace. Install checks a config this way before writing it into the agent's
// ConfigMap, and the commands that check against the cluster's ranges read that
// ConfigMap this way, so both see the configuration the agents run with. Messages name
// the file as source.
func LoadAgentConfig(text, source, namespace string) (*agentconfig.Config, error) {
	// Load reads a file, so the text goes into one of its own for the time of the call.
	dir, err := os.MkdirTemp("", "ovnk-agent-config-")
	if err != nil {
		return nil, fmt.Errorf("load the agent config %s: %w", source, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, manifests.AgentConfigKey)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return nil, fmt.Errorf("load the agent config %s: %w", source, err)
	}
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	agentconfig.AddFlags(fs)
	args := []string{"--config", path, "--node-name", "config-check",
		fmt.Sprintf("--http-address=:%d", manifests.DefaultHTTPPort),
		"--nb-address=unix:" + manifests.DefaultNBSocketDir + "/" + manifests.NBSocketName}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("load the agent config %s: %w", source, err)
	}
	env := map[string]string{"POD_NAMESPACE": namespace}
	cfg, err := agentconfig.Load(fs, func(k string) string { return env[k] })
	if err != nil {
		// Load names the file by its path, which is temporary: name the source instead.
		return nil, errors.New(strings.ReplaceAll(err.Error(), path, source))
	}
	return cfg, nil
}
