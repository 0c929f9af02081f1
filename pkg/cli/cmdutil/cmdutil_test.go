package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func flagsWith(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddSettingsFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("agent-namespace: from-file\nnb-endpoints:\n  node-a: unix:/run/a.sock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"default", nil, map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "none")}, "ovnk-system"},
		{"file", nil, map[string]string{"OVNK_PLUGIN_CONFIG": file}, "from-file"},
		{"env beats file", nil, map[string]string{"OVNK_PLUGIN_CONFIG": file, "OVNK_AGENT_NAMESPACE": "from-env"}, "from-env"},
		{"flag beats env", []string{"--agent-namespace=from-flag"}, map[string]string{"OVNK_PLUGIN_CONFIG": file, "OVNK_AGENT_NAMESPACE": "from-env"}, "from-flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSettings(flagsWith(t, tc.args...), env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if s.AgentNamespace != tc.want {
				t.Errorf("agent namespace %q, want %q", s.AgentNamespace, tc.want)
			}
		})
	}
	s, err := LoadSettings(flagsWith(t), env(map[string]string{"OVNK_PLUGIN_CONFIG": file}))
	if err != nil {
		t.Fatal(err)
	}
	if s.NBEndpoints["node-a"] != "unix:/run/a.sock" || s.File != file {
		t.Errorf("nb-endpoints %v from %q", s.NBEndpoints, s.File)
	}
}

func TestSettingsErrorsNameTheProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agent-namespace: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"missing OVNK_PLUGIN_CONFIG file", nil, map[string]string{"OVNK_PLUGIN_CONFIG": filepath.Join(dir, "gone.yaml")}, "gone.yaml, which does not exist"},
		{"unparsable file", nil, map[string]string{"OVNK_PLUGIN_CONFIG": bad}, "bad.yaml"},
		{"bad namespace", []string{"--agent-namespace=Not_A_Namespace"}, map[string]string{"XDG_CONFIG_HOME": dir}, `"Not_A_Namespace"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSettings(flagsWith(t, tc.args...), env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestColourOnlyOnATerminalWithoutNoColor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		noColor  string
		flag     bool
		want     bool
	}{
		{"terminal", true, "", false, true},
		{"pipe", false, "", false, false},
		{"NO_COLOR", true, "1", false, false},
		{"--no-color", true, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Factory{
				Settings:   &Settings{NoColor: tc.flag},
				Getenv:     env(map[string]string{"NO_COLOR": tc.noColor}),
				IsTerminal: func(any) bool { return tc.terminal },
			}
			if got := f.Colour(); got != tc.want {
				t.Errorf("Colour() = %v, want %v", got, tc.want)
			}
			styled := f.Renderer(&bytes.Buffer{}).NewStyle().Bold(true).Render("x")
			if hasEscape := strings.Contains(styled, "\x1b["); hasEscape != tc.want {
				t.Errorf("rendered %q: escape codes %v, want %v", styled, hasEscape, tc.want)
			}
		})
	}
}

func TestWidth(t *testing.T) {
	f := &Factory{Getenv: env(map[string]string{"COLUMNS": "132"}), TerminalWidth: func(any) int { return 0 }}
	if got := f.Width(); got != 132 {
		t.Errorf("COLUMNS=132: width %d", got)
	}
	f.TerminalWidth = func(any) int { return 200 }
	if got := f.Width(); got != 200 {
		t.Errorf("terminal of 200: width %d", got)
	}
	f = &Factory{Getenv: env(nil), TerminalWidth: func(any) int { return 0 }}
	if got := f.Width(); got != defaultWidth {
		t.Errorf("nothing known: width %d", got)
	}
}

// TestTableWidth: a table is fitted on a terminal only, to the terminal's width, else
// 80; piped it is not fitted at all, even with COLUMNS set.
func TestTableWidth(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tty       bool
		termWidth int
		columns   string
		want      int
	}{
		{"terminal", true, 120, "", 120},
		{"terminal of unknown width", true, 0, "", defaultWidth},
		{"piped", false, 0, "", 0},
		{"piped with COLUMNS", false, 0, "132", 0},
	} {
		f := &Factory{
			Getenv:        env(map[string]string{"COLUMNS": tc.columns}),
			IsTerminal:    func(any) bool { return tc.tty },
			TerminalWidth: func(any) int { return tc.termWidth },
		}
		if got := f.TableWidth(); got != tc.want {
			t.Errorf("%s: table width %d, want %d", tc.name, got, tc.want)
		}
	}
}

type view struct {
	Node   string   `json:"node"`
	Routes []string `json:"routes"`
}

func printData(t *testing.T, format string) (string, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "x"}
	o := AddDataOutputFlag(cmd, "wide")
	if err := cmd.ParseFlags([]string{"-o", format}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	var out bytes.Buffer
	err := o.PrintData(view{Node: "node1", Routes: []string{"10.0.0.0/16"}}, &out)
	return out.String(), err
}

func TestPrintDataFormats(t *testing.T) {
	out, err := printData(t, "json")
	var back view
	if err != nil || json.Unmarshal([]byte(out), &back) != nil || back.Node != "node1" {
		t.Errorf("json: %q %v", out, err)
	}
	out, err = printData(t, "yaml")
	back = view{}
	if err != nil || yaml.Unmarshal([]byte(out), &back) != nil || back.Routes[0] != "10.0.0.0/16" {
		t.Errorf("yaml: %q %v", out, err)
	}
	if out, err = printData(t, "jsonpath={.routes[0]}"); err != nil || out != "10.0.0.0/16" {
		t.Errorf("jsonpath: %q %v", out, err)
	}
	if out, err = printData(t, "go-template={{.node}}"); err != nil || out != "node1" {
		t.Errorf("go-template: %q %v", out, err)
	}
	// A view has no names: -o name is refused, and no error offers it.
	if _, err = printData(t, "name"); err == nil || !strings.Contains(err.Error(), `unknown output format "name"`) {
		t.Errorf("-o name of a view: %v", err)
	}
	_, err = printData(t, "xml")
	if err == nil || !strings.Contains(err.Error(), `"xml"`) || !strings.Contains(err.Error(), "wide, json, yaml, go-template") {
		t.Errorf("-o xml: %v", err)
	}
	if err != nil && (strings.Contains(err.Error(), "name") || strings.Contains(err.Error(), "kyaml")) {
		t.Errorf("-o xml of a view offers -o name or kyaml: %v", err)
	}
	if _, err = printData(t, "kyaml"); err == nil || !strings.Contains(err.Error(), `unknown output format "kyaml"`) {
		t.Errorf("-o kyaml of a view: %v", err)
	}
}

// TestObjectFormats: a command printing objects offers -o name, in its help and
// errors.
func TestObjectFormats(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	o := AddOutputFlag(cmd, "wide")
	if err := cmd.ParseFlags([]string{"-o", "xml"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "wide, json, yaml, kyaml, name") {
		t.Errorf("-o xml: %v", err)
	}
	if !strings.Contains(cmd.Flag("output").Usage, "name") {
		t.Errorf("-o help does not offer name: %s", cmd.Flag("output").Usage)
	}
}

// TestConnectNamesTheServer: Connect builds both clients from the kubeconfig without
// contacting the server, and a request that cannot reach it is explained naming it.
func TestConnectNamesTheServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	if err := l.Close(); err != nil { // nothing listens there any more
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n"
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	kube := genericclioptions.NewConfigFlags(false)
	kube.KubeConfig = &kubeconfig
	conn, err := (&Factory{Kube: kube}).Connect()
	if err != nil {
		t.Fatalf("Connect contacted the server or failed otherwise: %v", err)
	}
	if conn.Host() != server {
		t.Errorf("Host() = %q, want %q", conn.Host(), server)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, request := range map[string]func() error{
		"Client":    func() error { return conn.Client.List(ctx, &corev1.NodeList{}) },
		"Clientset": func() error { _, err := conn.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
	} {
		err := request()
		if err == nil {
			t.Fatalf("%s: listing nodes of a server that is not there succeeded", name)
		}
		if msg := conn.Explain(err).Error(); !strings.HasPrefix(msg, "cannot reach the API server at "+server+": ") {
			t.Errorf("%s: explained as %q, want it to name %s", name, msg, server)
		}
	}
}
