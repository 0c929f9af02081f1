package leader

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// clusterChange is one change to the cluster, made through the API server.
type clusterChange struct {
	name  string
	needs []string // changes that must come first
	do    func(ctx context.Context, api *fakeAPI) error
}

func createChange(name string, obj client.Object, needs ...string) clusterChange {
	return clusterChange{name, needs, func(ctx context.Context, api *fakeAPI) error {
		return api.Create(ctx, asNew(obj.DeepCopyObject().(client.Object)))
	}}
}

func deleteChange(name string, obj client.Object, needs ...string) clusterChange {
	return clusterChange{name, needs, func(ctx context.Context, api *fakeAPI) error {
		return api.Delete(ctx, emptyLike(obj))
	}}
}

// updateChange reads the object afresh, changes it and updates it, as kubectl edit
// does; status changes it through the status subresource.
func updateChange[T client.Object](name string, obj T, status bool, change func(T), needs ...string) clusterChange {
	return clusterChange{name, needs, func(ctx context.Context, api *fakeAPI) error {
		cur := emptyLike(obj).(T)
		if err := api.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return err
		}
		change(cur)
		if status {
			return api.Status().Update(ctx, cur)
		}
		return api.Update(ctx, cur)
	}}
}

// orderPod is a pod bound to a node as the scheduler leaves it: Pending, no addresses.
func orderPod(ns, name, nodeName string) *corev1.Pod {
	p := pod(ns, name, nodeName)
	p.Status = corev1.PodStatus{}
	return asNew(p)
}

var primaryRequired = map[string]string{cluster.LabelPrimaryUDN: ""}

// leaderScenario is the cluster at the start (node n1 and four namespaces) and the
// changes replayed in random orders. They cover what the leader allocates and reports
// on: nodes joining and leaving (ids, transit addresses, node subnets, gateway tunnel
// ids), Layer3 and Layer2 primary networks as CUDNs and UDNs, a secondary network
// deleted and created again under its name, a CUDN whose namespace selector grows, a
// newcomer CUDN conflicting with an established one, pods created, deleted, created
// again under their name and finished, a ClusterNetworkConnect whose networks join it
// by labels, zones reporting, and the networks' NADs: a CUDN over two namespaces, one
// of which holds a NAD of its name that is no network's, and which then leaves the
// other.
//
// The changes are chosen so that the final state is a function of the final cluster
// up to the values allocated (which are the lowest free at the time, so they follow the
// order): every namespace that gets a primary network asks for one by label (else pods
// created before it would keep the default network, as wired pods must), no network
// with wired pods is deleted or deselected, and the conflict is between two CUDNs,
// whose single informer shows the older one first. Between a CUDN and a UDN, the one
// whose informer is ahead could get its id first and would then keep it (an
// established network never loses), which is the rule working, not a difference a
// fresh leader could see.
func leaderScenario() (initial []client.Object, changes []clusterChange) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		n := namespace(name, labels)
		return &n
	}
	initial = []client.Object{
		asNew(node("n1")),
		ns("blue", primaryRequired), ns("green", primaryRequired), ns("red", primaryRequired), ns("plain", nil),
		&nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "plain", Name: "gold"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"gold","type":"bridge"}`}},
	}
	blue := labelled(cudn("blue", 0, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"), colors)
	green := cudn("green", 0, l2(ovnkv1.NetworkRolePrimary, "10.200.0.0/16"), "green")
	// aqua wants namespace blue too: the newcomer must lose, though it sorts first.
	aqua := labelled(cudn("aqua", 0, l3(ovnkv1.NetworkRolePrimary, "10.120.0.0/16", 24), "blue"), colors)
	extra := udn("plain", "extra", 0, l2(ovnkv1.NetworkRoleSecondary, "10.50.0.0/24"))
	gold := cudn("gold", 0, l2(ovnkv1.NetworkRoleSecondary, "10.210.0.0/24"), "plain", "red")
	colorsCNC := cncFixture("colors", 0, byLabels(colors, colors), connectSubnet("192.168.0.0/16", 24), connectSubnet("fd00:10::/112", 120))
	n1, n2, n3 := node("n1"), node("n2"), node("n3")
	plainA, plainB := orderPod("plain", "a", "n1"), orderPod("plain", "b", "n2")
	report := func(n *corev1.Node, green string) clusterChange {
		value := fmt.Sprintf(`{"default":"","cluster_udn_blue":"","cluster_udn_green":%q,"red_net":"","plain_extra":"",%q:""}`,
			green, cluster.ConnectZoneStatusKey("colors"))
		return updateChange(n.Name+" reports its zone", n, false, func(n *corev1.Node) {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[cluster.AnnotationZoneStatus] = value
		})
	}
	changes = []clusterChange{
		createChange("n2 joins", n2),
		createChange("n3 joins", n3),
		deleteChange("n3 leaves", n3, "n3 joins"),
		report(n1, ""),
		withNeeds(report(n2, "no k8s.ovn.org/l3-gateway-config yet"), "n2 joins"),

		createChange("cudn blue", blue),
		updateChange("cudn blue selects teal", blue, false, func(c *ovnkv1.ClusterUserDefinedNetwork) {
			c.Spec.NamespaceSelector.MatchExpressions[0].Values = []string{"blue", "teal"}
		}, "cudn blue"),
		createChange("namespace teal", ns("teal", primaryRequired)),
		createChange("cudn green", green),
		updateChange("cudn green joins colors", green, false, func(c *ovnkv1.ClusterUserDefinedNetwork) { c.Labels = colors }, "cudn green"),
		createChange("udn red/net", udn("red", "net", 0, l3(ovnkv1.NetworkRolePrimary, "10.150.0.0/16", 0))),
		updateChange("namespace red joins colors", ns("red", nil), false, func(n *corev1.Namespace) { n.Labels["connect"] = "colors" }),
		createChange("udn plain/extra", extra),
		deleteChange("udn plain/extra deleted", extra, "udn plain/extra"),
		createChange("udn plain/extra again", extra, "udn plain/extra deleted"),
		createChange("cudn aqua", aqua, "cudn blue"),
		createChange("cnc colors", colorsCNC),
		createChange("cudn gold", gold),
		updateChange("cudn gold leaves red", gold, false, func(c *ovnkv1.ClusterUserDefinedNetwork) {
			c.Spec.NamespaceSelector.MatchExpressions[0].Values = []string{"plain"}
		}, "cudn gold"),

		createChange("pod blue/a", orderPod("blue", "a", "n1")),
		createChange("pod blue/b", orderPod("blue", "b", "n2")),
		createChange("pod green/a", orderPod("green", "a", "n1")),
		createChange("pod green/b", orderPod("green", "b", "n2")),
		createChange("pod red/a", orderPod("red", "a", "n2")),
		createChange("pod plain/a", plainA),
		deleteChange("pod plain/a deleted", plainA, "pod plain/a"),
		createChange("pod plain/a again", orderPod("plain", "a", "n2"), "pod plain/a deleted"),
		createChange("pod plain/b", plainB),
		updateChange("pod plain/b finishes", plainB, true, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, "pod plain/b"),
		createChange("pod teal/a", orderPod("teal", "a", "n1"), "namespace teal"),
	}
	return initial, changes
}

func withNeeds(c clusterChange, needs ...string) clusterChange {
	c.needs = append(c.needs, needs...)
	return c
}

// orderRespecting shuffles the changes, each after those it needs.
func orderRespecting(rng *rand.Rand, changes []clusterChange) []int {
	done := map[string]bool{}
	var order []int
	for len(order) < len(changes) {
		var ready []int
		for i, c := range changes {
			if !done[c.name] && !slices.ContainsFunc(c.needs, func(n string) bool { return !done[n] }) {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			panic("the changes' needs form a cycle or name no change")
		}
		i := ready[rng.IntN(len(ready))]
		done[changes[i].name] = true
		order = append(order, i)
	}
	return order
}

var orderSeeds = flag.Int("order-seeds", 12, "how many orders TestLeaderConvergesWhateverTheEventOrder replays (at most 3 with -short)")

// TestLeaderConvergesWhateverTheEventOrder replays the changes of leaderScenario in
// many orders through the leader's own Reconcile, against fakeAPI. The informers lag
// at random (each kind's pending events are delivered or not at each round, so passes
// see their own writes late and kinds out of step with each other, and writes meet
// conflicts), a pass runs only when a delivered event passes the watches' predicates,
// 0 to 2 rounds run between two changes (so changes also pile up), and the leader
// fails over at random moments. Whatever the order:
//
//   - after every single write, the invariants of invariants.check hold: no value held
//     twice, none used before it is persisted, none changed or lost while its holder
//     lives, no created network uncreated, the newcomer aqua never given an id;
//   - the leader settles, and then a further pass writes nothing, at the end and at
//     random moments on the way (so no change the watches filter out leaves work
//     undone), nor does the first pass of a new leader at the end;
//   - the cluster ends as a fresh leader leaves the final cluster stripped of every
//     annotation and condition the leader writes: the same allocations on the same
//     objects, the same conditions and messages, up to the values allocated (see
//     stateShape), and the same Warning events.
//
// A failure names its seed in the subtest's name and the changes done so far; rerun one
// with -run 'TestLeaderConvergesWhateverTheEventOrder/seed7$', and search more orders
// with -order-seeds.
func TestLeaderConvergesWhateverTheEventOrder(t *testing.T) {
	initial, changes := leaderScenario()
	seeds := *orderSeeds
	if testing.Short() {
		seeds = min(seeds, 3)
	}
	conflicts, failovers := 0, 0
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(uint64(seed), 18))
			order := orderRespecting(rng, changes)
			var done []string
			failf := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("after %q:\n%s", done, fmt.Sprintf(format, args...))
			}

			api := newFakeAPI(t)
			for _, obj := range initial {
				if err := api.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil {
					t.Fatal(err)
				}
			}
			inv := newInvariants(api, "clusteruserdefinednetwork/aqua")
			api.afterWrite = func() {
				if err := inv.check(ctx); err != nil {
					failf("%v", err)
				}
			}
			events := &eventLog{}
			deliver := func(string) bool { return rng.IntN(2) == 0 }
			// quiet checks that a pass due now (a resync's, or a new leader's first)
			// writes nothing and reports nothing.
			quiet := func(l *testLeader, who string) {
				t.Helper()
				writes, reported := api.writes, len(events.events)
				l.queued = true
				if err := l.round(ctx, deliverAll); err != nil {
					failf("%s: %v", who, err)
				}
				if api.writes != writes || len(events.events) != reported {
					n := api.writes - writes
					failf("%s: a pass sent %d writes and reported %q; the writes:\n%s", who, n, events.events[reported:],
						strings.Join(api.patches[max(0, len(api.patches)-n):], "\n"))
				}
			}
			// idle lets the leader settle, and checks that then it has nothing left to
			// do: work an event left undone while the watches let no pass through for
			// it shows here.
			idle := func(l *testLeader, who string) {
				t.Helper()
				if err := l.settle(ctx, deliver); err != nil {
					failf("%s: %v", who, err)
				}
				quiet(l, who)
			}

			l := newTestLeader(t, api, events)
			for _, i := range order {
				if err := changes[i].do(ctx, api); err != nil {
					failf("%s: %v", changes[i].name, err)
				}
				done = append(done, changes[i].name)
				if rng.IntN(8) == 0 {
					l = newTestLeader(t, api, events)
					failovers++
				}
				for range rng.IntN(3) {
					_ = l.round(ctx, deliver) // a failed pass is retried by a later round
				}
				if rng.IntN(4) == 0 {
					idle(l, "the idle leader")
				}
			}
			idle(l, "the leader at the end")
			conflicts += api.conflicts
			quiet(newTestLeader(t, api, events), "a new leader at the end")

			final := mustState(ctx, t, api)
			want, wantEvents := freshLeader(ctx, t, final)
			diffLines(t, "the final state and a fresh leader's (seed "+strconv.Itoa(seed)+")", stateShape(final), want)
			if !strings.Contains(wantEvents, "clusteruserdefinednetwork/aqua PrimaryNetworkConflict") {
				t.Errorf("a fresh leader does not report aqua's conflict; its Warning events:\n%s", wantEvents)
			}
			if got := warningKinds(events); got != wantEvents {
				failf("Warning events\n%s\nwant those of a fresh leader\n%s", got, wantEvents)
			}
		})
	}
	t.Logf("%d writes met a conflict, %d fail-overs", conflicts, failovers)
	if !t.Failed() && (conflicts == 0 || failovers == 0) {
		t.Errorf("no order exercised a conflict (%d) or a fail-over (%d): the lagging cache or the fail-overs are not working", conflicts, failovers)
	}
}

// freshLeader is the oracle: the final cluster without anything the leader writes,
// restored into a new API server, and a new leader run until it settles. It returns
// the resulting stateShape and warningKinds.
func freshLeader(ctx context.Context, t *testing.T, final *snapshot) (string, string) {
	t.Helper()
	api := newFakeAPI(t)
	var objs []client.Object
	for i := range final.namespaces {
		objs = append(objs, &final.namespaces[i])
	}
	for _, ra := range final.ras {
		objs = append(objs, ra)
	}
	for _, nad := range final.nads {
		if cluster.NetworkController(nad) == nil { // the leader's NADs are its writes
			objs = append(objs, nad)
		}
	}
	for _, obj := range append(objs, final.objects()...) {
		obj = obj.DeepCopyObject().(client.Object)
		a := maps.Clone(obj.GetAnnotations())
		maps.DeleteFunc(a, func(k string, _ string) bool { return slices.Contains(leaderOwnedAnnotations, k) })
		obj.SetAnnotations(a)
		switch o := obj.(type) {
		case *ovnkv1.ClusterUserDefinedNetwork:
			o.Status = ovnkv1.ClusterUserDefinedNetworkStatus{}
		case *ovnkv1.UserDefinedNetwork:
			o.Status = ovnkv1.UserDefinedNetworkStatus{}
		case *ovnkv1.ClusterNetworkConnect:
			o.Status = ovnkv1.ClusterNetworkConnectStatus{}
		}
		if err := api.restore(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	inv := newInvariants(api)
	api.afterWrite = func() {
		if err := inv.check(ctx); err != nil {
			t.Fatalf("the fresh leader: %v", err)
		}
	}
	events := &eventLog{}
	if err := newTestLeader(t, api, events).settle(ctx, deliverAll); err != nil {
		t.Fatalf("the fresh leader: %v", err)
	}
	return stateShape(mustState(ctx, t, api)), warningKinds(events)
}

// leaderOwnedAnnotations are the annotations the leader writes.
var leaderOwnedAnnotations = []string{cluster.AnnotationNodeID, cluster.AnnotationNodeTransitSwitchPortIfAddr, cluster.AnnotationNodeSubnets,
	cluster.AnnotationNetworkID, cluster.AnnotationTunnelKeys, cluster.AnnotationPodNetworks,
	cluster.AnnotationConnectSubnets, cluster.AnnotationConnectRouterTunnelKey, cluster.AnnotationLayer2GatewayTunnelIDs}

// warningKinds lists the distinct objects and reasons of the Warning events, sorted.
func warningKinds(l *eventLog) string {
	seen := map[string]bool{}
	for _, e := range l.events {
		obj, rest, _ := strings.Cut(e, " ")
		if typ, rest, _ := strings.Cut(rest, " "); typ == corev1.EventTypeWarning {
			reason, _, _ := strings.Cut(rest, ":")
			seen[obj+" "+reason] = true
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), "\n")
}

// mustState lists every object the leader reads, from the API server itself.
func mustState(ctx context.Context, t *testing.T, api *fakeAPI) *snapshot {
	t.Helper()
	s, err := listState(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listState lists every object the leader reads, from the API server itself.
func listState(ctx context.Context, api *fakeAPI) (*snapshot, error) {
	return (&reconciler{c: api.raw}).snapshot(ctx, true)
}
