package installcmd

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// Outcomes of applying one object, as kubectl words them.
const (
	created    = "created"
	configured = "configured"
	unchanged  = "unchanged"
)

// applier server-side applies objects with ovnk's field manager.
type applier struct {
	c              client.Client
	dryRun         bool
	forceConflicts bool
}

// apply applies obj, which the server's answer then replaces, and says whether the
// object was created, changed or left as it was.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(obj.GroupVersionKind())
	err := a.c.Get(ctx, client.ObjectKeyFromObject(obj), before)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("get %s: %w", displayName(obj), err)
	}
	opts := []client.ApplyOption{client.FieldOwner(manifests.FieldManager)}
	if a.forceConflicts {
		opts = append(opts, client.ForceOwnership)
	}
	if a.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := a.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
		if apierrors.IsConflict(err) {
			return "", fmt.Errorf("apply %s: %s: another field manager set these fields; re-run with --force-conflicts to take them over",
				displayName(obj), oneLine(err.Error()))
		}
		return "", fmt.Errorf("apply %s: %w", displayName(obj), err)
	}
	switch {
	case !exists:
		return created, nil
	case a.dryRun && !sameContent(before, obj):
		// A dry run stores nothing, so the resourceVersion cannot tell.
		return configured, nil
	case !a.dryRun && before.GetResourceVersion() != obj.GetResourceVersion():
		return configured, nil
	}
	return unchanged, nil
}

// sameContent compares two versions of an object without the fields the server keeps
// for itself. Field managers count (an apply that adds ovnk as a manager of fields
// someone else set writes the object), but not the time of their last change.
func sameContent(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		for _, f := range [][]string{{"metadata", "resourceVersion"}, {"metadata", "generation"}, {"status"}} {
			unstructured.RemoveNestedField(c.Object, f...)
		}
		managed := c.GetManagedFields()
		for i := range managed {
			managed[i].Time = nil
		}
		c.SetManagedFields(managed)
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
