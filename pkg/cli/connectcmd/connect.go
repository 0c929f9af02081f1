package connectcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// Values of --dry-run, as kubectl has them.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// connectivityWord is a value of --connectivity and what it requests.
type connectivityWord struct {
	word string
	api  ovnkv1.ConnectivityType
}

// connectivityWords are --connectivity's values.
var connectivityWords = []connectivityWord{
	{"pod", ovnkv1.ConnectivityPodNetwork},
	{"service", ovnkv1.ConnectivityClusterIPServiceNetwork},
}

// servicesNotProgrammed is said wherever ClusterIPServiceNetwork was requested: the API
// accepts it, but the agent does not program services yet.
const servicesNotProgrammed = "only pod connectivity is programmed: ovnk does not program ClusterIP services between connected networks yet"

// connectOptions are the flags and dependencies of `connect`.
type connectOptions struct {
	f      *cmdutil.Factory
	cmd    *cobra.Command
	output *cmdutil.Output

	name          string
	subnets       []string
	networkPrefix int
	connectivity  []string
	dryRun        string
	// serviceCIDRs is the deprecated --service-cidr.
	serviceCIDRs []string

	// args name the networks.
	args []string
	// req is what the arguments and flags ask, read by Validate.
	req *request
}

func newConnectCmd(f *cmdutil.Factory) *cobra.Command {
	o := &connectOptions{f: f}
	cmd := &cobra.Command{
		Use:   "connect NETWORK NETWORK [NETWORK…]",
		Short: "Connect networks so that their pods reach each other (a ClusterNetworkConnect)",
		Long: `Connect two or more primary networks: OVN-Kubernetes joins their routers through a
connect router, so pods of each network reach pods of the others, both ways. A
network is named NAME for a ClusterUserDefinedNetwork and NAMESPACE/NAME for a
UserDefinedNetwork. Connecting is not transitive: networks in two different connects
do not reach each other through a network they share.

The ClusterNetworkConnect created selects exactly the named networks: the
UserDefinedNetworks through their namespaces' names, the ClusterUserDefinedNetworks
through the label ` + NetworkNameLabel + `=NAME, which connect adds to each of them that
lacks it (and leaves in place afterwards: it only names the network).

The links between the connect router and the networks' routers take their
addresses from --subnet: each network gets a block of it (--network-prefix long),
and a Layer3 network uses two addresses of its block per node, a Layer2 network
two in all. The default is 192.168.0.0/16 with a /24 per network, and for networks
with IPv6 also fd00:10::/112 with a /120 per network (the same number of links).

Before anything is created, connect refuses what the leader would not connect, in
one line naming the values and the fix: an unknown, secondary or no-overlay network;
networks whose subnets overlap; a connect subnet overlapping one of the cluster's own
ranges (cluster, join, transit, masquerade and service subnets, read from the agent's
configuration), a subnet, join subnet or transit subnet of a network it connects, or
the connect subnet of another connect of the same network; a connect subnet too small
for the networks and the cluster's nodes; and a name taken. A connect subnet
overlapping a network it does not connect is allowed, with a warning.

With -o, and with --dry-run (which prints YAML unless -o says otherwise), connect
prints every object it writes, in the order it writes them: each
ClusterUserDefinedNetwork it labels, then the connect; several objects come as a v1
List, as kubectl apply prints them. A client dry run prints a network to label as its
name, the label and its spec, so that piping the output to kubectl apply -f - labels
and creates what connect would: apply patches only what differs from the live
network, the label.`,
		Example: `  # Connect two cluster networks; the connect is called blue-green
  kubectl ovnk connect blue green

  # A cluster network and a namespace's network, with a name and a smaller range
  kubectl ovnk connect blue tenant-a/web --name blue-web --subnet 172.31.0.0/20 --network-prefix 26

  # Dual-stack networks with your own ranges
  kubectl ovnk connect blue green --subnet 172.31.0.0/16,fd00:31::/112

  # See what connect would write (the labels and the connect) without writing it
  kubectl ovnk connect blue green --dry-run`,
		ValidArgsFunction: completeNetworkArgs(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&o.name, "name", "", "the ClusterNetworkConnect's name (default: the networks' names joined by '-', e.g. blue-green)")
	fl.StringSliceVar(&o.subnets, "subnet", nil, fmt.Sprintf("the links' address space, CIDR or CIDR,CIDRv6 (default %s, with %s for networks with IPv6)", defaultConnectSubnet(true).CIDR, defaultConnectSubnet(false).CIDR))
	fl.IntVar(&o.networkPrefix, "network-prefix", defaultNetworkPrefix, "the prefix length of each network's block of --subnet; the IPv6 one is 96 longer (a length above 32 is an IPv6 one)")
	fl.StringSliceVar(&o.connectivity, "connectivity", []string{"pod"}, "what the networks reach of each other: pod, service or pod,service (ovnk programs pod connectivity only)")
	// The service subnets come from the agent's configuration now; the flag stays for
	// the scripts that pass it, and still serves where that cannot be read.
	fl.StringSliceVar(&o.serviceCIDRs, "service-cidr", nil, "the cluster's service CIDRs, one per IP family, used only when the agent's configuration cannot be read")
	_ = fl.MarkDeprecated("service-cidr", "the service subnets are read from the agent's configuration (ConfigMap ovnk-agent-config in --agent-namespace); --service-cidr is used only when that cannot be read, as the service subnets instead of ovnk's defaults")
	fl.StringVar(&o.dryRun, "dry-run", dryRunNone, "print the objects connect would write (the networks' labels and the ClusterNetworkConnect) instead of writing them: client (the cluster is only read, for the checks) or server (the API server also checks the labels and the connect, and writes nothing)")
	fl.Lookup("dry-run").NoOptDefVal = dryRunClient
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{dryRunNone, dryRunClient, dryRunServer}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("connectivity", cobra.FixedCompletions([]string{"pod", "service", "pod,service"}, cobra.ShellCompDirectiveNoFileComp))
	o.output = cmdutil.AddOutputFlag(cmd)
	out := cmd.Flag("output")
	out.Usage = strings.Replace(out.Usage, "(default: a table)", "(default: a line per object written; yaml with --dry-run)", 1)
	return cmd
}

// Complete takes the factory and the networks.
func (o *connectOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks the networks' names and the flags, refusing mistakes before the
// cluster is asked.
func (o *connectOptions) Validate() error {
	if len(o.args) < 2 {
		return fmt.Errorf("%s takes at least two networks to connect (got %d): name a ClusterUserDefinedNetwork as NAME and a UserDefinedNetwork as NAMESPACE/NAME, e.g. kubectl ovnk connect blue tenant-a/web", o.cmd.CommandPath(), len(o.args))
	}
	if o.dryRun != dryRunNone && !o.cmd.Flags().Changed("output") {
		// A dry run is for seeing the object: YAML unless -o says otherwise.
		if err := o.cmd.Flags().Set("output", "yaml"); err != nil {
			return err
		}
	}
	if err := o.output.Validate(); err != nil {
		return err
	}
	var err error
	o.req, err = o.request(o.args)
	return err
}

// Run checks the request against the cluster and creates the connect (or prints it,
// for a client dry run).
func (o *connectOptions) Run(ctx context.Context) error {
	req := o.req
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, snap, err := openSnapshot(ctx, o.f)
	if err != nil {
		return err
	}
	// The snapshot's nodes, never nil, so that the fallback does not list them again.
	nodes := append([]corev1.Node{}, snap.nodes...)
	reserved, fallback, err := s.ReservedRanges(ctx, netview.RangeSources{AgentNamespace: o.f.Settings.AgentNamespace, Nodes: nodes, ServiceSubnets: req.services})
	if err != nil {
		return err
	}
	if fallback != "" {
		fmt.Fprintf(o.f.ErrOut, "Warning: %s\n", fallback)
	}
	p, err := req.planConnect(snap, reserved)
	if err != nil {
		return err
	}
	for _, w := range p.warnings {
		fmt.Fprintf(o.f.ErrOut, "Warning: %s\n", w)
	}
	if slices.Contains(req.connectivity, ovnkv1.ConnectivityClusterIPServiceNetwork) {
		fmt.Fprintf(o.f.ErrOut, "Warning: %s requested, but %s\n", ovnkv1.ConnectivityClusterIPServiceNetwork, servicesNotProgrammed)
	}
	if o.dryRun == dryRunClient {
		var written []client.Object
		for _, n := range p.label {
			fmt.Fprintf(o.f.ErrOut, "clusteruserdefinednetwork.%s/%s labeled %s=%s (dry run)\n", ovnkv1.GroupName, n.CUDN.Name, NetworkNameLabel, n.CUDN.Name)
			u, err := labelChange(n.CUDN)
			if err != nil {
				return err
			}
			written = append(written, u)
		}
		return o.printWritten(append(written, p.connect))
	}
	return o.apply(ctx, s, p)
}

// labelChange is what a client dry run prints for a ClusterUserDefinedNetwork that
// connect would label: its name, the label and its spec as read. Applied with `kubectl
// apply`, it adds the label, as connect's patch does: apply patches only what differs
// from the live object (the label, while the network is as the dry run read it), and
// leaves labels and annotations it was not given alone. The spec is there because
// kubectl validates the object against the CRD's schema, which requires one.
func labelChange(cudn *ovnkv1.ClusterUserDefinedNetwork) (*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cudn.Spec)
	if err != nil {
		return nil, fmt.Errorf("convert the spec of ClusterUserDefinedNetwork %s: %w", cudn.Name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(ovnkv1.SchemeGroupVersion.WithKind("ClusterUserDefinedNetwork"))
	u.SetName(cudn.Name)
	u.SetLabels(map[string]string{NetworkNameLabel: cudn.Name})
	return u, nil
}

// printWritten prints, in the -o format, the objects connect wrote (or would write), in
// the order it writes them, as kubectl apply prints what it applied: one object alone,
// several as a v1 List.
func (o *connectOptions) printWritten(objs []client.Object) error {
	if len(objs) == 1 {
		return o.output.PrintObject(objs[0], o.f.Out)
	}
	return o.output.PrintList(objs, o.f.Out)
}

// apply labels the ClusterUserDefinedNetworks, then creates the connect, so that the
// connect selects every one of its networks from the start.
func (o *connectOptions) apply(ctx context.Context, s *session, p *plan) error {
	var opts []client.PatchOption
	var createOpts []client.CreateOption
	suffix := ""
	if o.dryRun == dryRunServer {
		opts, createOpts, suffix = append(opts, client.DryRunAll), append(createOpts, client.DryRunAll), " (server dry run)"
	}
	var done []string
	var written []client.Object
	for _, n := range p.label {
		if err := labelNetwork(ctx, s.Client, n.CUDN, opts...); err != nil {
			return s.Failed(err, fmt.Sprintf("label ClusterUserDefinedNetwork %s %s=%s", n.CUDN.Name, NetworkNameLabel, n.CUDN.Name))
		}
		done = append(done, fmt.Sprintf("clusteruserdefinednetwork.%s/%s labeled%s", ovnkv1.GroupName, n.CUDN.Name, suffix))
		written = append(written, n.CUDN)
	}
	cnc := p.connect
	if err := s.Client.Create(ctx, cnc, createOpts...); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("connect %s was created by someone else meanwhile: run the command again, or choose another --name", cnc.Name)
		}
		return s.Failed(err, "create ClusterNetworkConnect "+cnc.Name)
	}
	if !o.output.Human() {
		return o.printWritten(append(written, cnc))
	}
	done = append(done, fmt.Sprintf("clusternetworkconnect.%s/%s created%s", ovnkv1.GroupName, cnc.Name, suffix))
	_, err := fmt.Fprintln(o.f.Out, strings.Join(done, "\n"))
	return err
}

// labelNetwork sets NetworkNameLabel on cudn, as read by the plan, under an optimistic
// lock. A conflict is mostly the leader's own writes to a network just created (its
// id, its status): cudn is then read again and, unless its label now names another
// network (otherNetworksName), labelled again. A label naming cudn already is left.
func labelNetwork(ctx context.Context, c client.Client, cudn *ovnkv1.ClusterUserDefinedNetwork, opts ...client.PatchOption) error {
	first := true
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(cudn), cudn); err != nil {
				return err
			}
			if err := otherNetworksName(cudn); err != nil {
				return err
			}
			if cudn.Labels[NetworkNameLabel] == cudn.Name {
				return nil
			}
		}
		first = false
		before := cudn.DeepCopy()
		if cudn.Labels == nil {
			cudn.Labels = map[string]string{}
		}
		cudn.Labels[NetworkNameLabel] = cudn.Name
		return c.Patch(ctx, cudn, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), opts...)
	})
}

// request reads the arguments and flags, refusing mistakes before the cluster is asked.
func (o *connectOptions) request(args []string) (*request, error) {
	switch o.dryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return nil, fmt.Errorf("--dry-run=%s: use --dry-run (or =client) to print the connect without creating it, or --dry-run=server to have the API server check it", o.dryRun)
	}
	if _, explicit, err := o.f.Namespace(); err != nil {
		return nil, err
	} else if explicit {
		return nil, fmt.Errorf("-n does not apply to connect: name a UserDefinedNetwork as NAMESPACE/NAME, e.g. kubectl ovnk connect blue tenant-a/web")
	}
	for i, arg := range args {
		if err := checkRef(arg); err != nil {
			return nil, err
		}
		if slices.Contains(args[:i], arg) {
			return nil, fmt.Errorf("network %s is named twice: name each network once", arg)
		}
	}
	r := &request{args: args, name: o.name, networkPrefix: o.networkPrefix}
	if o.name != "" {
		if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
			return nil, fmt.Errorf("--name %q: %s", o.name, msgs[0])
		}
	}
	var err error
	if o.cmd.Flags().Changed("subnet") {
		if r.subnets, err = parseCIDRs("subnet", o.subnets); err != nil {
			return nil, err
		}
		if len(r.subnets) == 0 {
			return nil, fmt.Errorf("--subnet is empty: give a CIDR such as 192.168.0.0/16, or leave the flag out for the default")
		}
	}
	if r.services, err = parseCIDRs("service-cidr", o.serviceCIDRs); err != nil {
		return nil, err
	}
	if o.networkPrefix < 1 || o.networkPrefix > 127 {
		return nil, fmt.Errorf("--network-prefix %d: give the prefix length of each network's block, e.g. 24 (IPv4) or 120 (IPv6)", o.networkPrefix)
	}
	if r.connectivity, err = parseConnectivity(o.connectivity); err != nil {
		return nil, err
	}
	return r, nil
}

// parseConnectivity reads --connectivity: pod and service, or the API's PodNetwork and
// ClusterIPServiceNetwork, in any case, each once.
func parseConnectivity(values []string) ([]ovnkv1.ConnectivityType, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("--connectivity is empty: use pod, service or pod,service")
	}
	var out []ovnkv1.ConnectivityType
	for _, v := range values {
		i := slices.IndexFunc(connectivityWords, func(w connectivityWord) bool {
			return strings.EqualFold(v, w.word) || strings.EqualFold(v, string(w.api))
		})
		switch {
		case i < 0:
			return nil, fmt.Errorf("--connectivity %s: %q is not a kind of connectivity; use pod, service or pod,service", strings.Join(values, ","), v)
		case slices.Contains(out, connectivityWords[i].api):
			return nil, fmt.Errorf("--connectivity %s: %s is given twice; give each once", strings.Join(values, ","), connectivityWords[i].word)
		}
		out = append(out, connectivityWords[i].api)
	}
	return out, nil
}
