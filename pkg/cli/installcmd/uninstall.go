package installcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// UninstallOptions are the flags and dependencies of `uninstall`.
type UninstallOptions struct {
	KeepCRDs bool
	Yes      bool
	Timeout  time.Duration

	f *cmdutil.Factory
}

// NewUninstall returns the `uninstall` command.
func NewUninstall(f *cmdutil.Factory) *cobra.Command {
	o := &UninstallOptions{f: f}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove the ovnk agent and the OVN-Kubernetes CRDs",
		Long: `Remove what install applied: first the agent's DaemonSet, config, RBAC, service
account and namespace, then the k8s.ovn.org CRDs.

The agent puts the finalizer k8s.ovn.org/user-defined-network-protection on the
NetworkAttachmentDefinitions it writes for networks, and only the agent removes it.
Once the agent's pods are gone, uninstall removes that finalizer from every NAD a
UserDefinedNetwork or ClusterUserDefinedNetwork controls, so that they do not block
the deletion of their namespaces (or, with the CRDs, their own); it touches no other
NAD and no other finalizer. The NetworkAttachmentDefinition CRD itself is shared
with Multus and is never deleted.

Deleting a CRD deletes every object of its kind: every network, connect, EgressIP and
RouteAdvertisements. While any exists, uninstall refuses unless --yes says that is
meant; --keep-crds removes only the agent and leaves the CRDs and their objects.`,
		Example: `  # Remove the agent, keep the networks and their CRDs
  kubectl ovnk uninstall --keep-crds

  # Remove everything, networks included
  kubectl ovnk uninstall --yes`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(f, o),
	}
	cmd.Flags().BoolVar(&o.KeepCRDs, "keep-crds", false, "keep the CRDs, and so every network and other k8s.ovn.org object")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "delete the CRDs even though k8s.ovn.org objects exist, deleting them too")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", DefaultTimeout, "how long to wait for the agent's pods, then for the CRDs, to be gone")
	return cmd
}

// systemNamespaces are never deleted, whatever --agent-namespace says.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, "kube-node-lease"}

// Complete takes the factory; uninstall has no arguments.
func (o *UninstallOptions) Complete(f *cmdutil.Factory, _ []string) error {
	o.f = f
	return nil
}

// Validate checks the flags before anything is contacted.
func (o *UninstallOptions) Validate() error { return checkTimeout(o.Timeout) }

// Run deletes the agent's objects, releases the networks' NADs, then deletes the
// k8s.ovn.org CRDs.
func (o *UninstallOptions) Run(ctx context.Context) error {
	crds, _, agent, err := manifestObjects(manifests.AgentOptions{Namespace: o.f.Settings.AgentNamespace})
	if err != nil {
		return err
	}
	conn, err := o.f.Connect()
	if err != nil {
		return err
	}
	c := conn.Client
	var doomed []string
	if !o.KeepCRDs {
		if doomed, err = customObjects(ctx, c, crds); err != nil {
			return conn.Explain(err)
		}
		if len(doomed) > 0 && !o.Yes {
			return fmt.Errorf("refusing to delete the CRDs, which would delete %s (%s): pass --yes to delete them, or --keep-crds to remove only the agent",
				countObjects(len(doomed)), summarize(doomed))
		}
	}
	slices.Reverse(agent) // the namespace last: deleting it deletes what it holds
	for _, obj := range agent {
		if err := o.delete(ctx, c, obj); err != nil {
			return conn.Explain(err)
		}
	}
	if err := o.releaseNADs(ctx, c, agent); err != nil {
		return conn.Explain(err)
	}
	if o.KeepCRDs {
		return nil
	}
	if len(doomed) > 0 {
		fmt.Fprintf(o.f.ErrOut, "Deleting the CRDs deletes %s: %s\n", countObjects(len(doomed)), summarize(doomed))
	}
	for _, crd := range crds {
		if err := o.delete(ctx, c, crd); err != nil {
			return err
		}
	}
	return waitGone(ctx, c, crds, o.Timeout, o.f.ProgressLine())
}

// releaseNADs waits for the agent's pods to be gone, then removes the leader's finalizer
// from the networks' NADs, which nothing else would remove, and reports each.
func (o *UninstallOptions) releaseNADs(ctx context.Context, c client.Client, agent []*unstructured.Unstructured) error {
	i := slices.IndexFunc(agent, func(obj *unstructured.Unstructured) bool { return obj.GetKind() == "DaemonSet" })
	if i < 0 {
		return fmt.Errorf("the agent's manifests hold no DaemonSet")
	}
	left, err := waitAgentGone(ctx, c, agent[i], o.Timeout, o.f.ProgressLine())
	if err != nil {
		return err
	}
	if len(left) > 0 {
		fmt.Fprintf(o.f.ErrOut, "Warning: after %s, agent pods are still there (%s); their RBAC is gone, so they can no longer write NADs\n",
			o.Timeout, summarize(left))
	}
	released, err := releaseNADs(ctx, c)
	for _, key := range released {
		fmt.Fprintf(o.f.Out, "%s/%s released (namespace %s): finalizer %s removed\n",
			nadKind, key.Name, key.Namespace, cluster.FinalizerUserDefinedNetwork)
	}
	return err
}

// delete deletes obj and reports it, or that it was not there. A namespace that ovnk
// did not label as its own, or a system namespace, is kept.
func (o *UninstallOptions) delete(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	if obj.GetKind() == "Namespace" {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(o.f.Out, "%s not found\n", displayName(obj))
			return nil
		case err != nil:
			return fmt.Errorf("get %s: %w", displayName(obj), err)
		case slices.Contains(systemNamespaces, obj.GetName()) || current.GetLabels()[manifests.LabelPartOf] != "ovnk":
			fmt.Fprintf(o.f.Out, "%s kept (not ovnk's own namespace)\n", displayName(obj))
			return nil
		}
	}
	err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(o.f.Out, "%s not found\n", displayName(obj))
	case err != nil:
		return fmt.Errorf("delete %s: %w", displayName(obj), err)
	default:
		fmt.Fprintf(o.f.Out, "%s deleted\n", displayName(obj))
	}
	return nil
}

// customObjects names every object of the CRDs' kinds, e.g. "ClusterUserDefinedNetwork
// blue" or "UserDefinedNetwork ns/red". A kind the cluster does not serve has none.
func customObjects(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) ([]string, error) {
	var names []string
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if len(versions) == 0 {
			continue
		}
		version, _, _ := unstructured.NestedString(versions[0].(map[string]any), "name")
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(group + "/" + version)
		list.SetKind(kind + "List")
		if err := c.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("list %s objects: %w", kind, err)
		}
		for _, item := range list.Items {
			name := item.GetName()
			if item.GetNamespace() != "" {
				name = item.GetNamespace() + "/" + name
			}
			names = append(names, kind+" "+name)
		}
	}
	return names, nil
}

// countObjects says how many k8s.ovn.org objects there are, e.g. "1 k8s.ovn.org object".
func countObjects(n int) string {
	if n == 1 {
		return "1 k8s.ovn.org object"
	}
	return fmt.Sprintf("%d k8s.ovn.org objects", n)
}

// maxNamed bounds how many objects a message names.
const maxNamed = 3

// summarize names the first few objects and counts the rest.
func summarize(names []string) string {
	s := strings.Join(names[:min(len(names), maxNamed)], ", ")
	if len(names) > maxNamed {
		s += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	return s
}
