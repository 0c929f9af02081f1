package installcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// nadKind names NADs in messages, as kubectl does.
const nadKind = "networkattachmentdefinition." + nadv1.GroupName

// maxReleaseAttempts bounds the retries of a finalizer removal that raced with another
// writer of the NAD's finalizers.
const maxReleaseAttempts = 5

// releaseNADs removes the leader's finalizer (cluster.FinalizerUserDefinedNetwork) from
// every NAD a network object controls. Only the agent removes it, so with the agent
// gone it would block the deletion of the NAD's namespace, and of the NAD itself when
// the network CRDs go. Other NADs, and other finalizers, are left as they are. A
// cluster without the NAD CRD has nothing to release.
func releaseNADs(ctx context.Context, c client.Client) ([]types.NamespacedName, error) {
	list := &nadv1.NetworkAttachmentDefinitionList{}
	err := c.List(ctx, list, client.HasLabels{cluster.LabelUserDefinedNetwork})
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list NetworkAttachmentDefinitions: %w", err)
	}
	var released []types.NamespacedName
	for i := range list.Items {
		nad := &list.Items[i]
		if cluster.NetworkController(nad) == nil || !slices.Contains(nad.Finalizers, cluster.FinalizerUserDefinedNetwork) {
			continue
		}
		ok, err := removeFinalizer(ctx, c, nad)
		if err != nil {
			return released, err
		}
		if ok {
			released = append(released, client.ObjectKeyFromObject(nad))
		}
	}
	return released, nil
}

// removeFinalizer removes the leader's finalizer from nad by a JSON patch that first
// tests the finalizer is still at the index it was read at, so a concurrent change of
// the list is never overwritten: a failed test reads the NAD again and retries. It
// reports false when the finalizer or the NAD was gone already.
func removeFinalizer(ctx context.Context, c client.Client, nad *nadv1.NetworkAttachmentDefinition) (bool, error) {
	for range maxReleaseAttempts {
		i := slices.Index(nad.Finalizers, cluster.FinalizerUserDefinedNetwork)
		if i < 0 {
			return false, nil
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": path, "value": cluster.FinalizerUserDefinedNetwork},
			{"op": "remove", "path": path},
		})
		if err != nil {
			return false, err
		}
		err = c.Patch(ctx, nad, client.RawPatch(types.JSONPatchType, patch))
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !apierrors.IsInvalid(err) && !apierrors.IsConflict(err):
			return false, fmt.Errorf("remove finalizer %s from NetworkAttachmentDefinition %s/%s: %w", cluster.FinalizerUserDefinedNetwork, nad.Namespace, nad.Name, err)
		}
		// The list changed since it was read.
		if err := c.Get(ctx, client.ObjectKeyFromObject(nad), nad); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("get NetworkAttachmentDefinition %s/%s: %w", nad.Namespace, nad.Name, err)
		}
	}
	return false, fmt.Errorf("remove finalizer %s from NetworkAttachmentDefinition %s/%s: its finalizers kept changing; run uninstall again",
		cluster.FinalizerUserDefinedNetwork, nad.Namespace, nad.Name)
}

// waitAgentGone waits until no pod of the agent's DaemonSet ds is left, so that no
// leader puts a finalizer back after releaseNADs. Pods on a node that is down can stay
// Terminating for ever; at the timeout it returns their names rather than an error,
// since without its RBAC (deleted before) an agent can no longer write NADs.
func waitAgentGone(ctx context.Context, c client.Client, ds *unstructured.Unstructured, timeout time.Duration, p *cmdutil.ProgressLine) ([]string, error) {
	defer p.Finish()
	selector, _, _ := unstructured.NestedStringMap(ds.Object, "spec", "selector", "matchLabels")
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		pods := &metav1.PartialObjectMetadataList{}
		pods.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "PodList"})
		if err := c.List(ctx, pods, client.InNamespace(ds.GetNamespace()), client.MatchingLabels(selector)); err != nil {
			return nil, fmt.Errorf("list the agent's pods: %w", err)
		}
		if len(pods.Items) == 0 {
			return nil, nil
		}
		var names []string
		for _, pod := range pods.Items {
			names = append(names, pod.Name)
		}
		p.Show(fmt.Sprintf("Waiting for the agent's pods to be gone: %d left", len(names)))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return names, nil
		case <-ticker.C:
		}
	}
}
