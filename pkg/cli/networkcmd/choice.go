package networkcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// choice is a flag that takes one of a few values: lower-case words on the command line
// (layer3, no-overlay), the API's spelling (Layer3, NoOverlay) in the object.
type choice struct {
	flag string
	cli  []string
	api  []string
}

var (
	topologyChoice  = choice{"topology", []string{"layer3", "layer2"}, []string{"Layer3", "Layer2"}}
	roleChoice      = choice{"role", []string{"primary", "secondary"}, []string{"Primary", "Secondary"}}
	transportChoice = choice{"transport", []string{"geneve", "no-overlay"}, []string{"Geneve", "NoOverlay"}}
	snatChoice      = choice{"outbound-snat", []string{"enabled", "disabled"}, []string{"Enabled", "Disabled"}}
	routingChoice   = choice{"routing", []string{"managed", "unmanaged"}, []string{"Managed", "Unmanaged"}}
	// ipamChoice maps to a Layer2 network's ipam block: enabled is the default (no
	// block), disabled is mode Disabled, persistent is lifecycle Persistent.
	ipamChoice = choice{"ipam", []string{"enabled", "disabled", "persistent"}, []string{"Enabled", "Disabled", "Persistent"}}
)

// parse returns the API value of v, accepting either spelling in any case; "" stays "".
func (c choice) parse(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	for i := range c.cli {
		if strings.EqualFold(v, c.cli[i]) || strings.EqualFold(v, c.api[i]) {
			return c.api[i], nil
		}
	}
	return "", fmt.Errorf("--%s %s: use %s", c.flag, v, orList(c.cli))
}

// usage is the flag's help: what it does, then its values.
func (c choice) usage(what string) string {
	return what + ": " + strings.Join(c.cli, "|")
}

// register sets the flag's shell completion to its values.
func (c choice) register(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc(c.flag, cobra.FixedCompletions(c.cli, cobra.ShellCompDirectiveNoFileComp))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
