package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/sandboxtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// pluginBinDir is the directory of cmd/kubectl-ovnk, built once per test binary, to put
// on PATH for kubectl's plugin discovery.
func pluginBinDir(t *testing.T) string { return filepath.Dir(testenv.Command(t, "kubectl-ovnk")) }

// pluginRun is one `kubectl ovnk …` run through the real kubectl binary.
type pluginRun struct {
	stdout, stderr string
	err            error
}

// ovnk runs `kubectl ovnk args…` through the real kubectl, with the plugin on PATH,
// reading the zones through the agent pods as on any cluster. env adds to or overrides
// the environment (e.g. another KUBECONFIG). NO_COLOR is unset: output to a pipe must be
// plain by itself.
func (ec *e2eCluster) ovnk(ctx context.Context, env []string, args ...string) pluginRun {
	ec.t.Helper()
	cmd := exec.CommandContext(ctx, ec.kubectl, append([]string{"ovnk"}, args...)...)
	cmd.Env = slices.Concat(os.Environ(), sandboxtest.KubectlEnv(ec.t, ec.s), []string{"NO_COLOR="}, ec.pluginEnv, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return pluginRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// must runs `kubectl ovnk args…` and fails the test unless it succeeds.
func (ec *e2eCluster) must(ctx context.Context, args ...string) string {
	ec.t.Helper()
	r := ec.ovnk(ctx, nil, args...)
	if r.err != nil {
		ec.t.Fatalf("kubectl ovnk %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

// refused runs `kubectl ovnk args…` and requires it to fail with one line of error that
// contains want, and to leave the ClusterNetworkConnects as they were.
func (ec *e2eCluster) refused(ctx context.Context, env []string, want string, args ...string) {
	ec.t.Helper()
	ec.refusedWith(ctx, env, []string{want}, args...)
}

// refusedWith is refused for an error that must contain every one of wants.
func (ec *e2eCluster) refusedWith(ctx context.Context, env []string, wants []string, args ...string) {
	ec.t.Helper()
	before := ec.connects(ctx)
	r := ec.ovnk(ctx, env, args...)
	var exit *exec.ExitError
	msg := strings.TrimSpace(r.stderr)
	switch {
	case r.err == nil:
		ec.t.Errorf("kubectl ovnk %s succeeded; want it refused with %q\n%s", strings.Join(args, " "), wants, r.stdout)
	case !errors.As(r.err, &exit):
		ec.t.Errorf("kubectl ovnk %s: %v", strings.Join(args, " "), r.err)
	case strings.Count(msg, "\n") > 0:
		ec.t.Errorf("kubectl ovnk %s: error %q, want one line", strings.Join(args, " "), msg)
	}
	for _, want := range wants {
		if r.err != nil && !strings.Contains(msg, want) {
			ec.t.Errorf("kubectl ovnk %s: error %q, want it to contain %q", strings.Join(args, " "), msg, want)
		}
	}
	if after := ec.connects(ctx); !maps.Equal(after, before) {
		ec.t.Errorf("kubectl ovnk %s was refused but changed the ClusterNetworkConnects:\nbefore: %v\nafter:  %v", strings.Join(args, " "), before, after)
	}
}

// connects maps each ClusterNetworkConnect's name to its spec, as JSON: what a refused
// command must neither create, delete nor change.
func (ec *e2eCluster) connects(ctx context.Context) map[string]string {
	ec.t.Helper()
	var list ovnkv1.ClusterNetworkConnectList
	if err := ec.c.List(ctx, &list); err != nil {
		ec.t.Fatalf("list ClusterNetworkConnects: %v", err)
	}
	out := map[string]string{}
	for _, c := range list.Items {
		spec, err := json.Marshal(c.Spec)
		if err != nil {
			ec.t.Fatal(err)
		}
		out[c.Name] = string(spec)
	}
	return out
}

// TestPluginThroughKubectl drives the plugin as users do, through the real kubectl's
// plugin discovery, against the real API server and three agents: every network kind is
// created, listed in every output format, described and deleted; topology and routes show
// what each zone's NB holds; and bad input is refused with one line, creating nothing.
func TestPluginThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ec.create(ctx, namespace("plug-l3", nil), namespace("plug-l2", nil), namespace("plug-c3", nil), namespace("plug-c2", map[string]string{"plug": "c2"}))

	networks := []struct {
		name, ovnName string
		create        []string
	}{
		{"plug-l3/red", "plug-l3_red", []string{"network", "create", "red", "-n", "plug-l3", "--topology", "layer3", "--subnet", "10.130.0.0/16"}},
		{"plug-l2/amber", "plug-l2_amber", []string{"net", "create", "amber", "-n", "plug-l2", "--topology", "layer2", "--subnet", "10.131.0.0/16"}},
		{"plug-c3", "cluster_udn_plug-c3", []string{"network", "create", "plug-c3", "--cluster", "--namespaces", "plug-c3", "--topology", "layer3", "--subnet", "10.132.0.0/16"}},
		{"plug-c2", "cluster_udn_plug-c2", []string{"network", "create", "plug-c2", "--cluster", "--namespace-selector", "plug=c2", "--topology", "layer2", "--subnet", "10.133.0.0/16"}},
	}
	for _, n := range networks {
		ec.must(ctx, n.create...)
	}
	for i, ns := range []string{"plug-l3", "plug-l2", "plug-c3", "plug-c2"} {
		ec.create(ctx, pod(ns, "p", ec.nodes[i%len(ec.nodes)].name))
	}
	ec.must(ctx, "status", "--wait", "--timeout", "2m")

	t.Run("list in every format", func(t *testing.T) {
		var list struct {
			Kind  string `json:"kind"`
			Items []struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(ec.must(ctx, "network", "list", "-o", "json")), &list); err != nil {
			t.Fatalf("-o json does not parse: %v", err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, strings.TrimPrefix(it.Metadata.Namespace+"/"+it.Metadata.Name, "/"))
		}
		for _, n := range networks {
			if !slices.Contains(names, n.name) {
				t.Errorf("-o json lists %v, not %s", names, n.name)
			}
		}
		if err := yaml.Unmarshal([]byte(ec.must(ctx, "network", "list", "-o", "yaml")), &list); err != nil || len(list.Items) != len(names) {
			t.Errorf("-o yaml: %v, %d items", err, len(list.Items))
		}
		byName := ec.must(ctx, "network", "list", "-o", "name")
		for _, want := range []string{"userdefinednetwork.k8s.ovn.org/red", "clusteruserdefinednetwork.k8s.ovn.org/plug-c3"} {
			if !strings.Contains(byName, want+"\n") {
				t.Errorf("-o name has no line %q:\n%s", want, byName)
			}
		}
		got := strings.Fields(ec.must(ctx, "network", "list", "-n", "plug-l3", "-o", "jsonpath={.items[*].metadata.name}"))
		if !slices.Contains(got, "red") || slices.Contains(got, "amber") {
			t.Errorf("-n plug-l3 -o jsonpath: %v", got)
		}
		table := ec.must(ctx, "network", "list")
		for _, want := range []string{"red", "amber", "plug-c3", "plug-c2", "3/3"} {
			if !strings.Contains(table, want) {
				t.Errorf("table lacks %q:\n%s", want, table)
			}
		}
	})

	t.Run("kubectl completes through the plugin", func(t *testing.T) {
		// kubectl runs kubectl_complete-ovnk from PATH to complete a plugin's words.
		_, file, _, _ := runtime.Caller(0)
		completions := filepath.Join(filepath.Dir(file), "..", "..", "completions")
		env := []string{"PATH=" + completions + string(os.PathListSeparator) + pluginBinDir(t) + string(os.PathListSeparator) + os.Getenv("PATH")}
		for _, tc := range []struct {
			words []string
			want  []string
		}{
			{[]string{"net", ""}, []string{"create", "list", "describe", "delete"}},
			{[]string{"network", "describe", "plug-"}, []string{"plug-c3", "plug-c2"}},
			{[]string{"routes", "plug-c3", "--node", "ovnk-node-"}, sandbox.NodeNames()},
		} {
			cmd := exec.CommandContext(ctx, ec.kubectl, append([]string{"__complete", "ovnk"}, tc.words...)...)
			cmd.Env = append(append(os.Environ(), sandboxtest.KubectlEnv(t, ec.s)...), env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("kubectl __complete ovnk %v: %v", tc.words, err)
			}
			var got []string
			for _, line := range strings.Split(string(out), "\n") {
				if line != "" && !strings.HasPrefix(line, ":") {
					got = append(got, strings.SplitN(line, "\t", 2)[0])
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("kubectl __complete ovnk %v: %v, want %s among them", tc.words, got, w)
				}
			}
		}
	})

	t.Run("describe", func(t *testing.T) {
		for _, n := range networks {
			out := ec.must(ctx, "network", "describe", n.name)
			for _, want := range append([]string{n.ovnName, "3/3 ready"}, sandbox.NodeNames()...) {
				if !strings.Contains(out, want) {
					t.Errorf("describe %s lacks %q:\n%s", n.name, want, out)
				}
			}
		}
	})

	t.Run("topology and routes show the NB", func(t *testing.T) {
		for _, n := range ec.nodes {
			snap, err := ovn.OwnedSnapshot(ctx, n.nbClient)
			if err != nil {
				t.Fatal(err)
			}
			for _, net := range networks {
				requireTopologyShowsZone(ctx, t, ec, n.name, net.name, net.ovnName, snap)
				requireRoutesShowZone(ctx, t, ec, n.name, net.name, net.ovnName, snap)
			}
		}
	})

	t.Run("bad input is refused and creates nothing", func(t *testing.T) {
		before := ec.must(ctx, "network", "list", "-o", "name")
		ec.refused(ctx, nil, "10.140.0.1/16", "network", "create", "bad1", "-n", "plug-l3", "--topology", "layer3", "--subnet", "10.140.0.1/16")
		ec.refused(ctx, nil, "300.1.0.0/16", "network", "create", "bad2", "-n", "plug-l3", "--topology", "layer3", "--subnet", "300.1.0.0/16")
		ec.refused(ctx, nil, "10.141.0.0/24", "network", "create", "bad3", "--cluster", "--namespaces", "plug-c3", "--topology", "layer2", "--subnet", "10.141.0.0/16", "--subnet", "10.141.0.0/24")
		ec.refused(ctx, nil, "no-such-ns", "network", "create", "bad4", "-n", "no-such-ns", "--topology", "layer2", "--subnet", "10.142.0.0/16")
		ec.refused(ctx, nil, "nope", "network", "describe", "nope")
		n1 := ec.nodes[0].name
		ec.refused(ctx, nil, "nope", "topology", "nope", "--node", n1)
		ec.refused(ctx, nil, "no-such-node", "routes", "plug-c3", "--node", "no-such-node")
		// Pointed at a namespace without agents, the plugin cannot reach the zones, and
		// says where it looked.
		noAgents := filepath.Join(t.TempDir(), "ovnk.yaml")
		if err := os.WriteFile(noAgents, []byte("agent-namespace: no-agents\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ec.refused(ctx, []string{"OVNK_PLUGIN_CONFIG=" + noAgents}, "no ovnk agent pod on node "+n1+" in namespace no-agents", "topology", "--node", n1)
		closed := filepath.Join(t.TempDir(), "kubeconfig")
		kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://%s\"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\ncurrent-context: c\n", freeAddr(t))
		if err := os.WriteFile(closed, []byte(kubeconfig), 0o600); err != nil {
			t.Fatal(err)
		}
		ec.refused(ctx, []string{"KUBECONFIG=" + closed}, "cannot reach the API server", "network", "list")
		// No cluster at all: no kubeconfig file, no home to find ~/.kube/config in, and
		// no pod around the plugin. It must say so, not try client-go's localhost:8080.
		notInAPod := []string{"KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=", "KUBERNETES_MASTER="}
		absent := filepath.Join(t.TempDir(), "no-kubeconfig")
		noCluster := []string{"no cluster to talk to", "set KUBECONFIG", "--kubeconfig", "--context"}
		ec.refusedWith(ctx, append([]string{"KUBECONFIG=" + absent, "HOME=" + t.TempDir()}, notInAPod...),
			append(noCluster, "there is no kubeconfig file (looked for "+absent+")"), "network", "list")
		ec.refusedWith(ctx, append([]string{"KUBECONFIG=", "HOME="}, notInAPod...),
			append(noCluster, "there is no kubeconfig file"), "network", "list")
		for _, env := range [][]string{{"KUBECONFIG=" + absent}, {"KUBECONFIG=", "HOME="}} {
			if r := ec.ovnk(ctx, append(env, notInAPod...), "network", "list"); strings.Contains(r.stderr, "localhost:8080") {
				t.Errorf("with %v, network list tried client-go's default server: %s", env, r.stderr)
			}
		}
		if after := ec.must(ctx, "network", "list", "-o", "name"); after != before {
			t.Errorf("refused commands changed the networks:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("delete", func(t *testing.T) {
		ec.refused(ctx, nil, "--force", "network", "delete", "plug-l3/red")
		for _, n := range networks {
			ec.must(ctx, "network", "delete", n.name, "--force")
		}
		got := strings.Fields(ec.must(ctx, "network", "list", "-o", "jsonpath={.items[*].metadata.name}"))
		for _, gone := range []string{"red", "amber", "plug-c3", "plug-c2"} {
			if slices.Contains(got, gone) {
				t.Errorf("network list still has %s after its delete: %v", gone, got)
			}
		}
		for _, key := range []struct {
			obj       ctrlclient.Object
			namespace string
			name      string
		}{
			{&ovnkv1.UserDefinedNetwork{}, "plug-l3", "red"},
			{&ovnkv1.UserDefinedNetwork{}, "plug-l2", "amber"},
			{&ovnkv1.ClusterUserDefinedNetwork{}, "", "plug-c3"},
			{&ovnkv1.ClusterUserDefinedNetwork{}, "", "plug-c2"},
		} {
			if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Namespace: key.namespace, Name: key.name}, key.obj); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s/%s after network delete: %v, want not found", key.obj, key.namespace, key.name, err)
			}
		}
		// And every zone drops the networks' rows.
		for _, n := range ec.nodes {
			err := testenv.Eventually(ctx, 60*time.Second, "deleted networks gone from zone "+n.name, func(ctx context.Context) error {
				snap, err := ovn.OwnedSnapshot(ctx, n.nbClient)
				if err != nil {
					return err
				}
				for _, net := range networks {
					if rs := networkRouters(snap, net.ovnName); len(rs) > 0 {
						return fmt.Errorf("network %s still has router %s", net.ovnName, rs[0].Name)
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("%v\n%s", err, ec.agentLog(n))
			}
		}
	})
}

// networkRouters are the names of the routers of network ovnName in a snapshot.
func networkRouters(snap *rows.Set, ovnName string) []*nbdb.LogicalRouter {
	var out []*nbdb.LogicalRouter
	for _, r := range snap.Routers {
		if r.ExternalIDs[rows.NetworkKey] == ovnName {
			out = append(out, r)
		}
	}
	return out
}

// requireTopologyShowsZone checks that `topology -o json` names exactly the routers and
// switches of the network that the node's NB holds, and that the tree names them too.
func requireTopologyShowsZone(ctx context.Context, t *testing.T, ec *e2eCluster, node, network, ovnName string, snap *rows.Set) {
	t.Helper()
	var view struct {
		Routers []struct {
			Name  string `json:"name"`
			Ports []struct {
				Name string `json:"name"`
			} `json:"ports"`
		} `json:"routers"`
		Switches []struct {
			Name string `json:"name"`
		} `json:"switches"`
	}
	if err := json.Unmarshal([]byte(ec.must(ctx, "topology", network, "--node", node, "-o", "json")), &view); err != nil {
		t.Fatalf("topology %s -o json: %v", network, err)
	}
	var want, got []string
	for _, r := range networkRouters(snap, ovnName) {
		want = append(want, "router "+r.Name)
	}
	for _, s := range snap.Switches {
		if s.ExternalIDs[rows.NetworkKey] == ovnName {
			want = append(want, "switch "+s.Name)
		}
	}
	for _, r := range view.Routers {
		got = append(got, "router "+r.Name)
	}
	for _, s := range view.Switches {
		got = append(got, "switch "+s.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("topology %s --node %s shows %v; the NB holds %v", network, node, got, want)
	}
	tree := ec.must(ctx, "topology", network, "--node", node)
	for _, name := range want {
		if !strings.Contains(tree, name) {
			t.Errorf("topology %s --node %s: the tree lacks %q", network, node, name)
		}
	}
}

// asListed is a route prefix as ovn-nbctl lr-route-list, and so the routes view, prints
// it: a host route (upstream writes join IPs as /32) without its length.
func asListed(prefix string) string {
	if p, err := netip.ParsePrefix(prefix); err == nil && p.IsSingleIP() {
		return p.Addr().String()
	}
	return prefix
}

// requireRoutesShowZone checks that `routes -o json` lists, for every router of the
// network, exactly the static routes the node's NB holds.
func requireRoutesShowZone(ctx context.Context, t *testing.T, ec *e2eCluster, node, network, ovnName string, snap *rows.Set) {
	t.Helper()
	var view struct {
		Routers []struct {
			Name   string `json:"name"`
			Routes []struct {
				Prefix  string `json:"prefix"`
				Nexthop string `json:"nexthop"`
			} `json:"routes"`
		} `json:"routers"`
	}
	if err := json.Unmarshal([]byte(ec.must(ctx, "routes", network, "--node", node, "-o", "json")), &view); err != nil {
		t.Fatalf("routes %s -o json: %v", network, err)
	}
	ix := rows.NewIndex(snap)
	shown := map[string][]string{}
	for _, r := range view.Routers {
		for _, rt := range r.Routes {
			shown[r.Name] = append(shown[r.Name], rt.Prefix+" via "+rt.Nexthop)
		}
	}
	for _, r := range networkRouters(snap, ovnName) {
		var want []string
		for _, key := range r.StaticRoutes {
			rt := ix.Routes[key]
			want = append(want, asListed(rt.IPPrefix)+" via "+rt.Nexthop)
		}
		got := shown[r.Name]
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("routes %s --node %s, router %s: shows %v; the NB holds %v", network, node, r.Name, got, want)
		}
	}
}
