// Package versioncmd implements `kubectl ovnk version`: the plugin's version, the API
// server's, which OVN-Kubernetes runs the cluster, and which k8s.ovn.org resources the
// cluster serves.
package versioncmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/version"
)

// ovnGroup is the API group of OVN-Kubernetes' custom resources.
const ovnGroup = "k8s.ovn.org"

// Info is what `version` reports; its JSON form is stable for scripts.
type Info struct {
	Client string `json:"clientVersion"`
	Server string `json:"serverVersion,omitempty"`
	// Cluster says which OVN-Kubernetes runs the cluster: ovnk's agent, upstream's
	// ovnkube-node, or neither. Nil with --client, or when it could not be told.
	Cluster *clusterkind.Cluster `json:"cluster,omitempty"`
	// Resources lists the k8s.ovn.org resources the server serves, as "name.version";
	// a resource whose CRD is being deleted is left out.
	Resources []string `json:"ovnResources,omitempty"`
}

// Options holds the flags and dependencies of `version`.
type Options struct {
	ClientOnly bool
	Output     string

	// Discovery is a client of the cluster's discovery; a cached one is invalidated
	// first, so that CRDs deleted since it was cached are not reported.
	Discovery func() (discovery.DiscoveryInterface, error)
	// Detect tells which OVN-Kubernetes runs the cluster (clusterkind.Detect).
	Detect func(context.Context) (clusterkind.Cluster, error)
	// Width is the terminal's width, to which the text's long lines are folded; 0,
	// piped, folds none.
	Width int
	genericiooptions.IOStreams
}

// New returns the `version` command.
func New(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, the API server's, the cluster's kind and the OVN-Kubernetes resources it serves",
		Long: `Print the plugin's version, the API server's, which OVN-Kubernetes runs the
cluster, and the k8s.ovn.org resources the cluster serves.

The cluster is ovnk's when the agent's DaemonSet is in the agent namespace
(--agent-namespace), upstream OVN-Kubernetes' when an ovnkube-node DaemonSet is in
any namespace (or a distribution of it, such as OpenShift's); the line says which
DaemonSet, and whether each node is a zone of its own (interconnect) or one NB
serves them all. On an upstream cluster the read commands work with no
configuration: see docs/upstream-clusters.md.

The resources are asked of the API server afresh, not taken from
kubectl's discovery cache, so CRDs deleted since do not show; a resource whose CRD is
being deleted is left out too.`,
		Example: `  # Everything, as text
  kubectl ovnk version

  # Only the plugin, without contacting the cluster
  kubectl ovnk version --client

  # For scripts
  kubectl ovnk version -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(f, o),
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "print only the plugin's version")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: json or yaml")
	return cmd
}

// Complete takes the streams and, for the server's versions, a discovery client of the
// cluster kubectl's flags name; version has no arguments.
func (o *Options) Complete(f *cmdutil.Factory, _ []string) error {
	o.IOStreams = f.IOStreams
	o.Width = f.TableWidth()
	o.Discovery = func() (discovery.DiscoveryInterface, error) { return f.Kube.ToDiscoveryClient() }
	o.Detect = func(ctx context.Context) (clusterkind.Cluster, error) {
		conn, err := f.Connect()
		if err != nil {
			return clusterkind.Cluster{}, err
		}
		cl, err := clusterkind.Detect(ctx, conn.Clientset, f.Settings.AgentNamespace)
		if err != nil {
			return cl, conn.Explain(err)
		}
		return cl, nil
	}
	return nil
}

// Validate checks the flags before anything is contacted.
func (o *Options) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output format %q for version: use -o json or -o yaml", o.Output)
}

// Run gathers the versions and prints them. A cluster whose kind cannot be told (the
// user may read neither DaemonSet) still gets its versions, and a warning.
func (o *Options) Run(ctx context.Context) error {
	info := Info{Client: version.String()}
	if !o.ClientOnly {
		if err := o.fillServer(&info); err != nil {
			return err
		}
		cl, err := o.Detect(ctx)
		if err != nil {
			fmt.Fprintf(o.ErrOut, "Warning: which OVN-Kubernetes runs the cluster is unknown: %v\n", err)
		} else {
			info.Cluster = &cl
		}
	}
	return printInfo(o.Out, o.Output, info, o.Width)
}

func (o *Options) fillServer(info *Info) error {
	dc, err := o.Discovery()
	if err != nil {
		return fmt.Errorf("configure the API client: %w", err)
	}
	// kubectl's discovery cache (~/.kube/cache, 6 hours) would still list CRDs that
	// were deleted since, e.g. by `kubectl ovnk uninstall`: ask the server afresh.
	if cached, ok := dc.(discovery.CachedDiscoveryInterface); ok {
		cached.Invalidate()
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("ask the API server for its version: %w", err)
	}
	info.Server = sv.GitVersion
	_, lists, err := dc.ServerGroupsAndResources()
	// A broken aggregated API elsewhere must not hide our group.
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("discover the API server's resources: %w", err)
	}
	for _, list := range lists {
		gv, perr := schema.ParseGroupVersion(list.GroupVersion)
		if perr != nil || gv.Group != ovnGroup {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") { // a subresource such as status
				continue
			}
			// A CRD being deleted is still served, for reading, until its objects are
			// gone; the API server no longer creates objects of it and drops create
			// from its verbs. It is on its way out, not served for use.
			if !slices.Contains(r.Verbs, "create") {
				continue
			}
			info.Resources = append(info.Resources, r.Name+"."+gv.Version)
		}
	}
	sort.Strings(info.Resources)
	return nil
}

// printInfo writes info in format; the text's lines longer than width (when not 0) are
// folded between words, their continuations indented.
func printInfo(w io.Writer, format string, info Info, width int) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return fmt.Errorf("encode version as JSON: %w", err)
		}
		_, err = fmt.Fprintln(w, string(data))
		return err
	case "yaml":
		data, err := yaml.Marshal(info)
		if err != nil {
			return fmt.Errorf("encode version as YAML: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	var errs []error
	line := func(format string, args ...any) {
		text := fmt.Sprintf(format, args...)
		if width > 0 && len(text) > width {
			text = strings.Join(humanview.Wrap("/")(text, width-2), "\n  ")
		}
		_, err := fmt.Fprintln(w, text)
		errs = append(errs, err)
	}
	line("Client Version: %s", info.Client)
	if info.Server != "" {
		line("Server Version: %s", info.Server)
		if info.Cluster != nil {
			line("Cluster: %s", info.Cluster)
		}
		if len(info.Resources) == 0 {
			line("OVN-Kubernetes resources: none served (the OVN-Kubernetes CRDs are not installed)")
		} else {
			line("OVN-Kubernetes resources: %d served", len(info.Resources))
			for _, r := range info.Resources {
				line("  %s", r)
			}
		}
	}
	return errors.Join(errs...)
}
