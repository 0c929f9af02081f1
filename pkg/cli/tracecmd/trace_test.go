package tracecmd_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cli/tracecmd"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/procutil"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// traceJSON runs `trace args… -o json` and decodes the result.
func (tc *traceCluster) traceJSON(t *testing.T, args ...string) *trace.Result {
	t.Helper()
	out, err := tc.run(t, livezonetest.Plain, append(slices.Clip(args), "-o", "json")...)
	if err != nil {
		t.Fatalf("trace %v: %v", args, err)
	}
	return decode(t, out)
}

func decode(t *testing.T, out string) *trace.Result {
	t.Helper()
	var res trace.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("-o json is not a trace result: %v\n%s", err, out)
	}
	if res.SchemaVersion != trace.SchemaVersion || res.Forward == nil {
		t.Fatalf("result without schema version or forward path:\n%s", out)
	}
	return &res
}

// TestTraceResolvesSourceAndDestination: each way of naming SRC and DST starts the
// packet at the right port with the right addresses, as the forward packet shows.
func TestTraceResolvesSourceAndDestination(t *testing.T) {
	tc := newTraceCluster(t, topologytest.Layer3())
	for _, c := range []struct {
		args             []string
		inport, src, dst string
		proto            string
		dstPort          int
		verdict          trace.VerdictKind
		pod              string // the pod the verdict names
	}{
		// blue/web's primary network is blue; dns is only on the default network, so it
		// is addressed there, and blue does not reach it.
		{[]string{"blue/web", "kube-system/dns"}, "blue.blue_blue_web", "10.10.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, "kube-system/dns"},
		{[]string{"web", "kube-system/dns", "-n", "blue"}, "blue.blue_blue_web", "10.10.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, "kube-system/dns"},
		{[]string{"blue/web", "kube-system/dns", "--network", "default"}, "blue_web", "10.244.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, ""},
		{[]string{"blue/web", "kube-system/dns", "--network", "blue"}, "blue.blue_blue_web", "10.10.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, "kube-system/dns"},
		{[]string{"blue/web", "kube-system/dns", "--network", "cluster_udn_blue"}, "blue.blue_blue_web", "10.10.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, "kube-system/dns"},
		// The network attachment of blue/web's port on the CUDN blue, as its annotation names it.
		{[]string{"blue/web", "kube-system/dns", "--network", "blue/blue"}, "blue.blue_blue_web", "10.10.0.5", "10.244.1.7", "icmp", 0, trace.Dropped, "kube-system/dns"},
		{[]string{"blue/web", "kube-system/dns", "--network", "default", "-6"}, "blue_web", "fd00:10:244:1::5", "fd00:10:244:2::7", "icmp", 0, trace.Dropped, ""},
		// web's default-network port is infrastructure-locked: the isolation ACLs drop
		// what it sends and what default-network pods send it, across zones and on its
		// own node (a verdict of an ACL names no pod), and let only the node (its
		// management port: the kubelet's probes) through.
		{[]string{"kube-system/dns", "blue/web"}, "kube-system_dns", "10.244.1.7", "10.244.0.5", "icmp", 0, trace.Dropped, ""},
		{[]string{"10.244.1.7", "blue/web"}, "kube-system_dns", "10.244.1.7", "10.244.0.5", "icmp", 0, trace.Dropped, ""},
		{[]string{"10.244.1.7", "10.244.0.5", "--proto", "udp", "--port", "53"}, "kube-system_dns", "10.244.1.7", "10.244.0.5", "udp", 53, trace.Dropped, ""},
		{[]string{"fd00:10:244:2::7", "blue/web"}, "kube-system_dns", "fd00:10:244:2::7", "fd00:10:244:1::5", "icmp", 0, trace.Dropped, ""},
		{[]string{"default/client", "blue/web", "--proto", "tcp", "--port", "8080"}, "default_client", "10.244.0.6", "10.244.0.5", "tcp", 8080, trace.Dropped, ""},
		{[]string{"node/node1", "blue/web", "--network", "default", "--proto", "tcp", "--port", "8080"}, "k8s-node1", "10.244.0.2", "10.244.0.5", "tcp", 8080, trace.Delivered, "blue/web"},
		{[]string{"default/client", "kube-system/dns"}, "default_client", "10.244.0.6", "10.244.1.7", "icmp", 0, trace.Delivered, "kube-system/dns"},
		{[]string{"node/node1", "kube-system/dns"}, "k8s-node1", "10.244.0.2", "10.244.1.7", "icmp", 0, trace.Delivered, "kube-system/dns"},
		{[]string{"node/node1", "blue/web", "--network", "blue"}, "k8s-cluster_udn_blue_node1", "10.10.0.2", "10.10.0.5", "icmp", 0, trace.Delivered, "blue/web"},
		{[]string{"kube-system/dns", "node/node1", "--proto", "tcp", "--port", "443"}, "kube-system_dns", "10.244.1.7", "172.18.0.2", "tcp", 443, "", ""},
		{[]string{"kube-system/dns", "8.8.8.8"}, "kube-system_dns", "10.244.1.7", "8.8.8.8", "icmp", 0, trace.LeftCluster, ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			res := tc.traceJSON(t, c.args...)
			p := res.Forward.Packet
			if p.InPort != c.inport || p.IPSrc != c.src || p.IPDst != c.dst || p.Proto != c.proto || p.DstPort != c.dstPort {
				t.Errorf("packet %s %s → %s %s %d, want %s %s → %s %s %d", p.InPort, p.IPSrc, p.IPDst, p.Proto, p.DstPort,
					c.inport, c.src, c.dst, c.proto, c.dstPort)
			}
			v := res.Forward.Verdict
			if c.verdict != "" && (v.Kind != c.verdict || v.Pod != c.pod) {
				t.Errorf("verdict %s (pod %q): %s; want %s (pod %q)", v.Kind, v.Pod, v.Reason, c.verdict, c.pod)
			}
			if (v.Kind == trace.Delivered) != (res.Reply != nil) {
				t.Errorf("verdict %s, reply traced: %v", v.Kind, res.Reply != nil)
			}
		})
	}
	t.Run("--no-reply", func(t *testing.T) {
		if res := tc.traceJSON(t, "kube-system/dns", "blue/web", "--no-reply"); res.Reply != nil {
			t.Errorf("--no-reply traced the reply")
		}
	})
}

// TestTraceLayer2 follows OKEP-5094's network: one switch across the nodes, the
// packet handed from one zone to the other.
func TestTraceLayer2(t *testing.T) {
	tc := newTraceCluster(t, topologytest.OKEP5094())
	res := tc.traceJSON(t, "vm-a", "vm-b", "-n", "test12")
	if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "test12/vm-b" || v.Zone != "ovn-worker" {
		t.Fatalf("verdict %+v", v)
	}
	if res.Reply == nil || res.Reply.Verdict.Pod != "test12/vm-a" || res.Reply.Verdict.Zone != "ovn-control-plane" {
		t.Errorf("reply %+v", res.Reply)
	}
	if res := tc.traceJSON(t, "test12/vm-a", "test12/vm-b", "-6"); res.Forward.Packet.IPDst != "2010:100:200::4" {
		t.Errorf("-6: destination %s", res.Forward.Packet.IPDst)
	}
}

// TestTraceBadInput: each mistake is one line naming the value and what to do, with
// nothing printed besides, and a non-zero exit.
func TestTraceBadInput(t *testing.T) {
	tc := newTraceCluster(t, topologytest.Layer3())
	// A pod the scheduler placed whose addresses are not allocated yet.
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, _ func() time.Time) []*cobra.Command {
		return []*cobra.Command{tracecmd.New(f)}
	})
	h.Create(podOn("blue", "pending", "node1", nil))
	// A pod with addresses whose port its node's zone does not hold yet.
	late, err := cluster.PodNetworksCodec.Format(map[string]cluster.PodInterface{cluster.DefaultNetworkName: {
		IPs: []netip.Prefix{netip.MustParsePrefix("10.244.0.9/24")}, MAC: "0a:58:0a:f4:00:09", Role: cluster.PodRolePrimary,
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(podOn("blue", "late", "node1", map[string]string{cluster.AnnotationPodNetworks: late}))

	noAgents := filepath.Join(t.TempDir(), "ovnk.yaml")
	if err := os.WriteFile(noAgents, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missingSave := filepath.Join(t.TempDir(), "missing.json")
	notSaved := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(notSaved, []byte(`{"schemaVersion": "ovnk.dump/v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"blue/nope", "blue/web"}, nil, []string{`no pod "nope" in namespace "blue"`, "late, pending, web"}},
		{[]string{"blue/late", "kube-system/dns"}, nil, []string{"pod blue/late's port blue_late", "node node1's zone", "kubectl ovnk status"}},
		{[]string{"blue/web", "nope", "-n", "blue"}, nil, []string{`no pod "nope" in namespace "blue"`, "DST", "late, pending, web"}},
		{[]string{"nons/web", "blue/web"}, nil, []string{`unknown namespace "nons"`, "-n"}},
		{[]string{"node/node9", "blue/web"}, nil, []string{`unknown node "node9"`, "node1, node2, node3"}},
		{[]string{"blue/web", "node/"}, nil, []string{`DST "node/"`, "node/NAME"}},
		{[]string{"Web_1", "blue/web"}, nil, []string{`SRC "Web_1"`, "node/NAME"}},
		{[]string{"10.9.9.9", "blue/web"}, nil, []string{"SRC 10.9.9.9 is no pod's address", "node/NAME"}},
		{[]string{"blue/pending", "blue/web"}, nil, []string{"pod blue/pending has no addresses", "scheduled and running"}},
		{[]string{"blue/web", "blue/pending"}, nil, []string{"DST", "pod blue/pending has no addresses"}},
		{[]string{"blue/web", "kube-system/dns", "--network", "red"}, nil, []string{`pod blue/web is not on network "red"; it is on blue, default`}},
		{[]string{"node/node1", "blue/web", "--network", "red"}, nil, []string{"k8s-red_node1", `network "red"`, "topology --node node1"}},
		{[]string{"10.244.1.7", "blue/web", "--network", "default"}, nil, []string{"--network", "10.244.1.7", "name the pod"}},
		{[]string{"blue/web", "8.8.8.8", "-6"}, nil, []string{"-6", "8.8.8.8"}},
		{[]string{"10.244.1.7", "fd00:10:244:1::5"}, nil, []string{"10.244.1.7", "fd00:10:244:1::5", "different IP families"}},
		{[]string{"blue/web", "kube-system/dns", "--proto", "sctp"}, nil, []string{`--proto "sctp"`, "tcp, udp or icmp"}},
		{[]string{"blue/web", "kube-system/dns", "--proto", "tcp"}, nil, []string{"--proto tcp needs --port"}},
		{[]string{"blue/web", "kube-system/dns", "--port", "80"}, nil, []string{"--port", "--proto tcp"}},
		{[]string{"blue/web", "kube-system/dns", "--proto", "udp", "--port", "70000"}, nil, []string{"--port 70000", "1 to 65535"}},
		{[]string{"blue/web"}, nil, []string{"SRC and DST", "got 1"}},
		{[]string{"blue/web", "kube-system/dns", "-o", "name"}, nil, []string{`unknown output format "name"`, "json"}},
		// Without NB endpoints the zones are read through the agent pods, and there are none.
		{[]string{"blue/web", "kube-system/dns"}, map[string]string{"OVNK_PLUGIN_CONFIG": noAgents}, []string{"no ovnk agent pod on node node1"}},
		{[]string{"blue/web", "--from-file", missingSave}, nil, []string{"--from-file replays", "drop blue/web"}},
		{[]string{"--from-file", missingSave, "--proto", "tcp"}, nil, []string{"--from-file", "--proto"}},
		{[]string{"--from-file", missingSave}, nil, []string{"--from-file", "missing.json"}},
		{[]string{"--from-file", notSaved}, nil, []string{notSaved, `"ovnk.dump/v1"`, tracecmd.SnapshotVersion}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			env := tc.env
			if c.env != nil {
				env = c.env
			}
			out, err := livezonetest.Run(t, tc.k, livezonetest.Plain, env, append([]string{"trace"}, c.args...)...)
			clitest.OneLine(t, err, c.want...)
			if out != "" {
				t.Errorf("printed output besides the error:\n%s", out)
			}
		})
	}
	t.Run("unreachable cluster", func(t *testing.T) {
		h.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
		port, err := procutil.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		server := fmt.Sprintf("https://127.0.0.1:%d", port)
		config := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"" + server + "\"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\ncurrent-context: c\n"
		if err := os.WriteFile(h.Kubeconfig, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		h.T, h.Prefix = t, []string{"trace"}
		_, _, err = h.Run("blue/web", "kube-system/dns")
		clitest.OneLine(t, err, "cannot reach the API server at "+server)
	})
}

// TestTraceSaveAndReplay: --save writes the zones the trace read — only those — and
// --from-file replays them, without a cluster, to the same result.
func TestTraceSaveAndReplay(t *testing.T) {
	tc := newTraceCluster(t, topologytest.Layer3())
	file := filepath.Join(t.TempDir(), "trace.json")
	for _, args := range [][]string{
		{"blue/web", "kube-system/dns", "--network", "default", "--proto", "tcp", "--port", "53"},
		{"blue/web", "kube-system/dns"},
		{"node/node1", "blue/web", "--network", "blue", "-6"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			live, err := tc.run(t, livezonetest.Plain, append(slices.Clip(args), "-o", "json", "--save", file)...)
			if err != nil {
				t.Fatal(err)
			}
			replayed, err := runWithoutCluster(t, "--from-file", file, "-o", "json")
			if err != nil {
				t.Fatal(err)
			}
			if replayed != live {
				t.Errorf("the replay differs from the live trace:\nlive:\n%s\nreplay:\n%s", live, replayed)
			}
			liveText, err := tc.run(t, livezonetest.Plain, args...)
			if err != nil {
				t.Fatal(err)
			}
			if text, err := runWithoutCluster(t, "--from-file", file); err != nil || text != liveText {
				t.Errorf("the replayed text differs (%v):\nlive:\n%s\nreplay:\n%s", err, liveText, text)
			}
			var saved struct {
				SchemaVersion string                     `json:"schemaVersion"`
				Request       map[string]any             `json:"request"`
				Zones         map[string]json.RawMessage `json:"zones"`
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &saved); err != nil {
				t.Fatal(err)
			}
			var zones []string
			for z := range saved.Zones {
				zones = append(zones, z)
			}
			slices.Sort(zones)
			if saved.SchemaVersion != tracecmd.SnapshotVersion || saved.Request["src"] != args[0] || saved.Request["dst"] != args[1] {
				t.Errorf("saved %s, request %v", saved.SchemaVersion, saved.Request)
			}
			// The packet never reaches node3: its zone is not read.
			if slices.Contains(zones, "node3") || !slices.Contains(zones, "node1") {
				t.Errorf("saved zones %v: want node1's, and never node3's", zones)
			}
		})
	}
	if out, err := runWithoutCluster(t, "--from-file", file, "--no-reply", "-o", "json"); err != nil || decode(t, out).Reply != nil {
		t.Errorf("--from-file --no-reply: %v\n%s", err, out)
	}
}

// TestTraceGolden pins the text on 80- and 200-column terminals, coloured, and piped
// (the -80 and -200 files without colour: piped, lines are whole at any width), and
// the JSON; the coloured text is the text with NO_COLOR with colour, and every line
// fits the terminal.
func TestTraceGolden(t *testing.T) {
	layer3 := newTraceCluster(t, topologytest.Layer3())
	okep := newTraceCluster(t, topologytest.OKEP5094())
	green := newTraceCluster(t, crossNamespace())
	for _, c := range []struct {
		tc      *traceCluster
		goldens []livezonetest.Golden
	}{
		{layer3, []livezonetest.Golden{
			{Name: "layer3-remote-pod", Args: []string{"default/client", "kube-system/dns"}},
			{Name: "layer3-isolated", Args: []string{"kube-system/dns", "blue/web"}},
			{Name: "layer3-other-network", Args: []string{"blue/web", "kube-system/dns"}},
			// The verdict names the CUDN blue, where blue/web's annotation says blue/blue.
			{Name: "layer3-to-cudn-pod", Args: []string{"kube-system/dns", "10.10.0.5", "--proto", "tcp", "--port", "80"}},
		}},
		{okep, []livezonetest.Golden{{Name: "layer2-remote-pod", Args: []string{"test12/vm-a", "test12/vm-b"}}}},
		{green, []livezonetest.Golden{{Name: "layer2-cross-namespace", Args: []string{"green-a/pod-node1", "green-b/pod-node2", "--no-reply"}}}},
	} {
		livezonetest.GoldensWith(t, "", c.goldens, c.tc.run)
	}
	t.Run("json", func(t *testing.T) {
		out, err := layer3.run(t, livezonetest.Plain, "default/client", "kube-system/dns", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		clitest.Golden(t, "layer3-remote-pod-json", out)
	})
}

// TestTraceCompletes offers the namespace's pods, node/NAME, and NAMESPACE/POD once a
// slash is typed.
func TestTraceCompletes(t *testing.T) {
	tc := newTraceCluster(t, topologytest.Layer3())
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"-n", "blue", ""}, []string{"web", "node/node1", "node/node3"}, []string{"dns"}},
		{[]string{"node/"}, []string{"node/node1", "node/node2"}, []string{"web"}},
		{[]string{"kube-system/"}, []string{"kube-system/dns"}, []string{"node/node1"}},
		{[]string{"blue/web", "kube-system/dns", ""}, nil, []string{"web", "node/node1"}},
		// --network offers the networks as users name them, after SRC and DST too.
		{[]string{"blue/web", "kube-system/dns", "--network", ""}, []string{"default", "blue"}, []string{"blue/blue", "cluster_udn_blue"}},
		{[]string{"--network", "bl"}, []string{"blue"}, []string{"default"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, err := livezonetest.Run(t, tc.k, livezonetest.Plain, tc.env, append([]string{"__complete", "trace"}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range clitest.Lines(out) {
				if !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
					got = append(got, l)
				}
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %v lack %q", got, w)
				}
			}
			for _, n := range c.not {
				if slices.Contains(got, n) {
					t.Errorf("completions %v offer %q", got, n)
				}
			}
		})
	}
}

func TestTraceHelp(t *testing.T) {
	clitest.CheckHelp(t, tracecmd.New(&cmdutil.Factory{IOStreams: genericiooptions.NewTestIOStreamsDiscard()}))
}
