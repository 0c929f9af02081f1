package upgradecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// owned are the external IDs of a row ovnk owns on network cluster_udn_green.
var owned = map[string]string{rows.OwnerControllerKey: rows.OwnerController, rows.NetworkKey: "cluster_udn_green"}

// dumpOf is a zone dump holding router ports of the given names, owned by ovnk on
// cluster_udn_green.
func dumpOf(ports ...string) *ovn.Dump {
	d := &ovn.Dump{SchemaVersion: ovn.DumpSchemaVersion, Tables: map[string][]map[string]any{"Logical_Router_Port": {}}}
	for i, p := range ports {
		d.Tables["Logical_Router_Port"] = append(d.Tables["Logical_Router_Port"], map[string]any{
			"_uuid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "name": p, "external_ids": owned,
		})
	}
	return d
}

// gatedSource answers dumps, holding every caller until zoneReaders of them are in at
// once (or the context ends), and records the most that ever were.
type gatedSource struct {
	dumps map[string]*ovn.Dump
	errs  map[string]error

	mu        sync.Mutex
	active    int
	maxActive int
	calls     int
	full      chan struct{}
	once      sync.Once
}

func (s *gatedSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	s.mu.Lock()
	s.active++
	s.calls++
	s.maxActive = max(s.maxActive, s.active)
	if s.active == zoneReaders {
		s.once.Do(func() { close(s.full) })
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.mu.Unlock()
	}()
	select {
	case <-s.full:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := s.errs[node]; err != nil {
		return nil, err
	}
	if d := s.dumps[node]; d != nil {
		return d, nil
	}
	return dumpOf(), nil
}

// TestReadZonesBounded reads 20 zones: 8 at a time, never more, each node's footprint
// or error in its own Zone, and each agent's phase by its Lease name.
func TestReadZonesBounded(t *testing.T) {
	var nodes []string
	for i := range 20 {
		nodes = append(nodes, fmt.Sprintf("n%02d", i))
	}
	unreachable := errors.New("no ovnk agent pod on node n03")
	src := &gatedSource{
		full:  make(chan struct{}),
		errs:  map[string]error{"n03": unreachable},
		dumps: map[string]*ovn.Dump{"n07": dumpOf("trtos-cluster.udn.green_ovn_layer2_switch", "trtos-cluster.udn.green_ovn_layer2_switch-upgrade")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	zones := readZones(ctx, src, nodes, map[string]l2upgrade.Phase{cluster.HeartbeatLeaseName("n05"): l2upgrade.PhaseLegacy})
	if ctx.Err() != nil {
		t.Fatalf("the reads never had %d zones in flight at once (at most %d)", zoneReaders, src.maxActive)
	}
	if src.maxActive != zoneReaders || src.calls != len(nodes) {
		t.Errorf("%d reads, at most %d at once; want %d, at most %d", src.calls, src.maxActive, len(nodes), zoneReaders)
	}
	if len(zones) != len(nodes) {
		t.Fatalf("%d zones for %d nodes", len(zones), len(nodes))
	}
	if z := zones["n03"]; !errors.Is(z.Err, unreachable) || z.Footprint != nil {
		t.Errorf("n03: %+v, want its read error and no footprint", z)
	}
	if z := zones["n07"]; z.Err != nil || z.Footprint == nil || !z.Footprint.Upgrade["cluster_udn_green"] || !z.Footprint.TransitRouter["cluster_udn_green"] {
		t.Errorf("n07: %+v, want the transit router and upgrade ports of cluster_udn_green", z)
	}
	if z := zones["n01"]; z.Err != nil || z.Footprint == nil || len(z.Footprint.Upgrade)+len(z.Footprint.Legacy)+len(z.Footprint.TransitRouter) != 0 {
		t.Errorf("n01: %+v, want an empty footprint", z)
	}
	if zones["n05"].Agent != l2upgrade.PhaseLegacy || zones["n06"].Agent != "" {
		t.Errorf("agents: n05 %q, n06 %q; want legacy and unknown", zones["n05"].Agent, zones["n06"].Agent)
	}
}

// TestReadZoneBadDump: a dump of another format is the zone's error, naming the node.
func TestReadZoneBadDump(t *testing.T) {
	d := dumpOf()
	d.SchemaVersion = "v0"
	src := &gatedSource{full: make(chan struct{}), dumps: map[string]*ovn.Dump{"n": d}}
	close(src.full)
	z := readZone(context.Background(), src, "n")
	if z.Err == nil || !strings.Contains(z.Err.Error(), "read node n's zone: dump format \"v0\"") || z.Footprint != nil {
		t.Errorf("zone %+v", z)
	}
}

func TestAgentPhases(t *testing.T) {
	lease := func(name string, annotations map[string]string) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	}
	got := agentPhases([]coordinationv1.Lease{
		lease(cluster.HeartbeatLeaseName("a"), map[string]string{cluster.AnnotationLayer2Phase: "legacy"}),
		lease(cluster.HeartbeatLeaseName("b"), map[string]string{cluster.AnnotationLayer2Phase: "blocked", cluster.AnnotationAgentLeader: "maybe"}),
		lease(cluster.HeartbeatLeaseName("c"), nil),
		lease("ovnk-leader", map[string]string{cluster.AnnotationLayer2Phase: "legacy"}),
	})
	want := map[string]l2upgrade.Phase{cluster.HeartbeatLeaseName("a"): "legacy", cluster.HeartbeatLeaseName("b"): "blocked", cluster.HeartbeatLeaseName("c"): ""}
	if len(got) != len(want) {
		t.Errorf("phases %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestWarnings names the nodes and Layer2 networks the state left out, and the Leases
// that could not be read; not the unconfigured default network, nor a Layer3 network.
func TestWarnings(t *testing.T) {
	layer2 := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "green"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{"10.20.0.0/16"}}}},
	}
	layer3 := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "red"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.30.0.0/16", HostSubnet: 24}}}},
	}
	in := &inputs{namespace: "ovnk-system", leaseErr: errors.New(`leases.coordination.k8s.io is forbidden: User "u" cannot list resource "leases"`)}
	in.cluster = cluster.Inputs{
		Nodes: []corev1.Node{
			{ObjectMeta: metav1.ObjectMeta{Name: "ok", Annotations: map[string]string{cluster.AnnotationNodeID: "2", cluster.AnnotationNodeChassisID: "c-ok"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
		},
		CUDNs: []*ovnkv1.ClusterUserDefinedNetwork{layer2},
		UDNs:  []*ovnkv1.UserDefinedNetwork{layer3},
	}
	st, errs := cluster.Build(in.cluster)
	if len(st.Nodes) != 1 || len(st.Networks) != 0 {
		t.Fatalf("state: %d nodes, %d networks; want the ready node and no network", len(st.Nodes), len(st.Networks))
	}
	got := warnings(in, errs)
	want := []string{
		"Layer2 network green is not assessed, nor are its pods: annotation k8s.ovn.org/network-id: not ready: not set yet (ovnk's leader allocates it; upstream OVN-Kubernetes keeps it on the network's NADs)",
		"node new is not counted: annotation k8s.ovn.org/node-id: not ready: not set yet (the leader allocates it); " +
			"annotation k8s.ovn.org/node-chassis-id: not ready: not set yet (the node's agent sets it)",
		`the agents' phases are unknown: cannot list the heartbeat Leases in namespace ovnk-system (set --agent-namespace to the agent's namespace): ` +
			`leases.coordination.k8s.io is forbidden: User "u" cannot list resource "leases"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTimeoutError(t *testing.T) {
	r := l2upgrade.Report{Upgraded: 1, Total: 3, Next: []string{"drain node b", "wait: node c is converting", "roll out x", "check y"}}
	want := "timed out after 30m0s with 1/3 nodes upgraded; still to do: drain node b; wait: node c is converting; roll out x; and 1 more (kubectl ovnk upgrade-status lists them)"
	if got := timeoutError(30*time.Minute, r).Error(); got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}
