package cmdutil

import (
	"os"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// TestLoadAgentConfig checks that a config loads as the DaemonSet's agent loads it (the
// Lease's namespace from the agent's), and that a config the agent would refuse is
// refused with messages naming its source, not the temporary file it went through.
func TestLoadAgentConfig(t *testing.T) {
	cfg, err := LoadAgentConfig(manifests.DefaultAgentConfig, "install's default", "agents")
	if err != nil {
		t.Fatalf("install's default config: %v", err)
	}
	if len(cfg.ClusterSubnets) != 1 || cfg.ClusterSubnets[0].CIDR.String() != "10.244.0.0/16" || cfg.LeaderElection.Namespace != "agents" {
		t.Errorf("install's default config loads as cluster subnets %v, Lease namespace %q", cfg.ClusterSubnets, cfg.LeaderElection.Namespace)
	}

	_, err = LoadAgentConfig("[default]\ncluster-subnets = 10.244.0.0/16/33\n", "ConfigMap agents/ovnk-agent-config", "agents")
	if err == nil {
		t.Fatal("a host prefix of /33 loads")
	}
	if msg := err.Error(); !strings.Contains(msg, "(from ConfigMap agents/ovnk-agent-config:2)") || strings.Contains(msg, os.TempDir()) {
		t.Errorf("error %q does not name the config by its source, line 2", msg)
	}
}

// TestLoadAgentConfigTakesTheDaemonSetFlags checks that the flags the DaemonSet passes
// override the file's keys here as in the agent: a file setting cni-socket to a
// relative path, which the agent alone would refuse, loads, as an agent of the
// DaemonSet starts with it.
func TestLoadAgentConfigTakesTheDaemonSetFlags(t *testing.T) {
	text := "[default]\ncluster-subnets = 10.244.0.0/16/24\ncni-socket = cni.sock\n"
	if _, err := LoadAgentConfig(text, "ConfigMap x/ovnk-agent-config", "x"); err != nil {
		t.Errorf("the DaemonSet's agent starts with this config, LoadAgentConfig refuses it: %v", err)
	}
}
