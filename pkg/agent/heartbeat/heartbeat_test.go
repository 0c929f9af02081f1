package heartbeat_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent/heartbeat"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// sources are the fake inputs of a Heartbeat: a zone, leadership and the NB connection
// that the test sets.
type sources struct {
	mu         sync.Mutex
	succeeded  time.Time
	err        error
	leader, nb bool
	now        time.Time
}

func (s *sources) zone() (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.succeeded, s.err
}
func (s *sources) leading() bool        { s.mu.Lock(); defer s.mu.Unlock(); return s.leader }
func (s *sources) connected() bool      { s.mu.Lock(); defer s.mu.Unlock(); return s.nb }
func (s *sources) clock() time.Time     { s.mu.Lock(); defer s.mu.Unlock(); return s.now }
func (s *sources) set(f func(*sources)) { s.mu.Lock(); defer s.mu.Unlock(); f(s) }

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newHeartbeat(c client.Client, ns, node string, src *sources) *heartbeat.Heartbeat {
	return &heartbeat.Heartbeat{
		Client: c, Namespace: ns, NodeName: node, Version: "v9.9.9",
		Zone: src.zone, Leader: src.leading, NBConnected: src.connected, Now: src.clock,
	}
}

// getLease reads node's heartbeat Lease.
func getLease(ctx context.Context, t *testing.T, c client.Client, ns, node string) *coordinationv1.Lease {
	t.Helper()
	var lease coordinationv1.Lease
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: cluster.HeartbeatLeaseName(node)}, &lease); err != nil {
		t.Fatalf("get the heartbeat lease: %v", err)
	}
	return &lease
}

// syncFixture is what a Sync test starts from: a context of a minute, a client of the
// shared API server, a namespace of the test's own, and the clock's start.
func syncFixture(t *testing.T) (context.Context, client.Client, string, time.Time) {
	t.Helper()
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx, newClient(t, kube.RESTConfig), kube.Namespace(t), time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
}

// TestSyncWritesOnlyWhenDueOrChanged drives Sync with a test clock against a real API
// server: every change is published at once, and nothing else is written before the
// renewal is due.
func TestSyncWritesOnlyWhenDueOrChanged(t *testing.T) {
	ctx, c, ns, start := syncFixture(t)
	src := &sources{nb: true, now: start}
	hb := newHeartbeat(c, ns, "worker1", src)

	sync := func(wantWrite bool, what string) *coordinationv1.Lease {
		t.Helper()
		wrote, err := hb.Sync(ctx)
		if err != nil {
			t.Fatalf("%s: Sync: %v", what, err)
		}
		if wrote != wantWrite {
			t.Errorf("%s: Sync wrote %t, want %t", what, wrote, wantWrite)
		}
		return getLease(ctx, t, c, ns, "worker1")
	}
	status := func(lease *coordinationv1.Lease) cluster.HeartbeatStatus {
		t.Helper()
		s, err := cluster.ParseHeartbeat(lease)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	lease := sync(true, "first sync")
	if got := ptr.Deref(lease.Spec.HolderIdentity, ""); got != "worker1" {
		t.Errorf("holder %q, want worker1", got)
	}
	if got := ptr.Deref(lease.Spec.LeaseDurationSeconds, 0); got != 40 {
		t.Errorf("leaseDurationSeconds %d, want 40 (four renew intervals of 10s)", got)
	}
	if lease.Labels[cluster.LabelAppComponent] != cluster.HeartbeatComponent || lease.Labels[cluster.LabelAppName] != cluster.AgentAppName {
		t.Errorf("labels %v", lease.Labels)
	}
	s := status(lease)
	if s.Version != "v9.9.9" || s.Leader || !s.NBConnected || !s.LastReconcile.IsZero() || s.LastError != "" || !s.RenewTime.Equal(start) {
		t.Errorf("first heartbeat %+v, want version v9.9.9, not leader, NB connected, never reconciled, renewed at %v", s, start)
	}
	if _, ok := lease.Annotations[cluster.AnnotationLastReconcile]; ok {
		t.Errorf("a zone never reconciled has annotation %s", cluster.AnnotationLastReconcile)
	}
	rv := lease.ResourceVersion

	src.set(func(s *sources) { s.now = start.Add(5 * time.Second) })
	if lease = sync(false, "nothing changed"); lease.ResourceVersion != rv {
		t.Errorf("a sync with nothing to say changed the lease (resourceVersion %s -> %s)", rv, lease.ResourceVersion)
	}

	reconciled := start.Add(6 * time.Second)
	src.set(func(s *sources) { s.now, s.succeeded = reconciled, reconciled })
	if s = status(sync(true, "first reconcile")); !s.LastReconcile.Equal(reconciled) || !s.RenewTime.Equal(reconciled) {
		t.Errorf("after the first reconcile: %+v, want last reconcile and renewal at %v", s, reconciled)
	}

	// A newer reconcile alone waits for the renewal: no churn on a busy zone.
	src.set(func(s *sources) { s.now, s.succeeded = reconciled.Add(time.Second), reconciled.Add(time.Second) })
	if s = status(sync(false, "another reconcile")); !s.LastReconcile.Equal(reconciled) {
		t.Errorf("last reconcile %v, want still %v before the renewal", s.LastReconcile, reconciled)
	}
	renewal := reconciled.Add(heartbeat.DefaultRenewInterval)
	src.set(func(s *sources) { s.now = renewal })
	if s = status(sync(true, "renewal due")); !s.RenewTime.Equal(renewal) || !s.LastReconcile.Equal(reconciled.Add(time.Second)) {
		t.Errorf("after the renewal: %+v, want renewed at %v with the newer reconcile", s, renewal)
	}

	src.set(func(s *sources) {
		s.now, s.err = renewal.Add(time.Second), errors.New("apply zone worker1: NB went away")
	})
	if s = status(sync(true, "reconcile failed")); s.LastError != "apply zone worker1: NB went away" {
		t.Errorf("last error %q after a failed reconcile", s.LastError)
	}
	src.set(func(s *sources) {
		s.now, s.err, s.succeeded = renewal.Add(2*time.Second), nil, renewal.Add(2*time.Second)
	})
	lease = sync(true, "reconcile recovered")
	if _, ok := lease.Annotations[cluster.AnnotationLastError]; ok {
		t.Errorf("annotation %s stays after a successful reconcile", cluster.AnnotationLastError)
	}
	src.set(func(s *sources) { s.now, s.leader, s.nb = renewal.Add(3*time.Second), true, false })
	if s = status(sync(true, "elected, NB lost")); !s.Leader || s.NBConnected {
		t.Errorf("after election and NB loss: leader %t, NB connected %t", s.Leader, s.NBConnected)
	}
	if !s.Fresh(s.RenewTime.Add(40*time.Second)) || s.Fresh(s.RenewTime.Add(41*time.Second)) {
		t.Errorf("the heartbeat renewed at %v is not fresh for exactly 40s", s.RenewTime)
	}
}

// TestSyncReportsOVSReachability: an agent that does the node's own part says whether
// it reaches the node's OVS, and a change is published at once; one that does not
// says nothing, and a leftover annotation goes.
func TestSyncReportsOVSReachability(t *testing.T) {
	ctx, c, ns, start := syncFixture(t)
	src := &sources{nb: true, now: start}
	var mu sync.Mutex
	reachable := true
	hb := newHeartbeat(c, ns, "worker1", src)
	const why = "Open vSwitch database unix:/run/openvswitch/db.sock is unreachable: connection refused"
	hb.OVSDown = func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if reachable {
			return nil
		}
		return errors.New(why)
	}

	step := func(wantWrite bool, what string) (*coordinationv1.Lease, cluster.HeartbeatStatus) {
		t.Helper()
		wrote, err := hb.Sync(ctx)
		if err != nil {
			t.Fatalf("%s: Sync: %v", what, err)
		}
		if wrote != wantWrite {
			t.Errorf("%s: Sync wrote %t, want %t", what, wrote, wantWrite)
		}
		lease := getLease(ctx, t, c, ns, "worker1")
		s, err := cluster.ParseHeartbeat(lease)
		if err != nil {
			t.Fatal(err)
		}
		return lease, s
	}
	if lease, s := step(true, "first sync"); lease.Annotations[cluster.AnnotationOVSReachable] != "true" || s.OVSUnreachable() {
		t.Errorf("first sync with OVS up: annotation %q, unreachable %t", lease.Annotations[cluster.AnnotationOVSReachable], s.OVSUnreachable())
	}
	src.set(func(s *sources) { s.now = start.Add(time.Second) })
	step(false, "nothing changed")

	mu.Lock()
	reachable = false
	mu.Unlock()
	src.set(func(s *sources) { s.now = start.Add(2 * time.Second) })
	if lease, s := step(true, "OVS lost"); !s.OVSUnreachable() {
		t.Errorf("after OVS was lost the lease says it is reachable")
	} else if got := lease.Annotations[cluster.AnnotationLastError]; !strings.HasPrefix(got, why) {
		t.Errorf("last error %q, want it to start with why OVS is unreachable", got)
	}

	hb.OVSDown = nil // the same Lease, now written by an agent without a node part
	src.set(func(s *sources) { s.now = start.Add(3 * time.Second) })
	if lease, s := step(true, "no node part"); s.OVSUnreachable() {
		t.Errorf("an agent without a node part is reported as unable to reach OVS (annotations %v)", lease.Annotations)
	} else if _, ok := lease.Annotations[cluster.AnnotationOVSReachable]; ok {
		t.Errorf("annotation %s stays on the Lease of an agent without a node part", cluster.AnnotationOVSReachable)
	}
}

// TestSyncReportsNBLoss: a lost NB connection is published at once, with why (the
// endpoint) at the start of the last error, before the zone's own error; once the
// connection is back, only the zone's error is left.
func TestSyncReportsNBLoss(t *testing.T) {
	ctx, c, ns, start := syncFixture(t)
	src := &sources{nb: true, now: start, succeeded: start}
	hb := newHeartbeat(c, ns, "worker1", src)
	const why = "OVN northbound database unix:/var/run/ovn/ovnnb_db.sock is unreachable: dial: connect: no such file or directory"
	hb.NBDown = func(context.Context) error { return errors.New(why) }
	lastError := func(what string) string {
		t.Helper()
		if _, err := hb.Sync(ctx); err != nil {
			t.Fatalf("%s: Sync: %v", what, err)
		}
		return getLease(ctx, t, c, ns, "worker1").Annotations[cluster.AnnotationLastError]
	}
	if got := lastError("connected"); got != "" {
		t.Errorf("connected: last error %q, want none", got)
	}
	src.set(func(s *sources) {
		s.now, s.nb, s.err = start.Add(time.Second), false, errors.New("apply zone worker1: not connected")
	})
	if got, want := lastError("NB lost"), why+"\napply zone worker1: not connected"; got != want {
		t.Errorf("NB lost: last error %q, want %q", got, want)
	}
	src.set(func(s *sources) { s.now, s.nb = start.Add(2*time.Second), true })
	if got := lastError("NB back"); got != "apply zone worker1: not connected" {
		t.Errorf("NB back: last error %q, want the zone's alone", got)
	}
}

// TestSyncReportsNodeProblem: a malformed annotation of the node is published at once
// as the node's problem, and goes when it is mended.
func TestSyncReportsNodeProblem(t *testing.T) {
	ctx, c, ns, start := syncFixture(t)
	src := &sources{nb: true, now: start, succeeded: start}
	hb := newHeartbeat(c, ns, "worker1", src)
	var problem error
	hb.NodeProblem = func() error { return problem }
	sync := func(what string) cluster.HeartbeatStatus {
		t.Helper()
		if _, err := hb.Sync(ctx); err != nil {
			t.Fatalf("%s: Sync: %v", what, err)
		}
		s, err := cluster.ParseHeartbeat(getLease(ctx, t, c, ns, "worker1"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := sync("nothing wrong"); s.NodeProblem != "" {
		t.Errorf("nothing wrong: node problem %q", s.NodeProblem)
	}
	const why = `node/worker1: annotation k8s.ovn.org/l3-gateway-config: malformed JSON "garbage", want a JSON object: …`
	problem = errors.New(why)
	src.set(func(s *sources) { s.now = start.Add(time.Second) }) // not due for renewal: written for the change
	if s := sync("annotation broken"); s.NodeProblem != why {
		t.Errorf("annotation broken: node problem %q, want %q", s.NodeProblem, why)
	}
	problem = nil
	src.set(func(s *sources) { s.now = start.Add(2 * time.Second) })
	if s := sync("annotation mended"); s.NodeProblem != "" {
		t.Errorf("annotation mended: node problem %q stays", s.NodeProblem)
	}
}

// TestSyncRecoversFromOthersWrites changes and deletes the Lease behind the heartbeat's
// back: the next write fails (its copy is stale), and the one after repairs the Lease.
func TestSyncRecoversFromOthersWrites(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(t, kube.RESTConfig)
	ns := kube.Namespace(t)
	start := time.Now()
	src := &sources{now: start}
	hb := newHeartbeat(c, ns, "worker2", src)
	if _, err := hb.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	lease := getLease(ctx, t, c, ns, "worker2")
	lease.Spec.HolderIdentity = ptr.To("someone-else")
	if err := c.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	src.set(func(s *sources) { s.now = start.Add(heartbeat.DefaultRenewInterval) })
	if _, err := hb.Sync(ctx); !apierrors.IsConflict(err) {
		t.Fatalf("renewing a lease changed by someone else: %v, want a conflict", err)
	}
	if wrote, err := hb.Sync(ctx); err != nil || !wrote {
		t.Fatalf("the sync after a conflict: wrote %t, %v; want the lease taken back", wrote, err)
	}
	if got := ptr.Deref(getLease(ctx, t, c, ns, "worker2").Spec.HolderIdentity, ""); got != "worker2" {
		t.Errorf("holder %q after the repair, want worker2", got)
	}

	if err := c.Delete(ctx, getLease(ctx, t, c, ns, "worker2")); err != nil {
		t.Fatal(err)
	}
	src.set(func(s *sources) { s.err = errors.New("boom") }) // a change, so the next sync writes
	// The update's UID precondition fails: the API server answers Conflict.
	if _, err := hb.Sync(ctx); !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		t.Fatalf("renewing a deleted lease: %v, want Conflict or NotFound", err)
	}
	if wrote, err := hb.Sync(ctx); err != nil || !wrote {
		t.Fatalf("the sync after the deletion: wrote %t, %v; want the lease created again", wrote, err)
	}
	if got := getLease(ctx, t, c, ns, "worker2").Annotations[cluster.AnnotationLastError]; got != "boom" {
		t.Errorf("last error %q on the re-created lease, want boom", got)
	}
}

// TestStartAsTheAgent runs the Heartbeat as the agent's service account, with only the
// Role of pkg/manifests: get, create and update of Leases in its namespace are enough.
// A change in the sources reaches the Lease without waiting for the renewal.
func TestStartAsTheAgent(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := newClient(t, kube.RESTConfig)
	ns := kube.Namespace(t)
	objs, err := manifests.Agent(manifests.AgentOptions{Namespace: ns, Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		switch obj.(type) {
		case *rbacv1.Role, *rbacv1.RoleBinding:
			if err := admin.Create(ctx, obj); err != nil {
				t.Fatalf("create %s: %v", obj.GetName(), err)
			}
		}
	}
	agent := newClient(t, kube.ConfigAs("system:serviceaccount:"+ns+":"+manifests.AgentName, "system:serviceaccounts", "system:serviceaccounts:"+ns))

	src := &sources{nb: true}
	hb := newHeartbeat(agent, ns, "worker3", src)
	hb.Now = nil // the real clock
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- hb.Start(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Start returned %v", err)
		}
	}()

	// The authorizer learns of the new binding from a watch, so the first syncs may be
	// forbidden: Start retries every second.
	lease := func(ctx context.Context) (cluster.HeartbeatStatus, error) {
		var l coordinationv1.Lease
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: cluster.HeartbeatLeaseName("worker3")}, &l); err != nil {
			return cluster.HeartbeatStatus{}, err
		}
		return cluster.ParseHeartbeat(&l)
	}
	err = testenv.Eventually(ctx, 30*time.Second, "the agent's heartbeat lease", func(ctx context.Context) error {
		s, err := lease(ctx)
		if err == nil && (!s.NBConnected || s.Node != "worker3") {
			return errors.New("the lease does not report the agent connected to its NB")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	src.set(func(s *sources) { s.err = errors.New("apply zone worker3: timeout") })
	err = testenv.Eventually(ctx, 5*time.Second, "the reconcile error on the lease, before the 10s renewal", func(ctx context.Context) error {
		s, err := lease(ctx)
		if err == nil && s.LastError != "apply zone worker3: timeout" {
			return errors.New("last error is " + s.LastError)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
