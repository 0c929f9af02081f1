package cmdutil_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// noClusterWants are what every "no cluster" error must say: what is wrong and each
// way to fix it.
var noClusterWants = []string{"no cluster to talk to: ", "set KUBECONFIG", "--kubeconfig", "--context"}

// isolate gives the test an environment in which client-go finds no cluster by itself:
// KUBECONFIG as given, a home without .kube, and no pod around it.
func isolate(t *testing.T, kubeconfig string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBERNETES_MASTER", "")
}

func writeKubeconfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// requireNoCluster requires err to be one line with noClusterWants and want, and not
// client-go's fallback to http://localhost:8080.
func requireNoCluster(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error; want %q", what, noClusterWants[0])
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Contains(msg, "localhost:8080") {
		t.Errorf("%s: %q: want one line, not naming client-go's default server", what, msg)
	}
	for _, w := range append(append([]string{}, noClusterWants...), want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q lacks %q", what, msg, w)
		}
	}
}

const contextless = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n" +
	"contexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"

// TestNoClusterToTalkTo: when nothing names a cluster — no kubeconfig file, or one that
// selects no cluster, no --server or --context, and no pod — every way to the cluster
// fails with one line saying so and how to name one, instead of trying localhost:8080.
func TestNoClusterToTalkTo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	contextlessFile, explicit := writeKubeconfig(t, contextless), writeKubeconfig(t, contextless)
	lost := writeKubeconfig(t, strings.Replace(contextless, "contexts:\n", "current-context: lost\ncontexts:\n- name: lost\n  context:\n    cluster: gone\n    user: u\n", 1))
	for _, tc := range []struct {
		name       string
		kubeconfig string // KUBECONFIG
		explicit   string // --kubeconfig
		want       []string
	}{
		{"KUBECONFIG names no file", missing, "", []string{"there is no kubeconfig file (looked for " + missing + ")"}},
		{"no KUBECONFIG and no ~/.kube/config", "", "", []string{"there is no kubeconfig file", filepath.Join(".kube", "config")}},
		{"kubeconfig without a current context", contextlessFile, "", []string{"kubeconfig " + contextlessFile + " sets no current context"}},
		{"--kubeconfig without a current context", missing, explicit, []string{"kubeconfig " + explicit + " sets no current context"}},
		{"current context of no cluster", lost, "", []string{"context lost of kubeconfig " + lost + ` names cluster "gone", which it does not define`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t, tc.kubeconfig)
			kube := genericclioptions.NewConfigFlags(true)
			f := &cmdutil.Factory{Kube: kube}
			if tc.explicit != "" {
				*kube.KubeConfig = tc.explicit
			}
			_, err := f.RESTConfig()
			requireNoCluster(t, "RESTConfig", err, tc.want...)
			_, err = f.Connect()
			requireNoCluster(t, "Connect", err, tc.want...)
			_, err = f.Client()
			requireNoCluster(t, "Client", err, tc.want...)
			_, err = f.Clientset()
			requireNoCluster(t, "Clientset", err, tc.want...)
		})
	}
}

// TestNoClusterThroughTheCommand runs `network list` as kubectl-ovnk does, with no
// kubeconfig at all: it fails with the one line, and before printing anything.
func TestNoClusterThroughTheCommand(t *testing.T) {
	isolate(t, filepath.Join(t.TempDir(), "absent"))
	t.Setenv("OVNK_PLUGIN_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs([]string{"network", "list"})
	err := root.Execute()
	requireNoCluster(t, "network list", err, "there is no kubeconfig file")
	if out.Len() != 0 {
		t.Errorf("network list printed %q before failing", out.String())
	}
}

// TestSomethingNamesTheCluster: whatever names a server — --server, --context, a
// current context, or the pod's environment — is left to client-go, so the check
// refuses nothing that could reach a cluster.
func TestSomethingNamesTheCluster(t *testing.T) {
	withCurrent := writeKubeconfig(t, contextless+"current-context: ctx\n")
	for _, tc := range []struct {
		name       string
		kubeconfig string
		env        map[string]string
		set        func(*genericclioptions.ConfigFlags)
		host       string // "" when only the absence of the "no cluster" error is required
	}{
		{"--server", "", nil, func(k *genericclioptions.ConfigFlags) { *k.APIServer = "https://10.0.0.1:6443" }, "https://10.0.0.1:6443"},
		{"--context", writeKubeconfig(t, contextless), nil, func(k *genericclioptions.ConfigFlags) { *k.Context = "ctx" }, "https://127.0.0.1:6443"},
		{"--cluster", writeKubeconfig(t, contextless), nil, func(k *genericclioptions.ConfigFlags) { *k.ClusterName = "c" }, "https://127.0.0.1:6443"},
		{"current context", withCurrent, nil, nil, "https://127.0.0.1:6443"},
		{"in a pod", "", map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}, nil, ""},
		// client-go reads KUBERNETES_MASTER once, when the process starts, as the
		// server instead of localhost:8080; here it is only seen not to be refused.
		{"KUBERNETES_MASTER", "", map[string]string{"KUBERNETES_MASTER": "https://10.0.0.2:6443"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t, tc.kubeconfig)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			kube := genericclioptions.NewConfigFlags(true)
			if tc.set != nil {
				tc.set(kube)
			}
			rc, err := (&cmdutil.Factory{Kube: kube}).RESTConfig()
			if err != nil && strings.Contains(err.Error(), "no cluster to talk to") {
				t.Fatalf("refused although something names the cluster: %v", err)
			}
			if tc.host == "" {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rc.Host != tc.host {
				t.Errorf("host %q, want %q", rc.Host, tc.host)
			}
		})
	}
}
