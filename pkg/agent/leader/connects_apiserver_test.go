package leader

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// The leader's ClusterNetworkConnect work against the real API server, like
// leader_test.go: each test uses its own labels, so that its connects select only its
// networks, and deletes what it created.

// createConnect creates a connect (a cncFixture) and deletes it at cleanup.
func (e *kubeEnv) createConnect(t *testing.T, c *ovnkv1.ClusterNetworkConnect) {
	t.Helper()
	c.UID, c.CreationTimestamp, c.Generation, c.ResourceVersion = "", metav1.Time{}, 0, ""
	e.create(t, c)
	t.Cleanup(func() { e.remove(t, &ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}) })
}

// createLabelledCUDN creates a ClusterUserDefinedNetwork with labels for the namespaces
// and deletes it at cleanup.
func (e *kubeEnv) createLabelledCUDN(t *testing.T, name string, labels map[string]string, spec ovnkv1.NetworkSpec, namespaces ...string) {
	t.Helper()
	c := cudn(name, 0, spec, namespaces...)
	c.CreationTimestamp, c.Generation, c.ResourceVersion, c.Labels = metav1.Time{}, 0, "", labels
	e.create(t, c)
	t.Cleanup(func() { e.remove(t, &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
}

// setLabels replaces an object's labels.
func (e *kubeEnv) setLabels(t *testing.T, obj client.Object, labels map[string]string) {
	t.Helper()
	patch := `{"metadata":{"labels":null}}`
	if labels != nil {
		patch = fmt.Sprintf(`{"metadata":{"labels":%s}}`, mustJSON(labels))
	}
	if err := e.c.Patch(context.Background(), obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatalf("label %s: %v", describe(obj), err)
	}
}

func mustJSON(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%q:%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// connectState is what the leader wrote on a connect.
type connectState struct {
	key    int
	blocks map[string][]netip.Prefix // by owner key
	cnc    *ovnkv1.ClusterNetworkConnect
}

// connectState reads a connect; an error until it has a router key and want blocks.
func (e *kubeEnv) connectState(ctx context.Context, name string, want int) (connectState, error) {
	c := &ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.get(ctx, c); err != nil {
		return connectState{}, err
	}
	st := connectState{cnc: c}
	var ok bool
	var err error
	if st.key, ok, err = cluster.ConnectTunnelKeyCodec.Lookup(connectRef(c), c.Annotations); err != nil || !ok {
		return st, fmt.Errorf("connect %s has no router key yet (%v)", name, err)
	}
	if st.blocks, _, err = cluster.ConnectSubnetsCodec.Lookup(connectRef(c), c.Annotations); err != nil || len(st.blocks) != want {
		return st, fmt.Errorf("connect %s has blocks %v, want %d (%v)", name, st.blocks, want, err)
	}
	return st, nil
}

// waitAccepted waits until the connect's Accepted condition is want: "Status Reason:
// message" (a function of the connect as read).
func (e *kubeEnv) waitAccepted(t *testing.T, name string, want func(c *ovnkv1.ClusterNetworkConnect) string) *ovnkv1.ClusterNetworkConnect {
	t.Helper()
	c := &ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: name}}
	eventually(t, "condition Accepted of "+name, func(ctx context.Context) error {
		if err := e.get(ctx, c); err != nil {
			return err
		}
		if got, w := acceptedOf(c), want(c); got != w {
			return fmt.Errorf("Accepted is\n%s\nwant\n%s", got, w)
		}
		return nil
	})
	return c
}

// waitWarning waits for the Warning event the leader reports with a False Accepted
// condition.
func (e *kubeEnv) waitWarning(t *testing.T, name string, cond *metav1.Condition) {
	t.Helper()
	eventually(t, "a Warning event on "+name, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.c.List(ctx, &events); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.Regarding.Kind == "ClusterNetworkConnect" && ev.Regarding.Name == name && ev.Type == corev1.EventTypeWarning &&
				ev.Reason == cond.Reason && ev.Note == cond.Message && ev.Action == "ConnectNetworks" && ev.ReportingController == "ovnk-leader-test" {
				return nil
			}
		}
		return fmt.Errorf("no Warning event %s %q about %s among %d events", cond.Reason, cond.Message, name, len(events.Items))
	})
}

// networkOf reads a network object's name, owner key and tunnel keys; an error until its
// id is set.
func (e *kubeEnv) networkOf(ctx context.Context, obj client.Object) (name, ownerKey string, keys []int, err error) {
	if err := e.get(ctx, obj); err != nil {
		return "", "", nil, err
	}
	id, keys, err := networkIDs(obj)
	if err != nil {
		return "", "", nil, err
	}
	topology := cluster.Layer3
	switch o := obj.(type) {
	case *ovnkv1.ClusterUserDefinedNetwork:
		name = cluster.CUDNNetworkName(o.Name)
		if o.Spec.Network.Topology == ovnkv1.NetworkTopologyLayer2 {
			topology = cluster.Layer2
		}
	case *ovnkv1.UserDefinedNetwork:
		name = cluster.UDNNetworkName(o.Namespace, o.Name)
		if o.Spec.Topology == ovnkv1.NetworkTopologyLayer2 {
			topology = cluster.Layer2
		}
	}
	return name, cluster.NetworkOwnerKeyOf(topology, id), keys, nil
}

// dualBlocks are the blocks of index i of 192.168.0.0/16 by /24 and fd00:10::/112 by /120.
func dualBlocks(i int) []netip.Prefix {
	return []netip.Prefix{
		netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 168, byte(i), 0}), 24),
		pfx(fmt.Sprintf("fd00:10::%x/120", i<<8)),
	}
}

func TestLeaderConnects(t *testing.T) {
	e := newKubeEnv(t)
	ctx := context.Background()
	sfx := suffix()
	sel := map[string]string{"ovnk.test/connect": sfx}
	e.createNodes(t, "cnc-n1-"+sfx, "cnc-n2-"+sfx)
	nsL3, nsL2, nsUDN, nsNext := e.kube.Namespace(t), e.kube.Namespace(t), e.kube.Namespace(t), e.kube.Namespace(t)
	l3Name, l2Name := "cnc-l3-"+sfx, "cnc-l2-"+sfx
	e.createLabelledCUDN(t, l3Name, sel, l3(ovnkv1.NetworkRolePrimary, "10.110.0.0/16", 24), nsL3)
	e.createLabelledCUDN(t, l2Name, sel, l2(ovnkv1.NetworkRolePrimary, "10.210.0.0/16", "fd10:210::/64"), nsL2)
	u := udn(nsUDN, "net", 0, l3(ovnkv1.NetworkRolePrimary, "10.160.0.0/16", 24))
	u.CreationTimestamp, u.Generation, u.ResourceVersion = metav1.Time{}, 0, ""
	e.create(t, u)
	t.Cleanup(func() { e.remove(t, u) })
	e.setLabels(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsUDN}}, sel)

	stop := e.startLeader(t)
	outer := t // the restarted leader runs until the end of the test, not of a subtest

	// The connect comes once the networks are created, so that one pass connects them
	// all: in the order of their names, each with the lowest free block.
	networkObjs := []client.Object{
		&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: l3Name}},
		&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: l2Name}},
		&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: nsUDN, Name: "net"}},
	}
	type connected struct{ name, ownerKey string }
	var nets []connected
	eventually(t, "the networks' ids", func(ctx context.Context) error {
		nets = nil
		for _, obj := range networkObjs {
			n, key, _, err := e.networkOf(ctx, obj)
			if err != nil {
				return err
			}
			nets = append(nets, connected{n, key})
		}
		return nil
	})
	slices.SortFunc(nets, func(a, b connected) int { return strings.Compare(a.name, b.name) })
	name := "cnc-" + sfx
	c := cncFixture(name, 0, byLabels(sel, sel), connectSubnet("192.168.0.0/16", 24), connectSubnet("fd00:10::/112", 120))
	c.Spec.Connectivity = append(c.Spec.Connectivity, ovnkv1.ConnectivityClusterIPServiceNetwork)
	e.createConnect(t, c)
	var st connectState
	eventually(t, "the networks' blocks and the router key", func(ctx context.Context) error {
		var err error
		st, err = e.connectState(ctx, name, len(networkObjs))
		return err
	})
	// The router's key is one no network has.
	for i, n := range nets {
		if got := st.blocks[n.ownerKey]; !slices.Equal(got, dualBlocks(i)) {
			t.Errorf("network %s (%s) has blocks %v, want %v", n.name, n.ownerKey, got, dualBlocks(i))
		}
	}
	if st.key < alloc.FirstAllocatedTunnelKey {
		t.Errorf("router key %d is in the range derived from network ids", st.key)
	}
	for _, obj := range e.networkObjects(ctx, t) {
		if _, keys, err := networkIDs(obj); err == nil && slices.Contains(keys, st.key) {
			t.Errorf("router key %d is also a key of %s: %v", st.key, describe(obj), keys)
		}
	}
	acceptedMessage := func(nets []connected, blocks map[string][]netip.Prefix, key int) string {
		var named []string
		for _, n := range nets {
			b := blocks[n.ownerKey]
			named = append(named, fmt.Sprintf("%q %s and %s", n.name, b[0], b[1]))
		}
		return fmt.Sprintf("True Allocated: connects %d networks through connect router tunnel key %d: %s; "+
			"ClusterIPServiceNetwork connectivity is accepted, but only pod connectivity is programmed: ovnk does not program services yet",
			len(nets), key, strings.Join(named, ", "))
	}
	e.waitAccepted(t, name, func(*ovnkv1.ClusterNetworkConnect) string { return acceptedMessage(nets, st.blocks, st.key) })

	t.Run("ready once every zone reports it", func(t *testing.T) {
		ready := func(want string) {
			t.Helper()
			eventually(t, "condition Ready "+want, func(ctx context.Context) error {
				c := &ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: name}}
				if err := e.get(ctx, c); err != nil {
					return err
				}
				cond := meta.FindStatusCondition(c.Status.Conditions, ConditionConnectReady)
				if cond == nil || fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message) != want {
					return fmt.Errorf("Ready is %+v (status %q)", cond, c.Status.Status)
				}
				wantStatus := ovnkv1.ConnectStatus("") // on its way
				if cond.Status == metav1.ConditionTrue {
					wantStatus = ovnkv1.ConnectStatusSuccess
				}
				if c.Status.Status != wantStatus {
					return fmt.Errorf("status.status is %q with Ready %s, want %q", c.Status.Status, want, wantStatus)
				}
				return nil
			})
		}
		ready(fmt.Sprintf("False Pending: ready on 0/2 nodes; node cnc-n1-%s: no zone report yet; node cnc-n2-%s: no zone report yet", sfx, sfx))
		for _, n := range []string{"cnc-n1-" + sfx, "cnc-n2-" + sfx} {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.AnnotationZoneStatus, fmt.Sprintf(`{%q:""}`, cluster.ConnectZoneStatusKey(name)))
			if err := e.c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				t.Fatal(err)
			}
		}
		ready("True Programmed: ready on 2/2 nodes")
	})

	// The next two steps leave a gap among the blocks: a new leader that allocated
	// afresh instead of resuming would move the networks after it.
	l3Obj := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: l3Name}}
	_, l3Key, _, err := e.networkOf(ctx, l3Obj)
	if err != nil {
		t.Fatal(err)
	}
	freed := st.blocks[l3Key]
	if slices.Equal(freed, dualBlocks(len(networkObjs)-1)) {
		t.Fatalf("%s has the last block, which leaves no gap", l3Name)
	}
	t.Run("a disconnected network's block is released", func(t *testing.T) {
		e.setLabels(t, l3Obj, nil)
		eventually(t, "the disconnected network's block released", func(ctx context.Context) error {
			got, err := e.connectState(ctx, name, len(networkObjs)-1)
			if err == nil && got.blocks[l3Key] != nil {
				err = fmt.Errorf("%s still has blocks %v", l3Key, got.blocks[l3Key])
			}
			return err
		})
	})

	t.Run("a new leader resumes and gives the freed block to the next network", func(t *testing.T) {
		stop()
		e.startLeader(outer)
		next := "cnc-next-" + sfx
		e.createLabelledCUDN(outer, next, sel, l2(ovnkv1.NetworkRolePrimary, "10.211.0.0/16"), nsNext)
		var after connectState
		var nextKey string
		eventually(t, "the next network's block", func(ctx context.Context) error {
			var err error
			if _, nextKey, _, err = e.networkOf(ctx, &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: next}}); err != nil {
				return err
			}
			after, err = e.connectState(ctx, name, len(networkObjs))
			return err
		})
		if after.key != st.key {
			t.Errorf("the router key changed from %d to %d", st.key, after.key)
		}
		for key, b := range st.blocks {
			if key != l3Key && !slices.Equal(after.blocks[key], b) {
				t.Errorf("the blocks of %s changed from %v to %v", key, b, after.blocks[key])
			}
		}
		if got := after.blocks[nextKey]; !slices.Equal(got, freed) {
			t.Errorf("the next network got %v, want %v, the lowest free, which the disconnected one left", got, freed)
		}
	})
}

// TestLeaderConnectProblems: what cannot be connected is reported in condition Accepted
// and a Warning event, with one message naming the values.
func TestLeaderConnectProblems(t *testing.T) {
	e := newKubeEnv(t)
	sfx := suffix()
	e.createNodes(t, "cncp-n1-"+sfx)
	highest := "cncp-high-" + sfx
	e.create(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: highest, Annotations: map[string]string{cluster.AnnotationNodeID: "12"}}})
	t.Cleanup(func() { e.remove(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: highest}}) })
	e.startLeader(t)
	primary := ovnkv1.NetworkRolePrimary
	label := func(c string) map[string]string { return map[string]string{"ovnk.test/connect": c + "-" + sfx} }
	keyOf := func(c *ovnkv1.ClusterNetworkConnect) string {
		return c.Annotations[cluster.AnnotationConnectRouterTunnelKey]
	}
	failed := func(t *testing.T, c *ovnkv1.ClusterNetworkConnect) {
		t.Helper()
		cond := meta.FindStatusCondition(c.Status.Conditions, ConditionConnectAccepted)
		e.waitWarning(t, c.Name, cond)
		if c.Status.Status != ovnkv1.ConnectStatusFailure {
			t.Errorf("status.status is %q, want %s", c.Status.Status, ovnkv1.ConnectStatusFailure)
		}
	}

	t.Run("a secondary network", func(t *testing.T) {
		ns, nsSec := e.kube.Namespace(t), e.kube.Namespace(t)
		p, s := "cncp-p-"+sfx, "cncp-s-"+sfx
		e.createLabelledCUDN(t, p, label("sec"), l3(primary, "10.111.0.0/16", 24), ns)
		e.createLabelledCUDN(t, s, label("sec"), l2(ovnkv1.NetworkRoleSecondary, "10.51.0.0/24"), nsSec)
		e.createConnect(t, cncFixture("cncp-sec-"+sfx, 0, byLabels(label("sec"), nil), connectSubnet("192.168.0.0/16", 24)))
		c := e.waitAccepted(t, "cncp-sec-"+sfx, func(c *ovnkv1.ClusterNetworkConnect) string {
			return fmt.Sprintf(`False NetworkRefused: network "cluster_udn_%s" is not connected: a secondary network cannot be connected; only primary networks can; `+
				`connects 1 network through connect router tunnel key %s: "cluster_udn_%s" 192.168.0.0/24`, s, keyOf(c), p)
		})
		failed(t, c)
	})

	t.Run("a connect subnet overlapping the service subnet", func(t *testing.T) {
		e.createLabelledCUDN(t, "cncp-svc-"+sfx, label("svc"), l3(primary, "10.111.0.0/16", 24), e.kube.Namespace(t))
		e.createConnect(t, cncFixture("cncp-svc-"+sfx, 0, byLabels(label("svc"), nil), connectSubnet("10.96.0.0/16", 24)))
		c := e.waitAccepted(t, "cncp-svc-"+sfx, func(*ovnkv1.ClusterNetworkConnect) string {
			return "False ConnectSubnetOverlap: connect subnet 10.96.0.0/16 overlaps service subnet 10.96.0.0/16, so nothing is connected; " +
				"delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), overlapping none of the cluster's subnets"
		})
		failed(t, c)
		if len(c.Annotations) != 0 {
			t.Errorf("the refused connect has annotations %v", c.Annotations)
		}
	})

	t.Run("a connect subnet too small for the networks", func(t *testing.T) {
		for i, cidr := range []ovnkv1.CIDR{"10.113.0.0/16", "10.114.0.0/16", "10.115.0.0/16"} {
			name := fmt.Sprintf("cncp-small%d-%s", i, sfx)
			e.createLabelledCUDN(t, name, label("small"), l3(primary, cidr, 24), e.kube.Namespace(t))
			// Created before the connect, so that one pass connects them in name order.
			eventually(t, "the id of "+name, func(ctx context.Context) error {
				_, _, _, err := e.networkOf(ctx, &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}})
				return err
			})
		}
		e.createConnect(t, cncFixture("cncp-small-"+sfx, 0, byLabels(label("small"), nil), connectSubnet("192.168.0.0/25", 26)))
		c := e.waitAccepted(t, "cncp-small-"+sfx, func(c *ovnkv1.ClusterNetworkConnect) string {
			return fmt.Sprintf(`False ConnectSubnetTooSmall: connect subnet 192.168.0.0/25 holds 2 blocks of /26 (64 addresses each), but 3 networks are connected: they need 3 × 64 = 192 addresses; `+
				`network "cluster_udn_cncp-small2-%s" has no block; delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), larger, or select fewer networks; `+
				`connects 2 networks through connect router tunnel key %s: "cluster_udn_cncp-small0-%s" 192.168.0.0/26, "cluster_udn_cncp-small1-%s" 192.168.0.64/26`, sfx, keyOf(c), sfx, sfx)
		})
		failed(t, c)
	})

	t.Run("blocks too small for the node ids", func(t *testing.T) {
		e.createLabelledCUDN(t, "cncp-ids-"+sfx, label("ids"), l3(primary, "10.116.0.0/16", 24), e.kube.Namespace(t))
		e.createConnect(t, cncFixture("cncp-ids-"+sfx, 0, byLabels(label("ids"), nil), connectSubnet("192.168.0.0/24", 28)))
		c := e.waitAccepted(t, "cncp-ids-"+sfx, func(c *ovnkv1.ClusterNetworkConnect) string {
			return fmt.Sprintf(`False BlockTooSmall: blocks of /28 hold 8 links, for node ids 0 to 7, but node %s has id 12: a Layer3 network needs 26 addresses in its block, 2 per node id from 0 to 12, `+
				`so nodes with ids above 7 are not connected; delete this ClusterNetworkConnect and create it again with networkPrefix 27 for 192.168.0.0/24 or less; `+
				`connects 1 network through connect router tunnel key %s: "cluster_udn_cncp-ids-%s" 192.168.0.0/28`, highest, keyOf(c), sfx)
		})
		failed(t, c)
	})

	t.Run("connects sharing a network with overlapping subnets", func(t *testing.T) {
		e.createLabelledCUDN(t, "cncp-shared-"+sfx, label("shared"), l3(primary, "10.117.0.0/16", 24), e.kube.Namespace(t))
		older, younger := "cncp-a-"+sfx, "cncp-b-"+sfx
		e.createConnect(t, cncFixture(older, 0, byLabels(label("shared"), nil), connectSubnet("172.30.0.0/16", 24)))
		olderObj := e.waitAccepted(t, older, func(c *ovnkv1.ClusterNetworkConnect) string {
			return fmt.Sprintf(`True Allocated: connects 1 network through connect router tunnel key %s: "cluster_udn_cncp-shared-%s" 172.30.0.0/24`, keyOf(c), sfx)
		})
		e.createConnect(t, cncFixture(younger, 0, byLabels(label("shared"), nil), connectSubnet("172.30.128.0/17", 24)))
		c := e.waitAccepted(t, younger, func(c *ovnkv1.ClusterNetworkConnect) string {
			// Both are likely created in the same second: then the name decides.
			precedence := "was created first"
			if olderObj.CreationTimestamp.Equal(&c.CreationTimestamp) {
				precedence = "was created in the same second and comes first by name"
			}
			return fmt.Sprintf(`False ConnectSubnetConflict: connect subnet 172.30.128.0/17 overlaps connect subnet 172.30.0.0/16 of ClusterNetworkConnect %q, `+
				`which %s and also connects network "cluster_udn_cncp-shared-%s", so nothing is connected; `+
				`delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), not overlapping %q's, or select networks %q does not`,
				older, precedence, sfx, older, older)
		})
		failed(t, c)
		if len(c.Annotations) != 0 {
			t.Errorf("the refused connect has annotations %v", c.Annotations)
		}
		e.remove(t, &ovnkv1.ClusterNetworkConnect{ObjectMeta: metav1.ObjectMeta{Name: older}})
		e.waitAccepted(t, younger, func(c *ovnkv1.ClusterNetworkConnect) string {
			return fmt.Sprintf(`True Allocated: connects 1 network through connect router tunnel key %s: "cluster_udn_cncp-shared-%s" 172.30.128.0/24`, keyOf(c), sfx)
		})
	})
}
