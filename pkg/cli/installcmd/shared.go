package installcmd

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// found is the outcome of a shared CRD that was already there, whoever made it.
const found = "found, left as it is (shared: created only when absent)"

// createIfAbsent creates a shared CRD (manifests.SharedCRDs) that the cluster lacks and
// leaves one it has alone: Multus or a distribution may own it, with a schema of its
// own, so it is never applied over. A Create that tolerates AlreadyExists, rather than a
// Get first, cannot overwrite one made in between. obj becomes what the server holds
// (or, in a dry run of a creation, would hold).
func createIfAbsent(ctx context.Context, c client.Client, obj *unstructured.Unstructured, dryRun bool) (string, error) {
	opts := []client.CreateOption{client.FieldOwner(manifests.FieldManager)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := c.Create(ctx, obj, opts...)
	switch {
	case err == nil:
		return created, nil
	case !apierrors.IsAlreadyExists(err):
		return "", fmt.Errorf("create %s: %w", displayName(obj), err)
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		return "", fmt.Errorf("get %s: %w", displayName(obj), err)
	}
	current.DeepCopyInto(obj)
	return found, nil
}
