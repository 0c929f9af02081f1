package validation_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/api/v1/validation"
	"github.com/ovnk/ovnk/test/testenv"
)

// These tests are the proof that this package mirrors the CRDs: every object is given
// both to the Go validator and, with a server-side dry run, to a real kube-apiserver
// running the generated CRDs (installed by testenv from pkg/manifests), and the two
// must agree on whether it is valid and on which fields are wrong.

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// server is the shared API server with a typed client.
type server struct {
	client client.Client
	ns     string
}

func newServer(t *testing.T) *server {
	t.Helper()
	k := testenv.SharedKube(t)
	scheme := runtime.NewScheme()
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(k.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return &server{client: c, ns: k.Namespace(t)}
}

// verdict is what the server answers to a dry-run create: nil when it accepts, else
// the fields it names. Anything but acceptance or an Invalid answer fails the test.
func (s *server) verdict(t *testing.T, obj client.Object) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.client.Create(ctx, obj, client.DryRunAll)
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("create %s: want success or an Invalid error, got: %v", obj.GetName(), err)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		// The API server adds a cause without a field when it skipped the CEL rules
		// because the schema failed; the validator skips them silently.
		if c.Field != "" && c.Field != "<nil>" {
			fields = append(fields, c.Field)
		}
	}
	return normalise(fields), err
}

// goVerdict runs this package's validator on a UserDefinedNetwork or
// ClusterUserDefinedNetwork.
func goVerdict(t *testing.T, obj client.Object) ([]string, field.ErrorList) {
	t.Helper()
	var errs field.ErrorList
	switch o := obj.(type) {
	case *ovnkv1.UserDefinedNetwork:
		errs = validation.UserDefinedNetwork(o)
	case *ovnkv1.ClusterUserDefinedNetwork:
		errs = validation.ClusterUserDefinedNetwork(o)
	default:
		t.Fatalf("no validator for %T", obj)
	}
	fields := make([]string, len(errs))
	for i, e := range errs {
		fields[i] = e.Field
	}
	return normalise(fields), errs
}

// normalise sorts field paths and drops repeats: both sides may name a field twice.
func normalise(fields []string) []string {
	sort.Strings(fields)
	return slices.Compact(fields)
}

// sample is a UserDefinedNetwork or ClusterUserDefinedNetwork of pkg/api/v1/testdata.
type sample struct {
	path   string
	obj    client.Object
	expect string // the "# expect:" text of an invalid sample
}

// networkSamples reads the network samples of ../testdata/<dir>; the other kinds
// (ClusterNetworkConnect, EgressIP, RouteAdvertisements) are not this package's.
func networkSamples(t *testing.T, dir string) []sample {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no samples in ../testdata/%s: %v", dir, err)
	}
	var out []sample
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var obj client.Object
		switch tm.Kind {
		case "UserDefinedNetwork":
			obj = &ovnkv1.UserDefinedNetwork{}
		case "ClusterUserDefinedNetwork":
			obj = &ovnkv1.ClusterUserDefinedNetwork{}
		default:
			continue
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, sample{path: p, obj: obj, expect: expectLine(data)})
	}
	if len(out) == 0 {
		t.Fatalf("no network samples in ../testdata/%s", dir)
	}
	return out
}

func expectLine(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "# expect:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func (s *server) place(obj client.Object) {
	if _, ok := obj.(*ovnkv1.UserDefinedNetwork); ok {
		obj.SetNamespace(s.ns)
	}
}

func TestValidSamplesAcceptedByBoth(t *testing.T) {
	s := newServer(t)
	for _, smp := range networkSamples(t, "valid") {
		t.Run(filepath.Base(smp.path), func(t *testing.T) {
			s.place(smp.obj)
			if _, errs := goVerdict(t, smp.obj); len(errs) > 0 {
				t.Errorf("the Go validator refuses it: %v", errs.ToAggregate())
			}
			if _, err := s.verdict(t, smp.obj); err != nil {
				t.Errorf("the API server refuses it: %v", err)
			}
			if errs := strict(smp.obj); len(errs) > 0 {
				t.Errorf("the strict checks refuse a valid sample: %v", errs.ToAggregate())
			}
		})
	}
}

func TestInvalidSamplesRefusedByBoth(t *testing.T) {
	s := newServer(t)
	for _, smp := range networkSamples(t, "invalid") {
		t.Run(filepath.Base(smp.path), func(t *testing.T) {
			s.place(smp.obj)
			goFields, errs := goVerdict(t, smp.obj)
			serverFields, err := s.verdict(t, smp.obj)
			if err == nil {
				t.Fatalf("the API server accepts it; the sample expects %q", smp.expect)
			}
			if len(errs) == 0 {
				t.Fatalf("the Go validator accepts it; the API server says: %v", err)
			}
			if !strings.Contains(errs.ToAggregate().Error(), smp.expect) {
				t.Errorf("the Go errors do not contain %q: %v", smp.expect, errs.ToAggregate())
			}
			if !slices.Equal(goFields, serverFields) {
				t.Errorf("fields at fault differ:\n  Go:         %v\n  API server: %v\n  Go errors: %v\n  server: %v", goFields, serverFields, errs.ToAggregate(), err)
			}
		})
	}
}

// TestGeneratedNetworksAgree goes beyond the samples: it builds networks from pools of
// good and bad values for every field the rules read, and requires the same verdict
// and the same fields at fault from the validator and the API server.
func TestGeneratedNetworksAgree(t *testing.T) {
	s := newServer(t)
	rng := rand.New(rand.NewPCG(5, 2024))
	const cases = 400
	accepted := 0
	for i := range cases {
		obj := generate(rng, i)
		s.place(obj)
		goFields, errs := goVerdict(t, obj)
		serverFields, err := s.verdict(t, obj)
		if (len(errs) == 0) != (err == nil) || !slices.Equal(goFields, serverFields) {
			encoded, _ := yaml.Marshal(obj)
			t.Errorf("case %d disagrees:\n%s\n  Go:         %v %v\n  API server: %v %v", i, encoded, goFields, errs.ToAggregate(), serverFields, err)
		}
		if err == nil {
			accepted++
		}
	}
	// The pools must give both outcomes often, or the test proves little.
	if accepted < cases/10 || accepted > cases*9/10 {
		t.Errorf("%d of %d generated networks are valid; adjust the pools so both outcomes are common", accepted, cases)
	}
	t.Logf("%d of %d generated networks valid", accepted, cases)
}

func strict(obj client.Object) field.ErrorList {
	switch o := obj.(type) {
	case *ovnkv1.UserDefinedNetwork:
		return validation.StrictUserDefinedNetwork(o)
	case *ovnkv1.ClusterUserDefinedNetwork:
		return validation.StrictClusterUserDefinedNetwork(o)
	}
	return nil
}

// Pools of values, valid ones first and most often; pick favours the first.
var (
	cidrPool = []ovnkv1.CIDR{
		"10.10.0.0/16", "fd00:10::/48", "10.20.0.0/24", "fd00:20::/64", "10.30.0.1/16", "10.40.0.0/20",
		"10.0.0.0", "300.0.0.0/8", "::ffff:10.0.0.0/104", "fe80::1%eth0/64", "",
		"0000:0000:0000:0000:0000:ffff:255.255.255.255/128",
	}
	hostSubnetPool = []int32{0, 0, 24, 64, 120, 126, 1, 16, 30, 31, 127, 128, -1}
	mtuPool        = []int32{0, 1400, 9000, 576, 1280, 575, 1000, 65536, 65537, -5}
	rolePool       = []ovnkv1.NetworkRole{ovnkv1.NetworkRolePrimary, ovnkv1.NetworkRoleSecondary, "primary", ""}
	topologyPool   = []ovnkv1.NetworkTopology{ovnkv1.NetworkTopologyLayer3, ovnkv1.NetworkTopologyLayer2, "Localnet", ""}
	transportPool  = []ovnkv1.TransportOption{"", ovnkv1.TransportOptionGeneve, ovnkv1.TransportOptionNoOverlay, "VXLAN"}
	snatPool       = []ovnkv1.SNATOption{ovnkv1.SNATEnabled, ovnkv1.SNATDisabled, "Enable", ""}
	routingPool    = []ovnkv1.RoutingOption{ovnkv1.RoutingManaged, ovnkv1.RoutingUnmanaged, "Static", ""}
	ipamModePool   = []ovnkv1.IPAMMode{"", ovnkv1.IPAMEnabled, ovnkv1.IPAMDisabled, "Off"}
	lifecyclePool  = []ovnkv1.NetworkIPAMLifecycle{"", ovnkv1.IPAMLifecyclePersistent, "Forever"}
	namePool       = []string{"net", "net", "net", "Bad_Name"}
)

// pick returns an element of pool, from its first half seven times out of eight.
func pick[T any](rng *rand.Rand, pool []T) T {
	if half := (len(pool) + 1) / 2; rng.IntN(8) > 0 {
		return pool[rng.IntN(half)]
	}
	return pool[rng.IntN(len(pool))]
}

func cidrs(rng *rand.Rand) []ovnkv1.CIDR {
	n := []int{1, 1, 1, 2, 2, 0, 3}[rng.IntN(7)]
	out := make([]ovnkv1.CIDR, n)
	for i := range out {
		out[i] = pick(rng, cidrPool)
	}
	return out
}

func generate(rng *rand.Rand, i int) client.Object {
	topo := pick(rng, topologyPool)
	var l3 *ovnkv1.Layer3Config
	var l2 *ovnkv1.Layer2Config
	// Usually the block of the topology, sometimes the other one, both or neither.
	switch want := rng.IntN(10); {
	case want < 7 && topo == ovnkv1.NetworkTopologyLayer2, want == 7:
		l2 = layer2(rng)
	case want < 7:
		l3 = layer3(rng)
	case want == 8:
		l2, l3 = layer2(rng), layer3(rng)
	}
	meta := metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", pick(rng, namePool), i)}
	if rng.IntN(2) == 0 {
		return &ovnkv1.UserDefinedNetwork{ObjectMeta: meta, Spec: ovnkv1.UserDefinedNetworkSpec{Topology: topo, Layer3: l3, Layer2: l2}}
	}
	spec := ovnkv1.NetworkSpec{Topology: topo, Layer3: l3, Layer2: l2, Transport: pick(rng, transportPool)}
	if rng.IntN(8) == 0 || spec.Transport == ovnkv1.TransportOptionNoOverlay && rng.IntN(5) > 0 {
		spec.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: pick(rng, snatPool), Routing: pick(rng, routingPool)}
	}
	return &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: meta, Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: spec}}
}

func layer3(rng *rand.Rand) *ovnkv1.Layer3Config {
	l := &ovnkv1.Layer3Config{Role: pick(rng, rolePool), MTU: pick(rng, mtuPool)}
	for _, c := range cidrs(rng) {
		l.Subnets = append(l.Subnets, ovnkv1.Layer3Subnet{CIDR: c, HostSubnet: pick(rng, hostSubnetPool)})
	}
	if rng.IntN(4) == 0 {
		l.JoinSubnets = cidrs(rng)
	}
	return l
}

func layer2(rng *rand.Rand) *ovnkv1.Layer2Config {
	l := &ovnkv1.Layer2Config{Role: pick(rng, rolePool), MTU: pick(rng, mtuPool)}
	if rng.IntN(5) > 0 {
		l.Subnets = cidrs(rng)
	}
	if rng.IntN(4) == 0 {
		l.JoinSubnets = cidrs(rng)
	}
	if rng.IntN(3) == 0 {
		l.IPAM = &ovnkv1.IPAMConfig{Mode: pick(rng, ipamModePool), Lifecycle: pick(rng, lifecyclePool)}
	}
	return l
}
