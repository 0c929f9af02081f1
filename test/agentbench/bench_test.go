package agentbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent"
	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/agent/zone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// leaseNamespace holds the leader Lease and the agent's heartbeat Lease.
const leaseNamespace = "ovnk-system"

// zoneArgs are the agent's settings that the benchmark's own compile of the zone
// shares: the node, what shapes the zone, and where the leader Lease is.
func zoneArgs(node string) []string {
	return []string{
		"--config=", // no configuration file: this host's /etc is not the benchmark's
		"--node-name=" + node,
		// The node's own part needs its OVS, Southbound, br-ex and netlink, which are
		// not the figure: the agent programs its Northbound only, and the annotations
		// it would publish about its node come with the Node (clusterObjects).
		"--node-dataplane=false",
		// Dual-stack, as Scale's networks are: with an IPv4-only default network the
		// agent would drop the IPv6 masquerade and service ranges they need.
		"--cluster-subnets=10.244.0.0/16/24,fd00:10:244::/48/64",
		"--leader-election-namespace=" + leaseNamespace,
	}
}

// agentArgs is the agent's command line in the benchmark.
func agentArgs(node, kubeconfig, nbEndpoint, httpAddress, pprofAddress string) []string {
	args := append([]string{"run"}, zoneArgs(node)...)
	return append(args, "--kubeconfig="+kubeconfig, "--nb-address="+nbEndpoint, "--http-address="+httpAddress,
		"--pprof-address="+pprofAddress)
}

// agentConfig is the configuration the agent makes of zoneArgs and this process's
// environment, which the agent inherits.
func agentConfig(node string) (*config.Config, error) {
	fs := pflag.NewFlagSet("ovnk-agent run", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse(zoneArgs(node)); err != nil {
		return nil, fmt.Errorf("parse the agent's flags: %w", err)
	}
	return config.Load(fs, os.Getenv)
}

// BenchmarkAgentZone runs the real ovnk-agent binary for node0000 of a Scale cluster of
// OVNK_BENCH_NODES × OVNK_BENCH_NETWORKS (250 × 250 unless set) held by a real
// kube-apiserver, against an empty real NB, and times it from its start until the NB
// holds its whole zone. Then it reads the agent's peak resident set (VmHWM) from /proc:
// the footprint of the running agent, its informers' cache, compiled zone and NB client
// cache included, which no in-process benchmark sees.
//
// The agent is a follower: a Lease held by an agent that is not running keeps it from
// the leader's work, which every node but one runs without. Given the fixture's pods,
// which carry only their Layer2 network's entry, a leader would rewrite all of them (it
// adds the default network's), turning the figure into one of API writes.
func BenchmarkAgentZone(b *testing.B) {
	nodes, networks := envInt("OVNK_BENCH_NODES", 250), envInt("OVNK_BENCH_NETWORKS", 250)
	k := testenv.SharedKube(b)
	agentPath := testenv.Command(b, "ovnk-agent")
	testenv.NeedOVN(b)
	st := topologytest.Scale(nodes, networks)
	node := st.Nodes[0].Name
	cfg, err := agentConfig(node)
	if err != nil {
		b.Fatal(err)
	}
	objs, err := clusterObjects(st, cfg.DefaultNetwork())
	if err != nil {
		b.Fatal(err)
	}
	scheme, err := agent.Scheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(k.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := createObjects(ctx, c, objs); err != nil {
		b.Fatal(err)
	}
	if err := holdLeaderLease(ctx, c, cfg.LeaderElection.Namespace, cfg.LeaderElection.LeaseName); err != nil {
		b.Fatal(err)
	}
	want, err := expectedZone(ctx, c, cfg, node)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("cluster of %d nodes, %d networks and %d pods created in %s; node %s's zone: %d rows",
		len(objs.Nodes), len(objs.CUDNs), len(objs.Pods), time.Since(begin).Round(time.Second), node, want.rows)

	var peakMiB float64
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nb := testenv.StartNB(b)
		// A report an earlier agent left would pass for this one's.
		if err := removeNodeAnnotation(ctx, c, node, cluster.AnnotationZoneStatus); err != nil {
			b.Fatal(err)
		}
		httpAddress, pprofAddress := localAddress(b), localAddress(b)
		argv := append([]string{agentPath}, agentArgs(node, k.Kubeconfig, nb.Endpoint, httpAddress, pprofAddress)...)
		start := time.Now()
		b.StartTimer()
		p := testenv.StartProcess(b, b.TempDir(), "ovnk-agent", nil, argv...)
		err = testenv.Eventually(ctx, 30*time.Minute, fmt.Sprintf("the agent to apply node %s's zone of %d rows", node, want.rows), func(ctx context.Context) error {
			if done, err := p.Exited(); done {
				return poll.Stop(fmt.Errorf("the agent exited: %v\n%s", err, p.LogTail(20)))
			}
			return applied(ctx, c, node, "http://"+httpAddress+"/metrics", want)
		})
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		usage, err := p.Usage()
		if err != nil {
			b.Fatal(err)
		}
		peakMiB = max(peakMiB, float64(usage.PeakRSS)/(1<<20))
		cpu += usage.CPU
		// How the time went, as the agent counts it: its reconciles (the first applies
		// the zone, the next finds nothing to do), their time, and whether any failed
		// and was retried. With several iterations, these are the last one's.
		// heap-MiB is what the agent's heap holds once the zone is applied: its live
		// rows and caches plus the garbage not yet collected; the peak RSS above it is
		// the garbage of the first compile and apply.
		metricsURL := "http://" + httpAddress + "/metrics"
		for name, unit := range map[string]string{
			"ovnk_zone_reconcile_duration_seconds_sum":   "s/reconciling",
			"ovnk_zone_reconcile_duration_seconds_count": "reconciles",
			"ovnk_zone_reconcile_errors_total":           "failed-reconciles",
			"go_memstats_heap_inuse_bytes":               "heap-MiB",
		} {
			v, err := metric(ctx, metricsURL, name)
			if err != nil {
				b.Fatal(err)
			}
			if unit == "heap-MiB" {
				v /= 1 << 20
			}
			b.ReportMetric(v, unit)
		}
		if path := os.Getenv("OVNK_BENCH_HEAP_PROFILE"); path != "" {
			if err := saveHeapProfile(ctx, "http://"+pprofAddress, path); err != nil {
				b.Fatal(err)
			}
			b.Logf("the agent's heap profile, after a collection, is in %s", path)
		}
		p.Stop()
	}
	b.ReportMetric(peakMiB, "agent-peak-RSS-MiB")
	b.ReportMetric(float64(want.rows), "rows")
	b.ReportMetric(float64(len(objs.Pods)), "pods")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/applied")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "agent-cpu-s")
}

// localAddress is a free 127.0.0.1 port.
func localAddress(b *testing.B) string {
	port, err := procutil.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// saveHeapProfile writes the agent's heap profile, taken after a collection so that it
// shows what is live (go tool pprof -sample_index=inuse_space), to path.
func saveHeapProfile(ctx context.Context, base, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("read the agent's heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("read the agent's heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// createObjects creates the cluster's objects a kind at a time, namespaces first, and
// each kind with a few workers: one at a time, the 31,250 pods of 250 × 250 would each
// wait on a round trip. An object that exists already (the benchmark runs again in the
// same package) is left as it is.
func createObjects(ctx context.Context, c client.Client, objs *objects) error {
	var namespaces, cudns, nodes, pods []client.Object
	for i := range objs.Namespaces {
		namespaces = append(namespaces, &objs.Namespaces[i])
	}
	for i := range objs.CUDNs {
		cudns = append(cudns, &objs.CUDNs[i])
	}
	for i := range objs.Nodes {
		nodes = append(nodes, &objs.Nodes[i])
	}
	for i := range objs.Pods {
		pods = append(pods, &objs.Pods[i])
	}
	for _, kind := range [][]client.Object{namespaces, cudns, nodes, pods} {
		if err := createAll(ctx, c, kind); err != nil {
			return err
		}
	}
	return nil
}

// createAll creates objects with a few workers and returns the first error.
func createAll(ctx context.Context, c client.Client, objects []client.Object) error {
	const workers = 8
	work := make(chan client.Object)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for obj := range work {
				if errs[w] != nil {
					continue // drain: another object's error ends the run
				}
				// A copy: Create fills in the server's fields, and objs stays what
				// clusterObjects made.
				if err := c.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil && !apierrors.IsAlreadyExists(err) {
					errs[w] = fmt.Errorf("create %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
				}
			}
		})
	}
	for _, obj := range objects {
		work <- obj
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// holdLeaderLease gives the leader Lease to an agent that does not run, for long enough
// that the benchmark's agent stays a follower.
func holdLeaderLease(ctx context.Context, c client.Client, namespace, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("an-agent-elsewhere"),
			LeaseDurationSeconds: ptr.To(int32(24 * 3600)),
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}
	if err := c.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the leader Lease %s/%s: %w", namespace, name, err)
	}
	return nil
}

// zoneWanted is what the agent's zone must come to.
type zoneWanted struct {
	// networks are every network's name, which the agent's zone report must list as
	// programmed.
	networks []string
	// rows is how many rows the zone has, which the agent must come to own.
	rows int
}

// expectedZone compiles node's zone from the objects as the API server returns them,
// the way the agent does (zone.ListInputs, cluster.Build, topology.Compile), so the
// benchmark knows when the agent is done and that it did all of it.
func expectedZone(ctx context.Context, c client.Client, cfg *config.Config, node string) (zoneWanted, error) {
	in, err := zone.ListInputs(ctx, c)
	if err != nil {
		return zoneWanted{}, err
	}
	in.Config, in.DefaultNetwork = cfg.ClusterConfig(), cfg.DefaultNetwork()
	st, errs := cluster.Build(in)
	if len(errs) > 0 {
		return zoneWanted{}, fmt.Errorf("the cluster's objects do not build: %w", errors.Join(errs...))
	}
	res, err := topology.Compile(st, node)
	if err != nil {
		return zoneWanted{}, fmt.Errorf("compile node %s's zone: %w", node, err)
	}
	if len(res.NotCompiled) > 0 {
		return zoneWanted{}, fmt.Errorf("node %s's zone leaves networks out: %v", node, res.NotCompiled)
	}
	want := zoneWanted{rows: res.Rows.Len()}
	for _, n := range st.Networks {
		want.networks = append(want.networks, n.Name)
	}
	return want, nil
}

// applied says why the agent's zone is not applied yet: its zone report on the Node
// must list every network as programmed, and its metrics say how many rows it owns
// (counted at the start of a reconcile, so the report's own write, which the agent
// sees as a change of its Node, brings the reconcile that counts them all).
func applied(ctx context.Context, c client.Client, node, metricsURL string, want zoneWanted) error {
	var n corev1.Node
	if err := c.Get(ctx, types.NamespacedName{Name: node}, &n); err != nil {
		return err
	}
	report, ok, err := cluster.ZoneStatusCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: node}, n.Annotations)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("no zone report yet")
	}
	for _, name := range want.networks {
		if why, ok := report[name]; !ok || why != "" {
			return fmt.Errorf("network %s: reported %q (present %t)", name, why, ok)
		}
	}
	owned, err := metric(ctx, metricsURL, "ovnk_zone_owned_rows")
	if err != nil {
		return err
	}
	if int(owned) != want.rows {
		return fmt.Errorf("the agent owns %.0f rows, want %d", owned, want.rows)
	}
	return nil
}

// metric reads one gauge or counter without labels from a Prometheus text page.
func metric(ctx context.Context, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	in := bufio.NewScanner(resp.Body)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for in.Scan() {
		if value, ok := strings.CutPrefix(in.Text(), name+" "); ok {
			return strconv.ParseFloat(value, 64)
		}
	}
	if err := in.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", url, err)
	}
	return 0, fmt.Errorf("%s has no %s", url, name)
}

// removeNodeAnnotation removes an annotation of a node, if it has it.
func removeNodeAnnotation(ctx context.Context, c client.Client, node, key string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: nil}}})
	if err != nil {
		return err
	}
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotate node %s: %w", node, err)
	}
	return nil
}
