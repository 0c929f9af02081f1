package leader

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// A fast stand-in for the API server and the manager's cache, for tests that run the
// leader's own Reconcile (planner and writer) many times over.
//
// controller-runtime's fake client already does what the writer relies on: one
// resourceVersion counter for the whole store (with WithGlobalResourceVersionCounter;
// per-object counters would let a stale copy of a deleted and re-created object pass
// as current), a Conflict for a patch whose resourceVersion is stale, NotFound for a
// patch of an object that is gone, and a status subresource that ignores everything
// but status (and the main resource that ignores status). What the fake leaves out
// and the leader reads, fakeAPI adds as the API server does it: a uid and a
// creationTimestamp on create (seniority between networks goes by age), a
// metadata.generation that starts at 1 and grows when a custom resource's spec
// changes (the leader's watches pass spec changes by generation, and its conditions
// carry it), a deletion that only marks an object with finalizers (and the write
// removing its last finalizer that deletes it, as a deletion event), a delete
// precondition on the uid, and the refusals of what the API server refuses: a new
// finalizer on an object being deleted, an owner reference without apiVersion, kind,
// name or uid, two controller references, and a NetworkAttachmentDefinition in a
// namespace that does not exist or is being deleted. TestFakeAPIServer holds the fake
// to all of that.

// watchEvent is one change of an object, as a watch delivers it: old is nil for a
// creation, cur nil for a deletion.
type watchEvent struct {
	old, cur client.Object
}

// fakeAPI is the API server. Every change through it (the test's and the leader's) is
// logged as a watch event of the object's kind.
type fakeAPI struct {
	client.WithWatch // the intercepted client: what the test and the leader use
	raw              client.WithWatch
	scheme           *runtime.Scheme
	now              time.Time
	uids             int
	events           map[string][]watchEvent // by kind
	// writes counts the patches sent (the leader's only kind of write), conflicts
	// those refused for a stale resourceVersion.
	writes, conflicts int
	// patches are the last patches sent, for messages: object and patch.
	patches []string
	// afterWrite, when set, is called after every change the API server accepted.
	afterWrite func()
	// nadsAbsent says that the API server does not serve NetworkAttachmentDefinitions
	// (no CRD), as discovery tells the leader.
	nadsAbsent bool
}

// asNew clears what the API server sets on create from a fixture.
func asNew[T client.Object](obj T) T {
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetGeneration(0)
	return obj
}

// leaderScheme holds client-go's types and k8s.ovn.org/v1, as the agent's manager does.
func leaderScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := nadv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	a := &fakeAPI{scheme: leaderScheme(t), events: map[string][]watchEvent{},
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	// client-go's plain tracker: the default one also keeps managedFields, which the
	// leader never reads, at several times the cost of every write.
	tracker := clienttesting.NewObjectTracker(a.scheme, serializer.NewCodecFactory(a.scheme).UniversalDecoder())
	a.raw = fake.NewClientBuilder().WithScheme(a.scheme).WithObjectTracker(tracker).WithGlobalResourceVersionCounter().
		WithStatusSubresource(&corev1.Node{}, &corev1.Namespace{}, &corev1.Pod{},
			&ovnkv1.ClusterUserDefinedNetwork{}, &ovnkv1.UserDefinedNetwork{},
			&ovnkv1.ClusterNetworkConnect{}, &ovnkv1.RouteAdvertisements{}).
		Build()
	a.WithWatch = interceptor.NewClient(a.raw, interceptor.Funcs{
		Create:            a.create,
		Update:            a.update,
		Patch:             a.patch,
		Delete:            a.delete,
		SubResourceUpdate: a.subResourceUpdate,
		SubResourcePatch:  a.subResourcePatch,
	})
	return a
}

// kindOf is the kind of an object or list of the scheme.
func (a *fakeAPI) kindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, a.scheme)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(gvk.Kind, "List")
}

// record logs a change the API server accepted.
func (a *fakeAPI) record(old, cur client.Object) {
	var kind string
	if old != nil {
		old = old.DeepCopyObject().(client.Object)
		kind = a.kindOf(old)
	}
	if cur != nil {
		cur = cur.DeepCopyObject().(client.Object)
		kind = a.kindOf(cur)
	}
	a.events[kind] = append(a.events[kind], watchEvent{old, cur})
	if a.afterWrite != nil {
		a.afterWrite()
	}
}

// current reads obj's object from the store; nil when there is none.
func (a *fakeAPI) current(ctx context.Context, obj client.Object) (client.Object, error) {
	old := emptyLike(obj)
	err := a.raw.Get(ctx, client.ObjectKeyFromObject(obj), old)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return old, err
}

// hasGeneration reports whether the API server keeps obj's metadata.generation (the
// custom resources the leader reads it from; built-in kinds differ and the leader does
// not read theirs).
func hasGeneration(obj client.Object) bool {
	switch obj.(type) {
	case *ovnkv1.ClusterUserDefinedNetwork, *ovnkv1.UserDefinedNetwork, *ovnkv1.ClusterNetworkConnect, *ovnkv1.RouteAdvertisements,
		*nadv1.NetworkAttachmentDefinition:
		return true
	}
	return false
}

// checkMetadata refuses, as the API server does, a write that leaves an object (old
// before it, nil for a creation) with these finalizers and owner references: a new
// finalizer on an object being deleted, an owner reference without apiVersion, kind,
// name or uid, or two controller references.
func checkMetadata(old, obj client.Object, finalizers []string, owners []metav1.OwnerReference) error {
	gr := schema.GroupResource{Resource: strings.ToLower(reflect.TypeOf(obj).Elem().Name())}
	if old != nil && old.GetDeletionTimestamp() != nil {
		for _, f := range finalizers {
			if !slices.Contains(old.GetFinalizers(), f) {
				return apierrors.NewForbidden(gr, obj.GetName(), fmt.Errorf("no new finalizers can be added if the object is being deleted, found new finalizers %q", f))
			}
		}
	}
	controllers := 0
	for _, o := range owners {
		if o.APIVersion == "" || o.Kind == "" || o.Name == "" || o.UID == "" {
			return apierrors.NewBadRequest(fmt.Sprintf("%s %s: metadata.ownerReferences: apiVersion, kind, name and uid must be set: %+v", gr.Resource, obj.GetName(), o))
		}
		if o.Controller != nil && *o.Controller {
			controllers++
		}
	}
	if controllers > 1 {
		return apierrors.NewBadRequest(fmt.Sprintf("%s %s: metadata.ownerReferences: only one reference can have Controller set to true", gr.Resource, obj.GetName()))
	}
	return nil
}

// checkNamespace refuses a NetworkAttachmentDefinition in a namespace that does not
// exist (NotFound) or is being deleted (Forbidden), as the API server does.
func (a *fakeAPI) checkNamespace(ctx context.Context, obj client.Object) error {
	if _, ok := obj.(*nadv1.NetworkAttachmentDefinition); !ok {
		return nil
	}
	ns := &corev1.Namespace{}
	if err := a.raw.Get(ctx, client.ObjectKey{Name: obj.GetNamespace()}, ns); err != nil {
		return err
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return apierrors.NewForbidden(schema.GroupResource{Group: nadv1.GroupName, Resource: nadv1.Resource}, obj.GetName(),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
	}
	return nil
}

// specOf returns obj's spec, or nil for a kind without one.
func specOf(obj client.Object) any {
	v := reflect.ValueOf(obj).Elem().FieldByName("Spec")
	if !v.IsValid() {
		return nil
	}
	return v.Interface()
}

func (a *fakeAPI) countConflict(err error) error {
	if apierrors.IsConflict(err) {
		a.conflicts++
	}
	return err
}

func (a *fakeAPI) create(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if err := checkMetadata(nil, obj, obj.GetFinalizers(), obj.GetOwnerReferences()); err != nil {
		return err
	}
	if err := a.checkNamespace(ctx, obj); err != nil {
		return err
	}
	a.now = a.now.Add(time.Second)
	a.uids++
	obj.SetUID(types.UID(fmt.Sprintf("uid-%d", a.uids)))
	obj.SetCreationTimestamp(metav1.NewTime(a.now))
	if hasGeneration(obj) {
		obj.SetGeneration(1)
	}
	if err := c.Create(ctx, obj, opts...); err != nil {
		return err
	}
	a.record(nil, obj)
	return nil
}

func (a *fakeAPI) update(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	old, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	if old == nil {
		return c.Update(ctx, obj, opts...) // NotFound
	}
	if err := checkMetadata(old, obj, obj.GetFinalizers(), obj.GetOwnerReferences()); err != nil {
		return err
	}
	// The API server keeps what only it sets.
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	if hasGeneration(obj) {
		gen := old.GetGeneration()
		if !equality.Semantic.DeepEqual(specOf(old), specOf(obj)) {
			gen++
		}
		obj.SetGeneration(gen)
	}
	if err := c.Update(ctx, obj, opts...); err != nil {
		return a.countConflict(err)
	}
	a.record(old, obj)
	return nil
}

// sent counts a patch and remembers the last ones.
func (a *fakeAPI) sent(obj client.Object, patch client.Patch) {
	a.writes++
	data, _ := patch.Data(obj)
	a.patches = append(a.patches, describe(obj)+" "+string(data))
	if len(a.patches) > 20 {
		a.patches = a.patches[1:]
	}
}

func (a *fakeAPI) patch(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	a.sent(obj, patch)
	old, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	if old != nil {
		// A merge patch replaces lists whole: the patch's finalizers and owner
		// references are the object's after it.
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		var m struct {
			Metadata struct {
				Finalizers      *[]string                `json:"finalizers"`
				OwnerReferences *[]metav1.OwnerReference `json:"ownerReferences"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		finalizers, owners := old.GetFinalizers(), old.GetOwnerReferences()
		if m.Metadata.Finalizers != nil {
			finalizers = *m.Metadata.Finalizers
		}
		if m.Metadata.OwnerReferences != nil {
			owners = *m.Metadata.OwnerReferences
		}
		if err := checkMetadata(old, obj, finalizers, owners); err != nil {
			return err
		}
	}
	err = c.Patch(ctx, obj, patch, opts...)
	if apierrors.IsNotFound(err) && old != nil && old.GetDeletionTimestamp() != nil {
		// The patch took the last finalizer off an object being deleted, which the
		// API server then deletes (and answers with the object).
		if now, err := a.current(ctx, obj); err == nil && now == nil {
			a.record(old, nil)
			return nil
		}
	}
	if err != nil {
		return a.countConflict(err)
	}
	if old != nil && old.GetDeletionTimestamp() != nil {
		if now, err := a.current(ctx, obj); err == nil && now == nil {
			a.record(old, nil) // the patch took the last finalizer off: deleted
			return nil
		}
	}
	if old != nil && hasGeneration(obj) && !equality.Semantic.DeepEqual(specOf(old), specOf(obj)) {
		obj.SetGeneration(old.GetGeneration() + 1)
		if err := a.raw.Update(ctx, obj); err != nil {
			return err
		}
	}
	a.record(old, obj)
	return nil
}

func (a *fakeAPI) delete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	old, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	var do client.DeleteOptions
	do.ApplyOptions(opts)
	if p := do.Preconditions; old != nil && p != nil && p.UID != nil && *p.UID != old.GetUID() {
		return apierrors.NewConflict(schema.GroupResource{Resource: strings.ToLower(a.kindOf(obj))}, obj.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, old.GetUID()))
	}
	if err := c.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	// An object with finalizers is only marked: its deletion waits for them.
	now, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	a.record(old, now)
	return nil
}

func (a *fakeAPI) subResourceUpdate(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	old, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
		return a.countConflict(err)
	}
	a.record(old, obj)
	return nil
}

func (a *fakeAPI) subResourcePatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	a.sent(obj, patch)
	old, err := a.current(ctx, obj)
	if err != nil {
		return err
	}
	if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
		return a.countConflict(err)
	}
	a.record(old, obj)
	return nil
}

// restore creates obj as it is, uid, creationTimestamp and generation included (as a
// restore from a backup would), and logs its creation.
func (a *fakeAPI) restore(ctx context.Context, obj client.Object) error {
	obj.SetResourceVersion("")
	if err := a.raw.Create(ctx, obj); err != nil {
		return err
	}
	a.record(nil, obj)
	return nil
}

// watchPredicates are the predicates of the leader's watches, by kind, as Setup
// registers them: only a change that passes starts a pass. (Creations and deletions
// pass every one of them.) Keep in step with Setup.
var watchPredicates = map[string]predicate.Predicate{
	"Node":                        predicate.AnnotationChangedPredicate{},
	"Namespace":                   predicate.LabelChangedPredicate{},
	"Pod":                         podPredicate,
	"ClusterUserDefinedNetwork":   networkPredicate,
	"UserDefinedNetwork":          networkPredicate,
	"RouteAdvertisements":         predicate.Funcs{},
	"ClusterNetworkConnect":       connectPredicate,
	"NetworkAttachmentDefinition": predicate.Funcs{},
}

// informerCache stands in for the manager's cache, from which the leader lists: per
// kind, the objects as of the watch events delivered so far. Each kind has an informer
// of its own, so kinds are delivered separately: the leader may see a pod before the
// node it runs on, or its own writes only some passes after it made them.
type informerCache struct {
	client.Client // unset: the leader only lists from its cache
	api           *fakeAPI
	delivered     map[string]int // by kind, how many of api.events[kind]
	objects       map[string]map[client.ObjectKey]client.Object
}

func newInformerCache(api *fakeAPI) *informerCache {
	return &informerCache{api: api, delivered: map[string]int{}, objects: map[string]map[client.ObjectKey]client.Object{}}
}

// pending returns the kinds with events not delivered yet, sorted.
func (c *informerCache) pending() []string {
	var out []string
	for kind, evs := range c.api.events {
		if c.delivered[kind] < len(evs) {
			out = append(out, kind)
		}
	}
	slices.Sort(out)
	return out
}

// deliver hands kind's pending events to the cache, in order, and reports whether one
// of them passes the kind's watch predicate, that is would enqueue a pass.
func (c *informerCache) deliver(kind string) bool {
	pred, watched := watchPredicates[kind]
	if c.objects[kind] == nil {
		c.objects[kind] = map[client.ObjectKey]client.Object{}
	}
	trigger := false
	for _, ev := range c.api.events[kind][c.delivered[kind]:] {
		switch {
		case ev.old == nil:
			c.objects[kind][client.ObjectKeyFromObject(ev.cur)] = ev.cur
			trigger = trigger || watched && pred.Create(event.CreateEvent{Object: ev.cur})
		case ev.cur == nil:
			delete(c.objects[kind], client.ObjectKeyFromObject(ev.old))
			trigger = trigger || watched && pred.Delete(event.DeleteEvent{Object: ev.old})
		default:
			c.objects[kind][client.ObjectKeyFromObject(ev.cur)] = ev.cur
			trigger = trigger || watched && pred.Update(event.UpdateEvent{ObjectOld: ev.old, ObjectNew: ev.cur})
		}
	}
	c.delivered[kind] = len(c.api.events[kind])
	return trigger
}

// List lists a kind's delivered objects (copies).
func (c *informerCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	objs := c.objects[c.api.kindOf(list)]
	keys := make([]client.ObjectKey, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b client.ObjectKey) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	items := make([]runtime.Object, len(keys))
	for i, k := range keys {
		items[i] = objs[k].DeepCopyObject()
	}
	return meta.SetList(list, items)
}

// eventLog records the leader's Kubernetes events.
type eventLog struct {
	events []string // "kind/name Type Reason: note"
}

var _ recorder.EventRecorder = (*eventLog)(nil)

func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	l.events = append(l.events, fmt.Sprintf("%s %s %s: %s", describe(regarding.(client.Object)), eventtype, reason, fmt.Sprintf(note, args...)))
}

func (l *eventLog) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...any) {
	l.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// testLeader is one replica's leader, as Setup builds it, over an informerCache:
// what its controller would run, one pass at a time.
type testLeader struct {
	r      *reconciler
	cache  *informerCache
	events *eventLog
	// queued is the controller's queue: a pass is due.
	queued bool
}

// newTestLeader starts leading: its cache syncs before the first pass, and the
// initial list's creations enqueue one. Its Kubernetes events go to events.
func newTestLeader(t *testing.T, api *fakeAPI, events *eventLog) *testLeader {
	t.Helper()
	p, err := newPlanner(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	l := &testLeader{cache: newInformerCache(api), events: events}
	l.r = &reconciler{c: l.cache, planner: p,
		writer: &writer{c: client.WithFieldOwner(api, FieldOwner), reader: api, recorder: l.events, log: logr.Discard()},
		nads: &nadAPI{
			served: func() (bool, error) { return !api.nadsAbsent, nil },
			watch:  func() error { return nil }, // the informerCache delivers every kind
			now:    func() time.Time { return api.now },
			log:    logr.Discard(),
		}}
	for _, kind := range l.cache.pending() {
		l.queued = l.cache.deliver(kind) || l.queued
	}
	return l
}

// round is one turn of the controller: the informers deliver what deliver picks of the
// pending events, then the pass runs if one is due. A failed pass is retried, as
// the controller requeues it.
func (l *testLeader) round(ctx context.Context, deliver func(kind string) bool) error {
	for _, kind := range l.cache.pending() {
		if deliver(kind) {
			l.queued = l.cache.deliver(kind) || l.queued
		}
	}
	if !l.queued {
		return nil
	}
	l.queued = false
	if _, err := l.r.Reconcile(ctx, passRequest); err != nil {
		l.queued = true
		return err
	}
	return nil
}

// settle runs rounds until every event is delivered and no pass is due.
func (l *testLeader) settle(ctx context.Context, deliver func(kind string) bool) error {
	var err error
	for range 200 {
		if !l.queued && len(l.cache.pending()) == 0 {
			return nil
		}
		err = l.round(ctx, deliver)
	}
	return fmt.Errorf("the leader did not settle in 200 rounds; last error: %v", err)
}

func deliverAll(string) bool { return true }

// TestFakeAPIServer holds fakeAPI to the API server's behaviour the leader relies on.
func TestFakeAPIServer(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI(t)
	c := cudn("blue", 0, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue")
	c.ResourceVersion, c.CreationTimestamp, c.Generation = "", metav1.Time{}, 0
	if err := api.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.UID == "" || c.CreationTimestamp.IsZero() || c.Generation != 1 {
		t.Errorf("created without uid, creationTimestamp or generation 1: %+v", c.ObjectMeta)
	}
	stale := c.DeepCopy()

	// A metadata change keeps the generation; a spec change bumps it.
	c.Labels = map[string]string{"a": "b"}
	if err := api.Update(ctx, c); err != nil || c.Generation != 1 {
		t.Errorf("label change: %v, generation %d, want 1", err, c.Generation)
	}
	c.Spec.NamespaceSelector.MatchExpressions[0].Values = []string{"blue", "teal"}
	if err := api.Update(ctx, c); err != nil || c.Generation != 2 {
		t.Errorf("spec change: %v, generation %d, want 2", err, c.Generation)
	}

	// The writer's patches carry the resourceVersion they were planned from: a stale
	// one is a Conflict, on the object and on its status.
	w := &writer{c: client.WithFieldOwner(api, FieldOwner), reader: api, recorder: &eventLog{}}
	before := api.conflicts
	if _, err := w.patchAnnotations(ctx, annotationWrite{obj: stale, changes: map[string]*string{"k": ptrTo("v")}}); err != nil {
		t.Fatal(err)
	}
	if api.conflicts != before+1 {
		t.Errorf("a patch with a stale resourceVersion was not refused with a Conflict (%d conflicts)", api.conflicts-before)
	}
	cond := metav1.Condition{Type: "T", Status: metav1.ConditionTrue, Reason: "R", Message: "m", ObservedGeneration: 2}
	if err := w.patchStatus(ctx, statusWrite{obj: stale, conditions: []metav1.Condition{cond}}); err != nil {
		t.Fatal(err)
	}
	if api.conflicts != before+2 {
		t.Errorf("a status patch with a stale resourceVersion was not refused with a Conflict")
	}
	got := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := api.Get(ctx, client.ObjectKeyFromObject(c), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["k"] != "v" || !meta.IsStatusConditionTrue(got.Status.Conditions, "T") || got.Generation != 2 || len(got.Labels) != 1 {
		t.Errorf("after the retried writes: %+v", got)
	}

	// Status is the subresource's alone.
	got.Status.Conditions = nil
	got.Annotations["k"] = "w"
	if err := api.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, "T") || got.Annotations["k"] != "w" {
		t.Errorf("an update of the object changed its status or lost its annotation: %+v", got)
	}

	// A deleted object cannot be patched; one created again is another object, which a
	// copy of the first cannot be written over.
	if err := api.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	old := got.DeepCopy()
	if err := api.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"k":"x"}}}`))); !apierrors.IsNotFound(err) {
		t.Errorf("a patch of a deleted object: %v, want NotFound", err)
	}
	again := cudn("blue", 0, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue")
	again.ResourceVersion, again.CreationTimestamp, again.Generation = "", metav1.Time{}, 0
	if err := api.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	if again.UID == old.UID || !again.CreationTimestamp.After(old.CreationTimestamp.Time) {
		t.Errorf("the object created again has uid %s and creationTimestamp %v, the first %s and %v", again.UID, again.CreationTimestamp, old.UID, old.CreationTimestamp)
	}
	// (Per-object counters would start the new object at the first one's first
	// resourceVersion.)
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{"k":"x"}}}`, stale.ResourceVersion)
	if err := api.Patch(ctx, emptyLike(old), client.RawPatch(types.MergePatchType, []byte(patch))); !apierrors.IsConflict(err) {
		t.Errorf("a patch with a resourceVersion of the deleted object: %v, want a Conflict", err)
	}

	// The log holds every accepted change as a watch event, the leader's included.
	var kinds []string
	for _, ev := range api.events["ClusterUserDefinedNetwork"] {
		switch {
		case ev.old == nil:
			kinds = append(kinds, "create")
		case ev.cur == nil:
			kinds = append(kinds, "delete")
		default:
			kinds = append(kinds, "update")
		}
	}
	if want := "create update update update update update delete create"; strings.Join(kinds, " ") != want {
		t.Errorf("watch events %q, want %q", strings.Join(kinds, " "), want)
	}
}

func ptrTo(s string) *string { return &s }
