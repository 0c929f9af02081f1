package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/test/testenv"
)

// newRoot is the real command tree, writing to out and errOut, with no cluster behind it:
// the tests here stop before anything is contacted.
func newRoot(out, errOut *bytes.Buffer) *cobra.Command {
	return cli.NewRootCommandWith(clitest.NewFactory("", clitest.Terminal{}, nil, out, errOut))
}

// groups returns every command of the tree that has sub-commands, the root first.
func groups(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	stack := []*cobra.Command{root}
	for len(stack) > 0 {
		c := stack[0]
		stack = append(stack[1:], c.Commands()...)
		if c.HasSubCommands() {
			out = append(out, c)
		}
	}
	return out
}

// wordsBelowRoot is how c is typed after `kubectl ovnk`.
func wordsBelowRoot(c *cobra.Command) []string {
	if !c.HasParent() {
		return nil
	}
	return append(wordsBelowRoot(c.Parent()), c.Name())
}

// TestGroupsRefuseUnknownSubcommands runs, under every command that has sub-commands, its
// first sub-command with the last letter missing, and a word like none of them: both
// must fail (a group printing its help and exiting 0 was issue #19), the typo with
// cobra's words and the sub-command it meant. The tree is walked, so a new group is
// held to the same.
func TestGroupsRefuseUnknownSubcommands(t *testing.T) {
	var paths []string
	for _, g := range groups(newRoot(&bytes.Buffer{}, &bytes.Buffer{})) {
		paths = append(paths, g.CommandPath())
		// A name of four letters or more, so that the typo, one shorter, is not the
		// prefix of every other name too.
		var meant string
		for _, s := range g.Commands() {
			if s.IsAvailableCommand() && len(s.Name()) > 3 {
				meant = s.Name()
				break
			}
		}
		if meant == "" {
			t.Errorf("%s: no sub-command to mistype", g.CommandPath())
			continue
		}
		typo := meant[:len(meant)-1]
		t.Run(strings.Join(append(wordsBelowRoot(g), typo), "_"), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := clitest.Execute(context.Background(), newRoot(&out, &errOut), &out, &errOut, append(wordsBelowRoot(g), typo)...)
			if err == nil {
				t.Fatalf("kubectl ovnk %s succeeded, printing %q", strings.Join(append(wordsBelowRoot(g), typo), " "), out.String())
			}
			want := `unknown command "` + typo + `" for "` + g.CommandPath() + `"` + "\n\nDid you mean this?\n\t" + meant
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error:\n%s\nwant it to begin with:\n%s", err, want)
			}
			if out.Len() > 0 {
				t.Errorf("printed %q besides the error", out.String())
			}
		})
		t.Run(strings.Join(append(wordsBelowRoot(g), "zzzz"), "_"), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := clitest.Execute(context.Background(), newRoot(&out, &errOut), &out, &errOut, append(wordsBelowRoot(g), "zzzz")...); err == nil {
				t.Errorf("kubectl ovnk %s zzzz succeeded, printing %q", strings.Join(wordsBelowRoot(g), " "), out.String())
			}
		})
	}
	// The walk must have found the groups there are, or the loop above proved nothing.
	for _, want := range []string{"kubectl ovnk", "kubectl ovnk network", "kubectl ovnk connections"} {
		if !slices.Contains(paths, want) {
			t.Errorf("groups found: %q, want %q among them", paths, want)
		}
	}
}

// TestGroupAloneShowsHelp keeps what a group without a verb did before: its help, and
// success; and a word far from every verb is named without suggestions.
func TestGroupAloneShowsHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := clitest.Execute(context.Background(), newRoot(&out, &errOut), &out, &errOut, "network"); err != nil {
		t.Fatalf("kubectl ovnk network: %v", err)
	}
	if !strings.Contains(out.String(), "Available Commands:") || !strings.Contains(out.String(), "describe") {
		t.Errorf("kubectl ovnk network printed no help:\n%s", out.String())
	}
	out.Reset()
	err := clitest.Execute(context.Background(), newRoot(&out, &errOut), &out, &errOut, "network", "zzzz")
	if want := `unknown command "zzzz" for "kubectl ovnk network"`; err == nil || err.Error() != want {
		t.Errorf("kubectl ovnk network zzzz: error %v, want %q", err, want)
	}
}

// TestKubectlVerbs checks that the verbs kubectl users type reach the command they mean,
// and that no name or alias is shared by two commands of one group (cobra would take
// the first, silently).
func TestKubectlVerbs(t *testing.T) {
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for typed, want := range map[string]string{
		"network get":          "kubectl ovnk network list",
		"network ls":           "kubectl ovnk network list",
		"network list":         "kubectl ovnk network list",
		"network rm":           "kubectl ovnk network delete",
		"network delete":       "kubectl ovnk network delete",
		"network describe":     "kubectl ovnk network describe",
		"net get":              "kubectl ovnk network list",
		"connections describe": "kubectl ovnk connections describe",
		"connection describe":  "kubectl ovnk connections describe",
		"cnc describe":         "kubectl ovnk connections describe",
	} {
		c, _, err := root.Find(strings.Fields(typed))
		if err != nil || c.CommandPath() != want {
			t.Errorf("kubectl ovnk %s finds %v (error %v), want %s", typed, c.CommandPath(), err, want)
		}
	}
	for _, g := range groups(root) {
		seen := map[string]string{}
		for _, s := range g.Commands() {
			for _, word := range append([]string{s.Name()}, s.Aliases...) {
				if other, dup := seen[word]; dup {
					t.Errorf("%s: %q names both %s and %s", g.CommandPath(), word, other, s.Name())
				}
				seen[word] = s.Name()
			}
		}
	}
}

// pluginEnv is the environment for the real kubectl to run the plugin against k: the
// plugin's directory first on PATH, without the settings of whoever runs the test.
func pluginEnv(t *testing.T, k *testenv.Kube) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OVNK_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	pluginDir := filepath.Dir(testenv.Command(t, "kubectl-ovnk"))
	return append(append(env, "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR="), k.Env()...)
}

// TestUnknownSubcommandThroughKubectl is issue #19's `kubectl ovnk network delet`, typed
// as the operator typed it: the real kubectl finds the plugin on PATH and passes the
// plugin's exit status on. And `network get`, the kubectl verb, lists from the real API
// server.
func TestUnknownSubcommandThroughKubectl(t *testing.T) {
	kc := newKubectl(t)
	r := kc.ovnk("network", "delet", "blue")
	want := "error: unknown command \"delet\" for \"kubectl ovnk network\"\n\nDid you mean this?\n\tdelete\n"
	if r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Errorf("want exit status 1 and only on stderr %q; %s", want, r)
	}
	kc.mustOvnk("network", "get", "-o", "name")
}

// kubectlOvnk matches `kubectl ovnk` and the lowercase words that follow it on one line:
// the command someone is told to type.
var kubectlOvnk = regexp.MustCompile(`kubectl ovnk((?: [a-z][a-z0-9-]*)*)`)

// commandsIn returns the words after each `kubectl ovnk` of text's code: fenced blocks
// and inline code of Markdown, or, with plain, every line (a command's Example).
func commandsIn(text string, plain bool) [][]string {
	code := []string{text}
	if !plain {
		code = nil
		fenced := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				code = append(code, line)
				continue
			}
			parts := strings.Split(line, "`")
			for i := 1; i < len(parts); i += 2 {
				code = append(code, parts[i])
			}
		}
	}
	var out [][]string
	for _, c := range code {
		for _, m := range kubectlOvnk.FindAllStringSubmatch(c, -1) {
			out = append(out, strings.Fields(m[1]))
		}
	}
	return out
}

// undefinedCommand follows words from root as cobra would and returns what is wrong
// when a word after a command with sub-commands names none of them, else "". Words
// after a command without sub-commands are its arguments.
func undefinedCommand(root *cobra.Command, words []string) string {
	c := root
	for _, w := range words {
		next, _, err := c.Find([]string{w})
		switch {
		case err == nil && next != c:
			c = next
		case c.HasSubCommands():
			return fmt.Sprintf("%s has no command %q", c.CommandPath(), w)
		default:
			return ""
		}
	}
	return ""
}

// TestDocsNameOnlyCommandsThatExist holds the root help, README.md and the user guide
// to the command tree (issue #19 found EgressIP commands promised that do not exist):
// every `kubectl ovnk …` they show must reach a command, and a word after a command
// with sub-commands must be one of them. A k8s.ovn.org kind that no command handles
// (handledBy) must not be mentioned by the root help or the README at all.
func TestDocsNameOnlyCommandsThatExist(t *testing.T) {
	var help, errOut bytes.Buffer
	root := newRoot(&help, &errOut)
	if err := clitest.Execute(context.Background(), root, &help, &errOut, "--help"); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"root help": help.String()}
	for _, f := range []string{"README.md", "docs/user-guide.md"} {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	root = newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	shown := map[string][][]string{"the root's examples": commandsIn(root.Example, true)}
	for _, f := range []string{"README.md", "docs/user-guide.md"} {
		shown[f] = commandsIn(texts[f], false)
	}
	for name, commands := range shown {
		if len(commands) < 3 {
			t.Errorf("%s shows %d kubectl ovnk commands: too few for this check to mean anything", name, len(commands))
		}
		for _, words := range commands {
			if bad := undefinedCommand(root, words); bad != "" {
				t.Errorf("%s shows `kubectl ovnk %s`: %s", name, strings.Join(words, " "), bad)
			}
		}
	}

	for _, kind := range unhandledKinds(t, root) {
		for _, name := range []string{"root help", "README.md"} {
			if strings.Contains(strings.ToLower(texts[name]), strings.ToLower(kind)) {
				t.Errorf("%s mentions %s, which no command handles yet", name, kind)
			}
		}
	}
}

// handledBy says which command handles each kind of the plugin's API; a new command's
// kind is added here.
var handledBy = map[string]string{
	"UserDefinedNetwork":        "network",
	"ClusterUserDefinedNetwork": "network",
	"ClusterNetworkConnect":     "connect",
}

// unhandledKinds are the kinds of the plugin's API that no command handles, which help
// and README must not promise. It fails the test when handledBy is out of step with
// the API or root.
func unhandledKinds(t *testing.T, root *cobra.Command) []string {
	t.Helper()
	known := cmdutil.Scheme.KnownTypes(ovnkv1.SchemeGroupVersion)
	var out []string
	for kind := range known {
		if _, isList := known[kind+"List"]; !isList {
			continue // a list, or the meta types every group has
		}
		if cmd, ok := handledBy[kind]; ok {
			if c, _, err := root.Find([]string{cmd}); err != nil || c == root {
				t.Errorf("%s is handled by %q, which is no command", kind, cmd)
			}
			continue
		}
		out = append(out, kind)
	}
	for kind := range handledBy {
		if _, ok := known[kind]; !ok {
			t.Errorf("handledBy names %s, which is no kind of %s", kind, ovnkv1.SchemeGroupVersion)
		}
	}
	return out
}
