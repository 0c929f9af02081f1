package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// writer applies plans through the API server. Annotations are written with JSON merge
// patches of metadata.annotations, conditions with merge patches of the status
// subresource; both carry the resourceVersion the plan was made from, so a write based
// on a stale cache fails with a conflict instead of overwriting, and is retried with a
// fresh read, unless what it reads is another object of the same name (the planned one
// was deleted): then the write is dropped. It never modifies the cached objects it is
// given.
type writer struct {
	c        client.Client // writes with the field owner
	reader   client.Reader // uncached reads after a conflict
	recorder recorder.EventRecorder
	// log tells of every refusal the events report.
	log logr.Logger
	// warned is the message of each warning reported in the last pass, by object and
	// reason, so that a problem that persists is reported once.
	warned map[string]string
}

// apply writes the plan: every write is attempted even when others fail, except the
// status of a network or connect whose allocations could not be written. It returns the
// failures.
func (w *writer) apply(ctx context.Context, pl *plan) error {
	var errs []error
	unwritten := map[string]bool{}
	written := map[string]client.Object{} // by owner, as their annotation write returned them
	for _, a := range pl.annotations {
		obj, err := w.patchAnnotations(ctx, a)
		switch {
		case err != nil:
			errs = append(errs, err)
			if a.owner != "" {
				unwritten[a.owner] = true
			}
		case a.owner != "":
			written[a.owner] = obj
		}
	}
	for _, nw := range pl.nads {
		if err := w.writeNAD(ctx, nw); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range pl.statuses {
		if unwritten[s.owner] {
			continue
		}
		if obj := written[s.owner]; obj != nil && obj.GetResourceVersion() != "" {
			s.obj = obj // its resourceVersion is newer than the cache's
		}
		if err := w.patchStatus(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	w.warn(pl.warnings)
	return errors.Join(errs...)
}

// emptyLike returns a new, empty object of obj's type with obj's name and namespace.
func emptyLike(obj client.Object) client.Object {
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	out.SetName(obj.GetName())
	out.SetNamespace(obj.GetNamespace())
	return out
}

// describe names an object in messages, kubectl-style: node/n1, pod/ns/p.
func describe(obj client.Object) string {
	kind := strings.ToLower(reflect.TypeOf(obj).Elem().Name())
	if obj.GetNamespace() == "" {
		return kind + "/" + obj.GetName()
	}
	return kind + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// patchAnnotations sets and removes the annotations of one object, and returns the
// object as the API server returned it (empty when it is gone).
func (w *writer) patchAnnotations(ctx context.Context, a annotationWrite) (client.Object, error) {
	obj, changes := a.obj, a.changes
	var written client.Object
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": obj.GetResourceVersion(),
			"annotations":     changes,
		}})
		if err != nil {
			return err
		}
		written = emptyLike(obj)
		err = w.c.Patch(ctx, written, client.RawPatch(types.MergePatchType, patch))
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh := emptyLike(obj)
		if err := w.reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			return err
		}
		if fresh.GetUID() != a.obj.GetUID() {
			written = emptyLike(obj)
			return errReplaced
		}
		obj, changes, written = fresh, stillNeeded(changes, fresh.GetAnnotations()), fresh
		if len(changes) == 0 {
			return nil
		}
		return err // the conflict: try again
	})
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, errReplaced) {
		return nil, fmt.Errorf("write annotations of %s: %w", describe(a.obj), err)
	}
	return written, nil
}

// errReplaced is a write's object deleted and created again under its name since the
// cache showed it: what was planned for the one is not for the other (a pod's
// addresses, a network's conditions), and the next pass plans for the new one.
var errReplaced = errors.New("the object was deleted and created again")

// stillNeeded returns the changes that annotations do not already reflect.
func stillNeeded(changes map[string]*string, annotations map[string]string) map[string]*string {
	out := map[string]*string{}
	for k, v := range changes {
		have, ok := annotations[k]
		if (v == nil && ok) || (v != nil && (!ok || have != *v)) {
			out[k] = v
		}
	}
	return out
}

// patchStatus sets the leader's conditions on a network or connect, keeping other
// writers' ones (and a connect's status.status), and reports a Warning event when the
// failure condition (see failureCondition) turns False or its message changes.
func (w *writer) patchStatus(ctx context.Context, s statusWrite) error {
	obj := s.obj
	var before []metav1.Condition
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		before = conditionsOf(obj)
		if !statusChanged(obj, s) {
			return nil
		}
		merged := append([]metav1.Condition(nil), before...)
		for _, c := range s.conditions {
			meta.SetStatusCondition(&merged, c)
		}
		status := map[string]any{"conditions": merged}
		if _, ok := obj.(*ovnkv1.ClusterNetworkConnect); ok {
			status["status"] = nil // merge patch: remove it
			if s.connectStatus != "" {
				status["status"] = s.connectStatus
			}
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion()},
			"status":   status,
		})
		if err != nil {
			return err
		}
		err = w.c.Status().Patch(ctx, emptyLike(obj), client.RawPatch(types.MergePatchType, patch))
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh := emptyLike(obj)
		if err := w.reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			return err
		}
		if fresh.GetUID() != s.obj.GetUID() {
			return errReplaced
		}
		obj = fresh
		return err // the conflict: try again
	})
	if apierrors.IsNotFound(err) || errors.Is(err, errReplaced) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write status of %s: %w", describe(s.obj), err)
	}
	w.reportFailure(s.obj, before, s.conditions)
	return nil
}

// failureCondition is the condition whose turning False is reported as a Warning event
// on obj, and the event's action: NetworkCreated on networks, Accepted on connects.
func failureCondition(obj client.Object) (conditionType, action string) {
	if _, ok := obj.(*ovnkv1.ClusterNetworkConnect); ok {
		return ConditionConnectAccepted, "ConnectNetworks"
	}
	return ovnkv1.ConditionNetworkCreated, "CreateNetwork"
}

// reportFailure emits a Warning event when the failure condition written is False and
// differs from the one before.
func (w *writer) reportFailure(obj client.Object, before, after []metav1.Condition) {
	conditionType, action := failureCondition(obj)
	now := meta.FindStatusCondition(after, conditionType)
	if now == nil || now.Status != metav1.ConditionFalse {
		return
	}
	if old := meta.FindStatusCondition(before, conditionType); old != nil &&
		old.Status == now.Status && old.Reason == now.Reason && old.Message == now.Message {
		return
	}
	w.recorder.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, action, "%s", now.Message)
	w.log.Info("refused", "object", describe(obj), "condition", conditionType, "reason", now.Reason, "message", now.Message)
}

// warn emits a Warning event for each warning whose message differs from the last pass.
func (w *writer) warn(warnings []warning) {
	seen := make(map[string]string, len(warnings))
	for _, wa := range warnings {
		key := describe(wa.obj) + " " + wa.reason
		if w.warned[key] != wa.message {
			w.recorder.Eventf(wa.obj, nil, corev1.EventTypeWarning, wa.reason, wa.action, "%s", wa.message)
		}
		seen[key] = wa.message
	}
	w.warned = seen
}
