// Package installcmd implements `kubectl ovnk install` and `kubectl ovnk uninstall`: the
// server-side apply of the embedded k8s.ovn.org CRDs and the agent's namespace, RBAC,
// config and DaemonSet (pkg/manifests), the creation of the shared
// NetworkAttachmentDefinition CRD where it is absent, and their removal (the shared CRD
// excepted).
package installcmd

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// DefaultTimeout bounds the wait for the CRDs to be established (install), and each
// wait of uninstall: for the agent's pods to be gone, then for the CRDs.
const DefaultTimeout = 2 * time.Minute

// pollInterval is the wait between two looks at the CRDs.
const pollInterval = 250 * time.Millisecond

// checkTimeout refuses a --timeout that would give up before the first look.
func checkTimeout(timeout time.Duration) error {
	if timeout <= 0 {
		return fmt.Errorf("--timeout %s is not positive: give a duration such as 2m", timeout)
	}
	return nil
}

// InstallOptions are the flags and dependencies of `install`.
type InstallOptions struct {
	Image          string
	DryRun         bool
	ConfigFile     string
	UpdateStrategy string
	ForceConflicts bool
	Timeout        time.Duration
	Output         *cmdutil.Output

	f *cmdutil.Factory
	// agent is what the flags and --config ask of the agent, read by Validate.
	agent manifests.AgentOptions
}

// NewInstall returns the `install` command.
func NewInstall(f *cmdutil.Factory) *cobra.Command {
	o := &InstallOptions{f: f}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the OVN-Kubernetes CRDs and the ovnk agent (server-side apply)",
		Long: `Install the k8s.ovn.org CRDs and the ovnk agent — its namespace, service account,
RBAC, config and DaemonSet — by server-side apply with the field manager "ovnk".
The CRDs come first; the agent's objects follow once the CRDs are established.

The NetworkAttachmentDefinition CRD (k8s.cni.cncf.io), in which the agent writes a
NAD for every network, is shared with Multus: install creates it only when the cluster
has none, says whether it created or found it, and never changes or deletes it.

Installing again is safe: it changes only what differs, and with the same version and
options changes nothing. An upgraded plugin installs its own version of the agent.
Fields that another field manager set (say, kubectl edit) are a conflict, which
--force-conflicts resolves in ovnk's favour.`,
		Example: `  # Install the version matching this plugin
  kubectl ovnk install

  # Your own image and agent config, into another namespace
  kubectl ovnk install --image registry.example/ovnk-agent:dev --config agent.conf --agent-namespace ovnk

  # A new agent config, rolled out node by node by you (docs/upgrade.md)
  kubectl ovnk install --config agent.conf --update-strategy OnDelete
  kubectl delete pod -n ovnk-system -l app.kubernetes.io/name=ovnk-agent --field-selector spec.nodeName=node-1

  # What would change, checked by the API server but not stored
  kubectl ovnk install --dry-run
  kubectl ovnk install --dry-run -o yaml

  # Then wait for every agent
  kubectl ovnk status --wait`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(f, o),
	}
	cmd.Flags().StringVar(&o.Image, "image", "", "the agent's image (default "+manifests.DefaultImageRepository+":<plugin version>)")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "have the API server check every object without storing any; prints what would change")
	cmd.Flags().StringVar(&o.ConfigFile, "config", "", "the agent's config file (INI, docs/agent-config.md); checked before it is applied")
	cmd.Flags().StringVar(&o.UpdateStrategy, "update-strategy", "",
		"how a changed agent reaches the nodes: RollingUpdate (one node at a time, by itself) or OnDelete (a node's agent is replaced when you delete its pod); default: the installed agent's, RollingUpdate for a new one")
	cmd.Flags().BoolVar(&o.ForceConflicts, "force-conflicts", false, "take over fields that another field manager set")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", DefaultTimeout, "how long to wait for the CRDs to be established")
	o.Output = cmdutil.AddOutputFlag(cmd)
	return cmd
}

// Complete takes the factory; install has no arguments.
func (o *InstallOptions) Complete(f *cmdutil.Factory, _ []string) error {
	o.f = f
	return nil
}

// Validate checks the flags and reads --config, before anything is contacted.
func (o *InstallOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if err := checkImage(o.Image); err != nil {
		return err
	}
	if err := checkTimeout(o.Timeout); err != nil {
		return err
	}
	namespace := o.f.Settings.AgentNamespace
	o.agent = manifests.AgentOptions{Namespace: namespace, Image: o.Image, UpdateStrategy: appsv1.DaemonSetUpdateStrategyType(o.UpdateStrategy)}
	if o.ConfigFile != "" {
		config, err := readAgentConfig(o.ConfigFile, namespace)
		if err != nil {
			return err
		}
		o.agent.Config = config
	}
	_, _, _, err := manifestObjects(o.agent)
	return err
}

// Run applies the CRDs, creates the shared CRDs the cluster lacks, waits for them all,
// and applies the agent.
func (o *InstallOptions) Run(ctx context.Context) error {
	opts, namespace := o.agent, o.agent.Namespace
	conn, err := o.f.Connect()
	if err != nil {
		return err
	}
	c := conn.Client
	if opts.UpdateStrategy == "" {
		// The installed agent's, so that installing again in the middle of a
		// node-by-node roll-out (OnDelete) does not roll the other nodes at once.
		ds := &appsv1.DaemonSet{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: manifests.AgentName}, ds)
		if err != nil && !apierrors.IsNotFound(err) {
			return conn.Explain(err)
		}
		opts.UpdateStrategy = ds.Spec.UpdateStrategy.Type
	}
	crds, shared, agent, err := manifestObjects(opts)
	if err != nil {
		return err
	}
	a := &applier{c: c, dryRun: o.DryRun, forceConflicts: o.ForceConflicts}
	var applied []*unstructured.Unstructured
	for _, crd := range crds {
		if err := o.writeOne(crd, func() (string, error) { return a.apply(ctx, crd) }); err != nil {
			return conn.Explain(err)
		}
		applied = append(applied, crd)
	}
	for _, crd := range shared {
		if err := o.writeOne(crd, func() (string, error) { return createIfAbsent(ctx, c, crd, o.DryRun) }); err != nil {
			return conn.Explain(err)
		}
		applied = append(applied, crd)
	}
	if !o.DryRun {
		if err := waitEstablished(ctx, c, slices.Concat(crds, shared), o.Timeout, o.f.ProgressLine()); err != nil {
			return err
		}
	}
	// A dry run of an object in a namespace that does not exist yet fails: the
	// namespace would be created by this very install.
	namespaceMissing := false
	if o.DryRun {
		err := c.Get(ctx, client.ObjectKey{Name: namespace}, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get namespace %s: %w", namespace, err)
		}
		namespaceMissing = apierrors.IsNotFound(err)
	}
	for _, obj := range agent {
		if namespaceMissing && obj.GetNamespace() != "" {
			o.report(obj, created+" (dry run, not checked by the server: namespace "+namespace+" does not exist yet)")
		} else if err := o.writeOne(obj, func() (string, error) { return a.apply(ctx, obj) }); err != nil {
			return err
		}
		applied = append(applied, obj)
	}
	if !o.Output.Human() {
		return o.Output.PrintObject(objectList(applied), o.f.Out)
	}
	if !o.DryRun {
		fmt.Fprintf(o.f.ErrOut, "Installed. Wait for the agents with: kubectl ovnk status --wait\n")
	}
	return nil
}

// writeOne writes obj to the server with write (an apply, or a creation when absent) and
// reports the outcome.
func (o *InstallOptions) writeOne(obj *unstructured.Unstructured, write func() (string, error)) error {
	outcome, err := write()
	if err != nil {
		return err
	}
	if o.DryRun {
		outcome += " (server dry run)"
	}
	o.report(obj, outcome)
	return nil
}

// report prints an outcome line for the default output; -o prints the objects instead.
func (o *InstallOptions) report(obj *unstructured.Unstructured, outcome string) {
	if !o.Output.Human() {
		return
	}
	fmt.Fprintf(o.f.Out, "%s %s\n", displayName(obj), outcome)
}

// objectList wraps objs in a v1 List, as `kubectl get -o yaml` prints several objects,
// without managedFields, which only the server needs.
func objectList(objs []*unstructured.Unstructured) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, obj := range objs {
		item := obj.DeepCopy()
		item.SetManagedFields(nil)
		list.Items = append(list.Items, *item)
	}
	return list
}
