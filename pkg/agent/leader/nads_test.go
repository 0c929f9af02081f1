package leader

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// The leader's NetworkAttachmentDefinitions, through its own Reconcile against fakeAPI.

// nadCluster creates node n1, the namespaces and objs, and starts a leader.
func nadCluster(ctx context.Context, t *testing.T, namespaces []string, objs ...client.Object) (*fakeAPI, *testLeader, *eventLog) {
	t.Helper()
	api := newFakeAPI(t)
	for _, name := range namespaces {
		ns := namespace(name, nil)
		mustCreate(ctx, t, api, &ns)
	}
	mustCreate(ctx, t, api, asNew(node("n1")))
	for _, obj := range objs {
		mustCreate(ctx, t, api, obj)
	}
	events := &eventLog{}
	return api, newTestLeader(t, api, events), events
}

func mustCreate(ctx context.Context, t *testing.T, api *fakeAPI, obj client.Object) {
	t.Helper()
	if err := api.Create(ctx, obj); err != nil {
		t.Fatalf("create %s: %v", describe(obj), err)
	}
}

func mustSettle(ctx context.Context, t *testing.T, l *testLeader) {
	t.Helper()
	if err := l.settle(ctx, deliverAll); err != nil {
		t.Fatal(err)
	}
}

// nads lists the API server's NADs by "namespace/name".
func nads(ctx context.Context, t *testing.T, api *fakeAPI) map[string]*nadv1.NetworkAttachmentDefinition {
	t.Helper()
	var list nadv1.NetworkAttachmentDefinitionList
	if err := api.raw.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]*nadv1.NetworkAttachmentDefinition{}
	for i := range list.Items {
		out[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// nadLine prints what the leader writes of a NAD, its ids and config left out: its
// controller, labels, annotations but the ids, and finalizers.
func nadLine(nad *nadv1.NetworkAttachmentDefinition) string {
	var parts []string
	if c := metav1.GetControllerOfNoCopy(nad); c != nil {
		block := c.BlockOwnerDeletion != nil && *c.BlockOwnerDeletion
		parts = append(parts, fmt.Sprintf("controller=%s/%s blockOwnerDeletion=%t", c.Kind, c.Name, block))
	}
	for _, k := range slices.Sorted(maps.Keys(nad.Labels)) {
		parts = append(parts, fmt.Sprintf("label %s=%q", k, nad.Labels[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(nad.Annotations)) {
		if k != cluster.AnnotationNetworkID && k != cluster.AnnotationTunnelKeys {
			parts = append(parts, fmt.Sprintf("annotation %s=%q", k, nad.Annotations[k]))
		}
	}
	parts = append(parts, fmt.Sprintf("finalizers=%v", nad.Finalizers))
	return nad.Namespace + "/" + nad.Name + " " + strings.Join(parts, " ")
}

func nadLines(all map[string]*nadv1.NetworkAttachmentDefinition) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		lines = append(lines, nadLine(all[k]))
	}
	return strings.Join(lines, "\n")
}

// getObj reads obj afresh from the API server.
func getObj[T client.Object](ctx context.Context, t *testing.T, api *fakeAPI, obj T) T {
	t.Helper()
	if err := api.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// checkNADIDs checks that nad carries its network object's ids as upstream writes them.
func checkNADIDs(t *testing.T, nad *nadv1.NetworkAttachmentDefinition, network client.Object, wantKeys string) {
	t.Helper()
	id := network.GetAnnotations()[cluster.AnnotationNetworkID]
	if id == "" || nad.Annotations[cluster.AnnotationNetworkID] != id || nad.Annotations[cluster.AnnotationTunnelKeys] != wantKeys {
		t.Errorf("NAD %s/%s has network-id %q and tunnel-keys %q; want its network's id %q and %q", nad.Namespace, nad.Name,
			nad.Annotations[cluster.AnnotationNetworkID], nad.Annotations[cluster.AnnotationTunnelKeys], id, wantKeys)
	}
	if c := metav1.GetControllerOfNoCopy(nad); c == nil || c.UID != network.GetUID() {
		t.Errorf("NAD %s/%s is controlled by %+v, want %s (uid %s)", nad.Namespace, nad.Name, c, describe(network), network.GetUID())
	}
}

// createdCondition reads a network's NetworkCreated condition: "Status Reason: message".
func createdCondition(t *testing.T, obj client.Object) string {
	t.Helper()
	c := meta.FindStatusCondition(conditionsOf(obj), ovnkv1.ConditionNetworkCreated)
	if c == nil {
		return "missing"
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

// TestLeaderKeepsNADs follows the NADs of a UserDefinedNetwork and a
// ClusterUserDefinedNetwork over two namespaces through their lives: written once
// with the ids, in step with the network's labels, annotations and namespaces, written
// again when deleted by hand, and released (finalizer off, deleted) when the network
// or a namespace goes; a new leader then has nothing to write.
func TestLeaderKeepsNADs(t *testing.T) {
	ctx := context.Background()
	blue := asNew(udn("blue", "net", 0, l3(ovnkv1.NetworkRolePrimary, "10.20.0.0/16", 24)))
	green := asNew(cudn("green", 0, l2(ovnkv1.NetworkRolePrimary, "10.40.0.0/16"), "green", "teal"))
	green.Labels = map[string]string{"team": "a"}
	green.Annotations = map[string]string{"note": "n"}
	api, l, _ := nadCluster(ctx, t, []string{"blue", "green", "teal"}, blue, green)
	mustSettle(ctx, t, l)

	all := nads(ctx, t, api)
	want := `blue/net controller=UserDefinedNetwork/net blockOwnerDeletion=true label k8s.ovn.org/user-defined-network="" annotation k8s.ovn.org/network-name="blue_net" finalizers=[k8s.ovn.org/user-defined-network-protection]
green/green controller=ClusterUserDefinedNetwork/green blockOwnerDeletion=true label k8s.ovn.org/user-defined-network="" label team="a" annotation k8s.ovn.org/network-name="cluster_udn_green" annotation note="n" finalizers=[k8s.ovn.org/user-defined-network-protection]
teal/green controller=ClusterUserDefinedNetwork/green blockOwnerDeletion=true label k8s.ovn.org/user-defined-network="" label team="a" annotation k8s.ovn.org/network-name="cluster_udn_green" annotation note="n" finalizers=[k8s.ovn.org/user-defined-network-protection]`
	diffLines(t, "the NADs", nadLines(all), want)
	blue, green = getObj(ctx, t, api, blue), getObj(ctx, t, api, green)
	checkNADIDs(t, all["blue/net"], blue, "[]") // a Layer3 network's one key derives from its id
	checkNADIDs(t, all["green/green"], green, green.Annotations[cluster.AnnotationTunnelKeys])
	checkNADIDs(t, all["teal/green"], green, green.Annotations[cluster.AnnotationTunnelKeys])
	if keys := green.Annotations[cluster.AnnotationTunnelKeys]; strings.Count(keys, ",") != 1 {
		t.Errorf("the primary Layer2 network has tunnel keys %s, want two", keys)
	}
	wantConfig := `{"cniVersion":"1.0.0","joinSubnet":"100.65.0.0/16,fd99::/64","name":"blue_net","netAttachDefName":"blue/net",` +
		`"role":"primary","subnets":"10.20.0.0/16/24","topology":"layer3","type":"ovn-k8s-cni-overlay"}`
	if got := all["blue/net"].Spec.Config; got != wantConfig {
		t.Errorf("blue/net config\n%s\nwant\n%s", got, wantConfig)
	}
	for _, nad := range all {
		if nad.Generation != 1 {
			t.Errorf("NAD %s/%s is at generation %d: written more than once", nad.Namespace, nad.Name, nad.Generation)
		}
	}

	// The network's labels change and teal is no longer selected; someone annotates
	// green's NAD: an OVN-Kubernetes annotation stays, another goes, as upstream's
	// cluster manager keeps them.
	green.Labels = map[string]string{"team": "b"}
	green.Spec.NamespaceSelector.MatchExpressions[0].Values = []string{"green"}
	if err := api.Update(ctx, green); err != nil {
		t.Fatal(err)
	}
	nad := all["green/green"]
	nad.Annotations["k8s.ovn.org/route-advertisements"] = "x"
	nad.Annotations["extra"] = "y"
	if err := api.Update(ctx, nad); err != nil {
		t.Fatal(err)
	}
	mustSettle(ctx, t, l)
	all = nads(ctx, t, api)
	want = `blue/net controller=UserDefinedNetwork/net blockOwnerDeletion=true label k8s.ovn.org/user-defined-network="" annotation k8s.ovn.org/network-name="blue_net" finalizers=[k8s.ovn.org/user-defined-network-protection]
green/green controller=ClusterUserDefinedNetwork/green blockOwnerDeletion=true label k8s.ovn.org/user-defined-network="" label team="b" annotation k8s.ovn.org/network-name="cluster_udn_green" annotation k8s.ovn.org/route-advertisements="x" annotation note="n" finalizers=[k8s.ovn.org/user-defined-network-protection]`
	diffLines(t, "the NADs after the changes", nadLines(all), want)

	// Deleted by hand, green's NAD is let go and written again.
	old := all["green/green"]
	if err := api.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	if marked := nads(ctx, t, api)["green/green"]; marked == nil || marked.DeletionTimestamp == nil {
		t.Fatalf("the deletion of a NAD with the leader's finalizer did not wait for it: %+v", marked)
	}
	mustSettle(ctx, t, l)
	again := nads(ctx, t, api)["green/green"]
	if again == nil || again.UID == old.UID || again.DeletionTimestamp != nil {
		t.Fatalf("green/green after its deletion by hand: %+v, want a new NAD", again)
	}
	checkNADIDs(t, again, green, green.Annotations[cluster.AnnotationTunnelKeys])

	// The networks go, and their NADs with them (no garbage collector here).
	if err := api.Delete(ctx, emptyLike(blue)); err != nil {
		t.Fatal(err)
	}
	if err := api.Delete(ctx, emptyLike(green)); err != nil {
		t.Fatal(err)
	}
	mustSettle(ctx, t, l)
	if left := nads(ctx, t, api); len(left) != 0 {
		t.Errorf("NADs left after their networks are gone:\n%s", nadLines(left))
	}
}

// TestLeaderLetsNADsGoWithTheirNetwork: a network being deleted in the foreground (as
// kubectl delete --cascade=foreground and Argo CD do) wants no NADs. The garbage
// collector deletes the NADs, which block their owner's deletion: the leader lets each
// go and writes none again, else the collector would delete it again, for ever, and
// the network object would never go. Its NADs the collector has not reached are let
// go too.
func TestLeaderLetsNADsGoWithTheirNetwork(t *testing.T) {
	ctx := context.Background()
	green := asNew(cudn("green", 0, l2(ovnkv1.NetworkRolePrimary, "10.40.0.0/16"), "green", "teal"))
	api, l, _ := nadCluster(ctx, t, []string{"green", "teal"}, green)
	mustSettle(ctx, t, l)
	if n := len(nads(ctx, t, api)); n != 2 {
		t.Fatalf("%d NADs, want 2", n)
	}

	// What the API server does on a foreground deletion: the foregroundDeletion
	// finalizer, then the deletionTimestamp; the object stays while it is there.
	green = getObj(ctx, t, api, green)
	green.Finalizers = append(green.Finalizers, metav1.FinalizerDeleteDependents)
	if err := api.Update(ctx, green); err != nil {
		t.Fatal(err)
	}
	if err := api.Delete(ctx, emptyLike(green)); err != nil {
		t.Fatal(err)
	}
	if green = getObj(ctx, t, api, green); green.DeletionTimestamp == nil {
		t.Fatal("the foreground deletion did not mark the network object")
	}
	// The garbage collector deletes a blocking dependent.
	if err := api.Delete(ctx, emptyLike(nads(ctx, t, api)["green/green"])); err != nil {
		t.Fatal(err)
	}
	seen := len(api.events["NetworkAttachmentDefinition"])
	mustSettle(ctx, t, l)
	for _, ev := range api.events["NetworkAttachmentDefinition"][seen:] {
		if ev.old == nil {
			t.Errorf("the leader created %s for a network being deleted", describe(ev.cur))
		}
	}
	if left := nads(ctx, t, api); len(left) != 0 {
		t.Errorf("NADs left of a network being deleted:\n%s", nadLines(left))
	}

	// The collector, its dependents gone, lets the object go; no NAD is left to write.
	green = getObj(ctx, t, api, green)
	before := green.DeepCopy()
	green.Finalizers = slices.DeleteFunc(green.Finalizers, func(f string) bool { return f == metav1.FinalizerDeleteDependents })
	if err := api.Patch(ctx, green, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	if err := api.Get(ctx, client.ObjectKeyFromObject(green), green); !apierrors.IsNotFound(err) {
		t.Fatalf("the network object, its last finalizer off, is still there (%v): %+v", err, green.ObjectMeta)
	}
	seen = len(api.events["NetworkAttachmentDefinition"])
	mustSettle(ctx, t, l)
	if n := len(api.events["NetworkAttachmentDefinition"]) - seen; n != 0 {
		t.Errorf("%d NAD changes after the network is gone:\n%s", n, nadLines(nads(ctx, t, api)))
	}
}

// TestLeaderQuietAfterNADs: once the NADs are written, neither the leader nor a new
// one writes anything more.
func TestLeaderQuietAfterNADs(t *testing.T) {
	ctx := context.Background()
	api, l, _ := nadCluster(ctx, t, []string{"blue", "green"},
		asNew(udn("blue", "net", 0, l2(ovnkv1.NetworkRoleSecondary, "10.30.0.0/24"))),
		asNew(cudn("green", 0, l3(ovnkv1.NetworkRolePrimary, "10.40.0.0/16", 24), "green", "blue")))
	mustSettle(ctx, t, l)
	if n := len(nads(ctx, t, api)); n != 3 {
		t.Fatalf("%d NADs, want 3", n)
	}
	for _, leader := range []*testLeader{l, newTestLeader(t, api, &eventLog{})} {
		writes := api.writes
		leader.queued = true
		mustSettle(ctx, t, leader)
		if api.writes != writes {
			t.Errorf("a pass over written NADs sent %d writes:\n%s", api.writes-writes, strings.Join(api.patches[max(0, len(api.patches)-(api.writes-writes)):], "\n"))
		}
	}
}

// TestLeaderLeavesForeignNADs: a NAD of a network's name that no network controls is
// left as it is, the network says so in NetworkCreated (and an event) and goes on,
// and its other NADs are written; a UserDefinedNetwork takes its name from a
// ClusterUserDefinedNetwork in its namespace; once the foreign NAD is gone the
// network's own is written.
func TestLeaderLeavesForeignNADs(t *testing.T) {
	ctx := context.Background()
	foreign := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "teal", Name: "green"},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"br","type":"bridge"}`}}
	green := asNew(cudn("green", 0, l2(ovnkv1.NetworkRoleSecondary, "10.40.0.0/16"), "green", "teal"))
	blue := asNew(udn("blue", "net", 0, l3(ovnkv1.NetworkRolePrimary, "10.20.0.0/16", 24)))
	api, l, events := nadCluster(ctx, t, []string{"blue", "green", "teal"}, foreign, green, blue)
	mustSettle(ctx, t, l)

	all := nads(ctx, t, api)
	before := foreign.DeepCopy()
	if got := all["teal/green"]; got.ResourceVersion != before.ResourceVersion || got.Spec.Config != before.Spec.Config || len(got.Finalizers) > 0 {
		t.Errorf("the foreign NAD was written: %+v", got)
	}
	green, blue = getObj(ctx, t, api, green), getObj(ctx, t, api, blue)
	checkNADIDs(t, all["green/green"], green, "[]")
	wantCreated := "False ForeignNetworkAttachmentDefinition: NetworkAttachmentDefinition teal/green exists and is not a network's: " +
		"the leader never writes over a NetworkAttachmentDefinition that is not the network's; delete or rename it for the network's own to be written"
	if got := createdCondition(t, green); got != wantCreated {
		t.Errorf("green NetworkCreated %q, want %q", got, wantCreated)
	}
	if green.Annotations[cluster.AnnotationNetworkID] == "" {
		t.Errorf("green got no id: the network must go on without its NAD in teal")
	}
	if got := createdCondition(t, blue); !strings.HasPrefix(got, "True Allocated") {
		t.Errorf("blue NetworkCreated %q: another network's foreign NAD must not touch it", got)
	}
	if !slices.ContainsFunc(events.events, func(e string) bool {
		return strings.HasPrefix(e, "clusteruserdefinednetwork/green Warning ForeignNetworkAttachmentDefinition: NetworkAttachmentDefinition teal/green")
	}) {
		t.Errorf("no Warning event on green for its foreign NAD: %q", events.events)
	}

	// A UserDefinedNetwork of green's name in namespace green takes the NAD name there.
	udnGreen := asNew(udn("green", "green", 0, l2(ovnkv1.NetworkRoleSecondary, "10.50.0.0/24")))
	mustCreate(ctx, t, api, udnGreen)
	mustSettle(ctx, t, l)
	udnGreen = getObj(ctx, t, api, udnGreen)
	checkNADIDs(t, nads(ctx, t, api)["green/green"], udnGreen, "[]")
	green = getObj(ctx, t, api, green)
	if got := createdCondition(t, green); !strings.Contains(got, "NetworkAttachmentDefinition green/green is userdefinednetwork/green/green's") {
		t.Errorf("green NetworkCreated %q, want it to name the UserDefinedNetwork that has its NAD name in namespace green", got)
	}

	// The foreign NAD goes: green writes its own there.
	if err := api.Delete(ctx, all["teal/green"]); err != nil {
		t.Fatal(err)
	}
	mustSettle(ctx, t, l)
	checkNADIDs(t, nads(ctx, t, api)["teal/green"], green, "[]")
	green = getObj(ctx, t, api, green)
	if got := createdCondition(t, green); strings.Contains(got, "teal/green") {
		t.Errorf("green NetworkCreated %q still names the NAD in teal", got)
	}
}

// upstreamNAD is a NAD as upstream's cluster manager leaves it for network object owner
// in namespace ns, with the ids it allocated: no finalizer of ovnk's concern, another
// configuration.
func upstreamNAD(owner client.Object, kind, ns string, ids map[string]string) *nadv1.NetworkAttachmentDefinition {
	yes := true
	annotations := map[string]string{cluster.AnnotationNetworkName: "upstream"}
	maps.Copy(annotations, ids)
	return &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: owner.GetName(), Annotations: annotations,
			Labels: map[string]string{cluster.LabelUserDefinedNetwork: ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "k8s.ovn.org/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
				Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"upstream","type":"ovn-k8s-cni-overlay"}`},
	}
}

// TestLeaderAdoptsIDsFromNADs starts a leader on networks whose objects have no ids
// but whose NADs carry those upstream allocated: a network whose NADs agree and whose
// ids are free gets them on its object, and its NADs become the leader's; one whose id
// another network holds, and one whose NADs disagree, are refused and their NADs left
// alone.
func TestLeaderAdoptsIDsFromNADs(t *testing.T) {
	ctx := context.Background()
	holder := asNew(udn("ns3", "holder", 0, l2(ovnkv1.NetworkRoleSecondary, "10.70.0.0/24")))
	holder.Annotations = map[string]string{cluster.AnnotationNetworkID: "3", cluster.AnnotationTunnelKeys: "[16711686]"}
	green := asNew(cudn("green", 0, l2(ovnkv1.NetworkRolePrimary, "10.40.0.0/16"), "ns1", "ns2"))
	clash := asNew(udn("ns1", "clash", 0, l2(ovnkv1.NetworkRoleSecondary, "10.80.0.0/24")))
	odd := asNew(cudn("odd", 0, l2(ovnkv1.NetworkRoleSecondary, "10.90.0.0/24"), "ns1", "ns2"))
	api := newFakeAPI(t)
	for _, name := range []string{"ns1", "ns2", "ns3"} {
		ns := namespace(name, nil)
		mustCreate(ctx, t, api, &ns)
	}
	for _, obj := range []client.Object{asNew(node("n1")), holder, green, clash, odd} {
		mustCreate(ctx, t, api, obj)
	}
	greenIDs := map[string]string{cluster.AnnotationNetworkID: "7", cluster.AnnotationTunnelKeys: "[16711690,16715790]"}
	upstream := []*nadv1.NetworkAttachmentDefinition{
		upstreamNAD(green, "ClusterUserDefinedNetwork", "ns1", greenIDs),
		upstreamNAD(green, "ClusterUserDefinedNetwork", "ns2", greenIDs),
		upstreamNAD(clash, "UserDefinedNetwork", "ns1", map[string]string{cluster.AnnotationNetworkID: "3", cluster.AnnotationTunnelKeys: "[]"}),
		upstreamNAD(odd, "ClusterUserDefinedNetwork", "ns1", map[string]string{cluster.AnnotationNetworkID: "8", cluster.AnnotationTunnelKeys: "[]"}),
		upstreamNAD(odd, "ClusterUserDefinedNetwork", "ns2", map[string]string{cluster.AnnotationNetworkID: "9", cluster.AnnotationTunnelKeys: "[]"}),
	}
	for _, nad := range upstream {
		mustCreate(ctx, t, api, nad)
	}
	l := newTestLeader(t, api, &eventLog{})
	mustSettle(ctx, t, l)

	green = getObj(ctx, t, api, green)
	if got := green.Annotations; got[cluster.AnnotationNetworkID] != "7" || got[cluster.AnnotationTunnelKeys] != "[16711690,16715790]" {
		t.Errorf("green's annotations %v, want the NADs' network id 7 and tunnel keys [16711690,16715790]", got)
	}
	if got := createdCondition(t, green); got != "True Allocated: network id 7, tunnel keys 16711690, 16715790" {
		t.Errorf("green NetworkCreated %q", got)
	}
	all := nads(ctx, t, api)
	for _, key := range []string{"ns1/green", "ns2/green"} {
		checkNADIDs(t, all[key], green, "[16711690,16715790]")
		if nad := all[key]; !slices.Contains(nad.Finalizers, cluster.FinalizerUserDefinedNetwork) ||
			nad.Annotations[cluster.AnnotationNetworkName] != "cluster_udn_green" || !strings.Contains(nad.Spec.Config, `"transitSubnet"`) {
			t.Errorf("NAD %s was not made the leader's: %s %s", key, nadLine(nad), nad.Spec.Config)
		}
	}

	clash = getObj(ctx, t, api, clash)
	if got := createdCondition(t, clash); !strings.HasPrefix(got, "False NetworkIDConflict: the ids on NetworkAttachmentDefinition ns1/clash cannot be adopted: network id 3 is taken by \"ns3_holder\"") {
		t.Errorf("clash NetworkCreated %q, want a refusal naming the network that holds id 3", got)
	}
	odd = getObj(ctx, t, api, odd)
	if got := createdCondition(t, odd); !strings.HasPrefix(got, "False UnreadableNetworkAttachmentDefinitionIDs: networkattachmentdefinition/ns2/odd: annotation k8s.ovn.org/network-id: network id 9") {
		t.Errorf("odd NetworkCreated %q, want a refusal naming the NADs that disagree", got)
	}
	for _, obj := range []client.Object{clash, odd} {
		if id, ok := obj.GetAnnotations()[cluster.AnnotationNetworkID]; ok {
			t.Errorf("the refused %s got network id %s", describe(obj), id)
		}
	}
	for _, nad := range upstream[2:] {
		if got := all[nad.Namespace+"/"+nad.Name]; got.ResourceVersion != nad.ResourceVersion {
			t.Errorf("the NAD %s/%s of a refused network was written: %s", nad.Namespace, nad.Name, nadLine(got))
		}
	}
	if got := getObj(ctx, t, api, holder).Annotations[cluster.AnnotationNetworkID]; got != "3" {
		t.Errorf("the holder of id 3 has id %s", got)
	}
}

// TestLeaderAdoptsNoIDsWhileDeleted: a network object being deleted adopts no ids from
// the NADs upstream left, which go with it.
func TestLeaderAdoptsNoIDsWhileDeleted(t *testing.T) {
	ctx := context.Background()
	green := asNew(cudn("green", 0, l2(ovnkv1.NetworkRoleSecondary, "10.40.0.0/24"), "green"))
	green.Finalizers = []string{metav1.FinalizerDeleteDependents}
	api, l, _ := nadCluster(ctx, t, []string{"green"}, green)
	mustCreate(ctx, t, api, upstreamNAD(green, "ClusterUserDefinedNetwork", "green",
		map[string]string{cluster.AnnotationNetworkID: "7", cluster.AnnotationTunnelKeys: "[]"}))
	if err := api.Delete(ctx, emptyLike(green)); err != nil {
		t.Fatal(err)
	}
	mustSettle(ctx, t, l)
	if id := getObj(ctx, t, api, green).Annotations[cluster.AnnotationNetworkID]; id == "7" {
		t.Errorf("green, being deleted, adopted its NAD's network id %s", id)
	}
	if left := nads(ctx, t, api); len(left) != 0 {
		t.Errorf("NADs left of a network being deleted:\n%s", nadLines(left))
	}
}

// TestLeaderWithoutNADCRD: without NetworkAttachmentDefinitions served the networks are
// created all the same and nothing touches NADs; once the CRD comes, the next look
// (at most nadRecheck later) starts writing them.
func TestLeaderWithoutNADCRD(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI(t)
	api.nadsAbsent = true
	ns := namespace("green", nil)
	green := asNew(cudn("green", 0, l3(ovnkv1.NetworkRolePrimary, "10.40.0.0/16", 24), "green"))
	for _, obj := range []client.Object{&ns, asNew(node("n1")), green} {
		mustCreate(ctx, t, api, obj)
	}
	l := newTestLeader(t, api, &eventLog{})
	mustSettle(ctx, t, l)
	green = getObj(ctx, t, api, green)
	if got := createdCondition(t, green); !strings.HasPrefix(got, "True Allocated") {
		t.Fatalf("without NADs served, green NetworkCreated %q", got)
	}
	if n := len(api.events["NetworkAttachmentDefinition"]); n != 0 {
		t.Fatalf("%d NAD changes while NADs are not served", n)
	}

	api.nadsAbsent = false
	l.queued = true
	mustSettle(ctx, t, l)
	if n := len(nads(ctx, t, api)); n != 0 {
		t.Fatalf("%d NADs written before the leader asked again", n)
	}
	api.now = api.now.Add(nadRecheck)
	l.queued = true // the pass the Reconcile's RequeueAfter brings
	mustSettle(ctx, t, l)
	checkNADIDs(t, nads(ctx, t, api)["green/green"], green, "[]")
}

// TestFakeAPIServerNADs holds fakeAPI to what the API server does with the leader's
// NAD writes: finalizers, the delete preconditions, the generation of a spec change,
// and the refusals.
func TestFakeAPIServerNADs(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI(t)
	ns := namespace("ns1", nil)
	mustCreate(ctx, t, api, &ns)
	yes := true
	nad := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "a",
		Finalizers: []string{cluster.FinalizerUserDefinedNetwork}}}

	// Refused: a namespace that does not exist, a bad owner reference, two controllers.
	noNS := nad.DeepCopy()
	noNS.Namespace = "nowhere"
	badOwner := nad.DeepCopy()
	badOwner.OwnerReferences = []metav1.OwnerReference{{Kind: "UserDefinedNetwork", Name: "a", UID: "u"}}
	twoControllers := nad.DeepCopy()
	twoControllers.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "A", Name: "a", UID: "1", Controller: &yes}, {APIVersion: "v1", Kind: "B", Name: "b", UID: "2", Controller: &yes}}
	for what, obj := range map[string]*nadv1.NetworkAttachmentDefinition{"in a missing namespace": noNS, "without the owner's apiVersion": badOwner, "with two controllers": twoControllers} {
		if err := api.Create(ctx, obj); err == nil {
			t.Errorf("a NAD %s was accepted", what)
		}
	}

	mustCreate(ctx, t, api, nad)
	if nad.Generation != 1 {
		t.Errorf("generation %d, want 1", nad.Generation)
	}
	w := &writer{c: api, reader: api}
	config := `{"name":"x"}`
	if err := w.writeNAD(ctx, nadWrite{op: nadUpdate, nad: nad.DeepCopy(), config: &config}); err != nil {
		t.Fatal(err)
	}
	got := getObj(ctx, t, api, nad.DeepCopy())
	if got.Generation != 2 || got.Spec.Config != config {
		t.Errorf("after a config patch: generation %d config %q, want 2 and %q", got.Generation, got.Spec.Config, config)
	}

	// A deletion with the wrong uid is a conflict; with finalizers it only marks.
	uid := got.UID + "x"
	if err := api.Delete(ctx, got.DeepCopy(), &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err == nil {
		t.Errorf("a deletion with another uid as its precondition was accepted")
	}
	if err := api.Delete(ctx, got.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	got = getObj(ctx, t, api, got)
	if got.DeletionTimestamp == nil {
		t.Fatalf("a NAD with a finalizer was deleted at once")
	}
	// No finalizer may be added now; taking the last one off deletes it, as an event.
	add := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":["k8s.ovn.org/user-defined-network-protection","other"]}}`))
	if err := api.Patch(ctx, got.DeepCopy(), add); err == nil {
		t.Errorf("a finalizer was added to a NAD being deleted")
	}
	if err := w.writeNAD(ctx, nadWrite{op: nadRelease, nad: got}); err != nil {
		t.Fatal(err)
	}
	if left := nads(ctx, t, api); len(left) != 0 {
		t.Errorf("the NAD is still there after its last finalizer came off: %v", left)
	}
	evs := api.events["NetworkAttachmentDefinition"]
	if last := evs[len(evs)-1]; last.cur != nil {
		t.Errorf("the last NAD event is not its deletion: %+v", last)
	}

	// Creating in a namespace being deleted is refused.
	term := getObj(ctx, t, api, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}})
	term.Status.Phase = corev1.NamespaceTerminating
	if err := api.Status().Update(ctx, term); err != nil {
		t.Fatal(err)
	}
	if err := api.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "b"}}); err == nil {
		t.Errorf("a NAD was created in a namespace being deleted")
	}
}
