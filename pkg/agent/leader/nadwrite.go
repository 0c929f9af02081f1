package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// writeNAD sends one NAD write. Updates and releases carry the resourceVersion they
// were planned from, and the deletion the uid too. A write that finds the NAD changed,
// gone or already there is dropped without an error: the watch brings that change,
// and the pass after it plans again from it.
func (w *writer) writeNAD(ctx context.Context, nw nadWrite) error {
	var err error
	switch nw.op {
	case nadCreate:
		err = w.c.Create(ctx, nw.nad.DeepCopy())
	case nadUpdate:
		err = w.patchNAD(ctx, nw.nad.DeepCopy(), nadPatch(nw))
	case nadRelease:
		err = w.releaseNAD(ctx, nw.nad)
	}
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write NetworkAttachmentDefinition %s/%s: %w", nw.nad.Namespace, nw.nad.Name, err)
	}
	return nil
}

// nadPatch is the JSON merge patch of an update: its metadata changes, and spec.config.
func nadPatch(nw nadWrite) map[string]any {
	meta := map[string]any{}
	if len(nw.labels) > 0 {
		meta["labels"] = nw.labels
	}
	if len(nw.annotations) > 0 {
		meta["annotations"] = nw.annotations
	}
	if nw.finalizers != nil {
		meta["finalizers"] = nw.finalizers
	}
	patch := map[string]any{"metadata": meta}
	if nw.config != nil {
		patch["spec"] = map[string]any{"config": *nw.config}
	}
	return patch
}

// patchNAD sends a merge patch of nad, with nad's resourceVersion, and leaves the
// written NAD in nad (never the cache's).
func (w *writer) patchNAD(ctx context.Context, nad *nadv1.NetworkAttachmentDefinition, patch map[string]any) error {
	meta, _ := patch["metadata"].(map[string]any)
	meta["resourceVersion"] = nad.ResourceVersion
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return w.c.Patch(ctx, nad, client.RawPatch(types.MergePatchType, data))
}

// releaseNAD takes the leader's finalizer off nad and deletes it, unless its deletion
// has begun already.
func (w *writer) releaseNAD(ctx context.Context, cached *nadv1.NetworkAttachmentDefinition) error {
	nad := cached.DeepCopy()
	if i := slices.Index(nad.Finalizers, cluster.FinalizerUserDefinedNetwork); i >= 0 {
		rest := slices.Delete(slices.Clone(nad.Finalizers), i, i+1)
		if err := w.patchNAD(ctx, nad, map[string]any{"metadata": map[string]any{"finalizers": rest}}); err != nil {
			return err
		}
	}
	if cached.DeletionTimestamp != nil {
		return nil
	}
	rv := nad.ResourceVersion
	return w.c.Delete(ctx, nad, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cached.UID, ResourceVersion: &rv}})
}
