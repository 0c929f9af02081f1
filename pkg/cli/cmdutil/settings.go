package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// Settings are the plugin's own defaults. Each comes, first match wins, from its flag,
// from OVNK_<KEY> (dashes as underscores), or from the config file: $OVNK_PLUGIN_CONFIG, else
// ~/.config/ovnk/config.yaml (docs/plugin-config.md).
type Settings struct {
	// AgentNamespace is where the agent's DaemonSet runs (agent-namespace).
	AgentNamespace string
	// NoColor turns colour off even on a terminal (no-color).
	NoColor bool
	// NBEndpoints maps a node to the NB endpoint of its zone (nb-endpoints). When a
	// node is listed, live views read its NB directly instead of exec into its agent;
	// the local sandbox of `make demo` writes this.
	NBEndpoints map[string]string
	// File is the config file that was read, "" when there was none.
	File string
}

// Setting keys, as written in the config file.
const (
	keyAgentNamespace = "agent-namespace"
	keyNoColor        = "no-color"
	keyNBEndpoints    = "nb-endpoints"
)

// AddSettingsFlags registers the settings that are also flags.
func AddSettingsFlags(fs *pflag.FlagSet) {
	fs.String(keyAgentNamespace, manifests.DefaultNamespace, "namespace of the ovnk agent's DaemonSet")
	fs.Bool(keyNoColor, false, "never colour the output (also NO_COLOR=1)")
}

// DefaultConfigFile is where the settings file is looked for when OVNK_PLUGIN_CONFIG is unset.
func DefaultConfigFile(getenv func(string) string) string {
	if p := getenv("OVNK_PLUGIN_CONFIG"); p != "" {
		return p
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "ovnk", "config.yaml")
}

// LoadSettings reads the settings after the flags are parsed. A missing default file is
// fine; a file named by OVNK_PLUGIN_CONFIG that is missing, or any file that does not parse, is
// an error naming the file.
func LoadSettings(flags *pflag.FlagSet, getenv func(string) string) (*Settings, error) {
	v := viper.New()
	v.SetDefault(keyAgentNamespace, manifests.DefaultNamespace)
	for _, key := range []string{keyAgentNamespace, keyNoColor} {
		if f := flags.Lookup(key); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return nil, err
			}
		}
		envKey := "OVNK_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
		if val := getenv(envKey); val != "" {
			v.Set(key, val)
			if f := flags.Lookup(key); f != nil && f.Changed {
				v.Set(key, f.Value.String()) // a flag beats the environment
			}
		}
	}
	s := &Settings{}
	file := DefaultConfigFile(getenv)
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		err := v.ReadInConfig()
		var notFound viper.ConfigFileNotFoundError
		switch {
		case err == nil:
			s.File = file
		case errors.As(err, &notFound) || errors.Is(err, fs.ErrNotExist):
			if getenv("OVNK_PLUGIN_CONFIG") != "" {
				return nil, fmt.Errorf("OVNK_PLUGIN_CONFIG names %s, which does not exist: create it or unset OVNK_PLUGIN_CONFIG", file)
			}
		default:
			return nil, fmt.Errorf("read settings file %s: %w (docs/plugin-config.md shows its format)", file, err)
		}
	}
	s.AgentNamespace = v.GetString(keyAgentNamespace)
	if msgs := validation.IsDNS1123Label(s.AgentNamespace); len(msgs) > 0 {
		return nil, fmt.Errorf("agent-namespace %q is not a namespace name: %s", s.AgentNamespace, msgs[0])
	}
	s.NoColor = v.GetBool(keyNoColor)
	s.NBEndpoints = v.GetStringMapString(keyNBEndpoints)
	return s, nil
}
