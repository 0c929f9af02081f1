// Package docgen writes the command reference in docs/reference from the cobra tree, so
// the reference says exactly what --help says. One Markdown page per command.
package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Write renders every visible command under root into dir, one page each, plus an
// index (README.md). Pages of commands that no longer exist are removed.
func Write(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	pages := map[string]string{"README.md": index(root)}
	for _, c := range visible(root) {
		homeAsTilde(c.LocalFlags())
		homeAsTilde(c.InheritedFlags())
	}
	for _, c := range visible(root) {
		pages[fileName(c)] = page(c)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, keep := pages[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove stale page: %w", err)
			}
		}
	}
	for name, text := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// visible lists root and its descendants that users see (not hidden, not help).
func visible(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || !c.IsAvailableCommand() {
			continue
		}
		out = append(out, visible(c)...)
	}
	return out
}

// displayPath is the command as users type it, e.g. "kubectl ovnk network create".
func displayPath(c *cobra.Command) string { return c.Root().DisplayName() + pathBelowRoot(c) }

func pathBelowRoot(c *cobra.Command) string {
	if !c.HasParent() {
		return ""
	}
	return pathBelowRoot(c.Parent()) + " " + c.Name()
}

func fileName(c *cobra.Command) string {
	return strings.ReplaceAll(strings.TrimSpace(c.Root().Name()+pathBelowRoot(c)), " ", "_") + ".md"
}

func index(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("Generated from the commands' own help by `make docs`; do not edit by hand.\n\n")
	for _, c := range visible(root) {
		fmt.Fprintf(&b, "- [`%s`](%s) — %s\n", strings.TrimPrefix(displayPath(c), root.DisplayName()+" "), fileName(c), c.Short)
	}
	return b.String()
}

func page(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", displayPath(c), c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases: %s\n\n", strings.Join(c.Aliases, ", "))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if fl := c.NonInheritedFlags(); fl.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Options\n\n```\n%s```\n\n", fl.FlagUsagesWrapped(100))
	}
	if fl := c.InheritedFlags(); fl.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Options inherited from parent commands\n\n```\n%s```\n\n", fl.FlagUsagesWrapped(100))
	}
	var subs []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() && s.Name() != "help" {
			subs = append(subs, fmt.Sprintf("- [`%s`](%s) — %s", displayPath(s), fileName(s), s.Short))
		}
	}
	if len(subs) > 0 {
		fmt.Fprintf(&b, "## Commands\n\n%s\n\n", strings.Join(subs, "\n"))
	}
	if c.HasParent() {
		fmt.Fprintf(&b, "See also: [`%s`](%s)\n", displayPath(c.Parent()), fileName(c.Parent()))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// homeAsTilde writes flag defaults under the home directory (kubectl's --cache-dir) as
// ~ before any help text is laid out, so the reference, its line wrapping included,
// does not depend on who generated it.
func homeAsTilde(flags *pflag.FlagSet) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return
	}
	flags.VisitAll(func(f *pflag.Flag) {
		if rest, ok := strings.CutPrefix(f.DefValue, home+"/"); ok {
			f.DefValue = "~/" + rest
		}
	})
}
