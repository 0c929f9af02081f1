package networkcmd

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	netvalidation "github.com/ovnk/ovnk/pkg/api/v1/validation"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Values of --dry-run, as kubectl has them.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// createOptions are the flags and dependencies of `network create`.
type createOptions struct {
	f      *cmdutil.Factory
	cmd    *cobra.Command
	output *cmdutil.Output

	cluster           bool
	namespaces        []string
	namespaceSelector string
	topology          string
	subnets           []string
	hostSubnet        int32
	joinSubnets       []string
	role              string
	mtu               int32
	transport         string
	outboundSNAT      string
	routing           string
	ipam              string
	dryRun            string
	// wait, timeout: create --wait; interval is the wait between two looks, which
	// tests shorten.
	wait     bool
	timeout  time.Duration
	interval time.Duration

	// args should be the new network's name.
	args []string
	// obj is the network to create, built by Validate.
	obj client.Object
}

func newCreateCmd(f *cmdutil.Factory) *cobra.Command {
	o := &createOptions{f: f, interval: waitInterval}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a network: a UserDefinedNetwork in -n's namespace, or with --cluster a ClusterUserDefinedNetwork",
		Long: `Create a network. Without --cluster it is a UserDefinedNetwork of the namespace -n
names (or the context's); with --cluster it is a ClusterUserDefinedNetwork serving
the namespaces --namespaces lists or --namespace-selector matches.

Everything is checked before anything is sent, by the same rules the API server
applies (the CRDs' validation), plus a few mistakes it lets through: a subnet with
host bits set, subnets that overlap each other or the join subnets, and, once the
cluster is read, what the leader would refuse: a NAME that OVN writes as another
network's ("-" and "." alike), a subnet of an IP family the cluster lacks, one that
leaves no address for pods, a subnet or join subnet overlapping one of the cluster's
own ranges (cluster, join, transit, masquerade and service subnets, read from the
agent's configuration), a subnet in a range pods cannot use (0.0.0.0/0, loopback,
link-local, multicast), a subnet overlapping another network of the same namespace,
or a second primary network in a namespace. Each refusal is one line naming the value
and the fix.

A Layer3 --subnet may carry its per-node prefix length: 10.128.0.0/14/23 gives each
node a /23 (the default is /24 for IPv4 and /64 for IPv6; --host-subnet sets it for
every subnet that does not carry its own). Give --subnet twice, one IPv4 and one
IPv6, for a dual-stack network.

With --wait (the default on a terminal) create then waits until the leader reports
the network ready on every node (condition NetworkReady), and exits non-zero with
the leader's condition and reason when it refuses the network or --timeout passes.`,
		Example: `  # A Layer3 primary network for namespace blue
  kubectl ovnk network create blue-net -n blue --subnet 10.10.0.0/16

  # Dual-stack, each node getting a /25 and a /64
  kubectl ovnk network create blue-net -n blue --subnet 10.10.0.0/16/25 --subnet fd00:10::/48

  # A Layer2 secondary network, printed and not created
  kubectl ovnk network create storage -n blue --topology layer2 --role secondary --subnet 192.168.50.0/24 --dry-run

  # A cluster network shared by two namespaces
  kubectl ovnk network create shared --cluster --namespaces red,green --subnet 10.20.0.0/16

  # A cluster network without overlay for namespaces labelled tenant=acme
  kubectl ovnk network create acme --cluster --namespace-selector tenant=acme --subnet 10.30.0.0/16 \
      --transport no-overlay --outbound-snat disabled --routing unmanaged`,
		RunE: cmdutil.RunE(f, o),
	}
	o.cmd = cmd
	fl := cmd.Flags()
	fl.BoolVar(&o.cluster, "cluster", false, "create a ClusterUserDefinedNetwork serving several namespaces instead of a UserDefinedNetwork of one")
	fl.StringSliceVar(&o.namespaces, "namespaces", nil, "with --cluster: the namespaces the network serves, comma-separated")
	fl.StringVar(&o.namespaceSelector, "namespace-selector", "", "with --cluster: a label selector of the namespaces the network serves, e.g. tenant=acme,env in (dev,test); '' selects every namespace")
	fl.StringVar(&o.topology, "topology", "layer3", topologyChoice.usage("layer3 gives each node a slice of the subnets behind a router; layer2 is one switch across all nodes"))
	fl.StringSliceVar(&o.subnets, "subnet", nil, "a pod subnet, CIDR or, for layer3, CIDR/HOST-PREFIX; repeat for dual-stack (one IPv4, one IPv6)")
	fl.Int32Var(&o.hostSubnet, "host-subnet", 0, "layer3: the prefix length of each node's block of every subnet that does not give its own (default 24 for IPv4, 64 for IPv6)")
	fl.StringSliceVar(&o.joinSubnets, "join-subnet", nil, fmt.Sprintf("primary networks: the subnet linking the network's router to the gateway routers, one per IP family (default %s)", joinAnd(cluster.UDNJoinSubnets())))
	fl.StringVar(&o.role, "role", "primary", roleChoice.usage("primary makes it the pods' default network; secondary an extra interface pods ask for"))
	fl.Int32Var(&o.mtu, "mtu", 0, "the pods' MTU on the network (default: the cluster's, 1400)")
	fl.StringVar(&o.transport, "transport", "", transportChoice.usage("with --cluster: how traffic crosses between nodes (default geneve)"))
	fl.StringVar(&o.outboundSNAT, "outbound-snat", "", snatChoice.usage("with --transport no-overlay: whether traffic leaving the cluster takes the node's address"))
	fl.StringVar(&o.routing, "routing", "", routingChoice.usage("with --transport no-overlay: managed lets OVN-Kubernetes set up BGP between the nodes; unmanaged leaves it to your RouteAdvertisements"))
	fl.StringVar(&o.ipam, "ipam", "", ipamChoice.usage("layer2: enabled assigns pod addresses (default); disabled leaves them to you (secondary networks only, no --subnet); persistent keeps a pod's addresses across restarts"))
	fl.StringVar(&o.dryRun, "dry-run", dryRunNone, "check without creating: client prints the network and sends no request; server has the API server check it too, creating nothing, and prints kubectl's line (-o prints the network)")
	fl.Lookup("dry-run").NoOptDefVal = dryRunClient
	fl.BoolVar(&o.wait, "wait", false, "wait until the network is ready on every node, and fail with the leader's reason if it refuses it or the timeout passes (default: true on a terminal)")
	fl.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "with --wait, how long to wait before giving up")
	for _, c := range []choice{topologyChoice, roleChoice, transportChoice, snatChoice, routingChoice, ipamChoice} {
		c.register(cmd)
	}
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{dryRunNone, dryRunClient, dryRunServer}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("namespaces", completeNamespaceList(f))
	o.output = cmdutil.AddOutputFlag(cmd)
	out := cmd.Flag("output")
	out.Usage = strings.Replace(out.Usage, "(default: a table)", "(default: a line naming the network created; yaml with --dry-run=client)", 1)
	return cmd
}

// Complete takes the factory and the new network's name.
func (o *createOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks the name and the flags, and builds the network from them, sending
// nothing.
func (o *createOptions) Validate() error {
	if len(o.args) != 1 {
		return fmt.Errorf("%s takes the new network's NAME (got %d arguments), e.g. kubectl ovnk network create blue-net -n blue --subnet 10.10.0.0/16", o.cmd.CommandPath(), len(o.args))
	}
	if o.dryRun == dryRunClient && !o.cmd.Flags().Changed("output") {
		// A client dry run is for seeing the object: print it as YAML unless -o says
		// otherwise. A server dry run prints kubectl's line, saying what the server
		// accepted.
		if err := o.cmd.Flags().Set("output", "yaml"); err != nil {
			return err
		}
	}
	if err := o.output.Validate(); err != nil {
		return err
	}
	switch {
	case o.dryRun != dryRunNone && o.wait:
		return fmt.Errorf("--wait: a dry run creates nothing to wait for: drop --wait or --dry-run")
	case !o.changed("wait"):
		o.wait = o.dryRun == dryRunNone && waitsByDefault(o.f)
	}
	var err error
	o.obj, err = o.build(o.args[0])
	return err
}

// Run creates the network, after checking it against the cluster (or prints it, for
// a client dry run).
func (o *createOptions) Run(ctx context.Context) error {
	obj := o.obj
	if o.dryRun == dryRunClient {
		return o.output.PrintObject(obj, o.f.Out)
	}
	s, err := connect(o.f)
	if err != nil {
		return err
	}
	if err := o.create(ctx, s, obj); err != nil {
		return err
	}
	if !o.wait {
		return nil
	}
	return o.waitReady(ctx, s, obj)
}

// create checks obj against the cluster and creates it, printing what was created.
func (o *createOptions) create(ctx context.Context, s *session, obj client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	if err := o.checkCluster(ctx, s, obj); err != nil {
		return err
	}
	var opts []client.CreateOption
	if o.dryRun == dryRunServer {
		opts = append(opts, client.DryRunAll)
	}
	n := netview.Of(obj)
	if err := s.Client.Create(ctx, obj, opts...); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %q already exists%s: pick another NAME, or delete it first", n.ResourceType(), n.Name(), inNamespace(n))
		}
		return s.Failed(err, "create "+n.Kind()+" "+n.Ref())
	}
	if !o.output.Human() {
		return o.output.PrintObject(obj, o.f.Out)
	}
	suffix := ""
	if o.dryRun == dryRunServer {
		suffix = " (server dry run)" // kubectl's words
	}
	_, err := fmt.Fprintf(o.f.Out, "%s/%s created%s\n", n.ResourceType(), n.Name(), suffix)
	return err
}

func inNamespace(n netview.Network) string {
	if n.Cluster() {
		return ""
	}
	return " in namespace " + n.Namespace()
}

// build turns the flags into the object to create, or the first mistake in them, as
// one line. It sends no request.
func (o *createOptions) build(name string) (client.Object, error) {
	switch o.dryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return nil, fmt.Errorf("--dry-run=%s: use --dry-run (or =client) to print the network without contacting the cluster, or --dry-run=server to have the API server check it", o.dryRun)
	}
	spec, org, err := o.networkSpec()
	if err != nil {
		return nil, err
	}
	org.add(field.NewPath("metadata", "name"), "", name)
	if o.cluster {
		return o.buildCluster(name, spec, org)
	}
	return o.buildNamespaced(name, spec, org)
}

func (o *createOptions) buildNamespaced(name string, spec ovnkv1.NetworkSpec, org origins) (client.Object, error) {
	// -n, or the kubeconfig context's namespace, as kubectl create does.
	ns, _, err := o.f.Namespace()
	if err != nil {
		return nil, err
	}
	switch {
	case len(o.namespaces) > 0 || o.changed("namespace-selector"):
		return nil, fmt.Errorf("--namespaces and --namespace-selector choose the namespaces of a cluster network: add --cluster, or use -n for a network of one namespace")
	case o.transport != "":
		return nil, fmt.Errorf("--transport %s: only a cluster network (--cluster) chooses its transport; a UserDefinedNetwork always uses Geneve", o.transport)
	}
	org.add(field.NewPath("metadata", "namespace"), "-n", ns)
	udn := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       ovnkv1.UserDefinedNetworkSpec{Topology: spec.Topology, Layer3: spec.Layer3, Layer2: spec.Layer2},
	}
	errs := append(netvalidation.StrictUserDefinedNetwork(udn), netvalidation.UserDefinedNetwork(udn)...)
	if len(errs) > 0 {
		return nil, org.explain(errs[0])
	}
	return udn, nil
}

func (o *createOptions) buildCluster(name string, spec ovnkv1.NetworkSpec, org origins) (client.Object, error) {
	if _, explicit, err := o.f.Namespace(); err != nil {
		return nil, err
	} else if explicit {
		return nil, fmt.Errorf("-n does not apply to a cluster network: list the namespaces it serves with --namespaces a,b or select them with --namespace-selector")
	}
	sel, err := o.selector()
	if err != nil {
		return nil, err
	}
	selPath := field.NewPath("spec", "namespaceSelector")
	if len(o.namespaces) > 0 {
		org.add(selPath, "--namespaces", o.namespaces...)
	} else {
		org.add(selPath, "--namespace-selector", o.namespaceSelector)
	}
	cudn := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       ovnkv1.ClusterUserDefinedNetworkSpec{NamespaceSelector: sel, Network: spec},
	}
	// The spec's fields sit under spec.network in a cluster network.
	for i := range org {
		if strings.HasPrefix(org[i].path, "spec.") && org[i].path != selPath.String() {
			org[i].path = "spec.network." + strings.TrimPrefix(org[i].path, "spec.")
		}
	}
	errs := append(netvalidation.StrictClusterUserDefinedNetwork(cudn), netvalidation.ClusterUserDefinedNetwork(cudn)...)
	if len(errs) > 0 {
		return nil, org.explain(errs[0])
	}
	return cudn, nil
}

// selector is the namespace selector of --namespaces or --namespace-selector.
func (o *createOptions) selector() (metav1.LabelSelector, error) {
	switch {
	case len(o.namespaces) > 0 && o.changed("namespace-selector"):
		return metav1.LabelSelector{}, fmt.Errorf("--namespaces and --namespace-selector both choose the namespaces: give one of them")
	case len(o.namespaces) > 0:
		for _, ns := range o.namespaces {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				return metav1.LabelSelector{}, fmt.Errorf("--namespaces %s: %q is not a namespace name: %s", strings.Join(o.namespaces, ","), ns, msgs[0])
			}
		}
		return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: o.namespaces,
		}}}, nil
	case o.changed("namespace-selector"):
		sel, err := metav1.ParseToLabelSelector(o.namespaceSelector)
		if err != nil {
			return metav1.LabelSelector{}, fmt.Errorf("--namespace-selector %q: %v (write it as kubectl -l takes it, e.g. tenant=acme or env in (dev,test))", o.namespaceSelector, err)
		}
		return *sel, nil
	}
	return metav1.LabelSelector{}, fmt.Errorf("--cluster needs the namespaces the network serves: --namespaces a,b or --namespace-selector KEY=VALUE")
}

func (o *createOptions) changed(flag string) bool { return o.cmd.Flags().Changed(flag) }

// networkSpec reads the flags that describe the network itself, recording where each
// field came from; field paths are a UserDefinedNetwork's (spec.layer3…).
func (o *createOptions) networkSpec() (ovnkv1.NetworkSpec, origins, error) {
	var org origins
	var spec ovnkv1.NetworkSpec
	topology, err := topologyChoice.parse(o.topology)
	if err != nil {
		return spec, nil, err
	}
	role, err := roleChoice.parse(o.role)
	if err != nil {
		return spec, nil, err
	}
	if err := o.transportFlags(&spec); err != nil {
		return spec, nil, err
	}
	ipam, err := ipamChoice.parse(o.ipam)
	if err != nil {
		return spec, nil, err
	}
	org.add(field.NewPath("spec", "topology"), "--topology", o.topology)
	org.add(field.NewPath("spec", "transport"), "--transport", o.transport)
	org.add(field.NewPath("spec", "noOverlay"), "--transport", o.transport)
	org.add(field.NewPath("spec", "noOverlay", "outboundSNAT"), "--outbound-snat", o.outboundSNAT)
	org.add(field.NewPath("spec", "noOverlay", "routing"), "--routing", o.routing)
	if len(o.subnets) == 0 && ipam != string(ovnkv1.IPAMDisabled) {
		return spec, nil, fmt.Errorf("--subnet is required: give the network's pod subnet, e.g. --subnet 10.128.0.0/16 (twice, one IPv4 and one IPv6, for dual-stack)")
	}
	spec.Topology = ovnkv1.NetworkTopology(topology)
	switch spec.Topology {
	case ovnkv1.NetworkTopologyLayer3:
		if o.ipam != "" {
			return spec, nil, fmt.Errorf("--ipam %s: only a layer2 network has IPAM options (--topology layer2)", o.ipam)
		}
		block := field.NewPath("spec", "layer3")
		spec.Layer3 = &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRole(role), MTU: o.mtu, JoinSubnets: cidrs(o.joinSubnets)}
		if spec.Layer3.Subnets, err = o.layer3Subnets(block, &org); err != nil {
			return spec, nil, err
		}
		o.commonOrigins(block, &org)
	case ovnkv1.NetworkTopologyLayer2:
		block := field.NewPath("spec", "layer2")
		spec.Layer2 = &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRole(role), MTU: o.mtu, JoinSubnets: cidrs(o.joinSubnets)}
		if spec.Layer2.Subnets, err = o.layer2Subnets(); err != nil {
			return spec, nil, err
		}
		spec.Layer2.IPAM = ipamConfig(ipam)
		org.add(block.Child("subnets"), "--subnet", o.subnets...)
		for i, s := range o.subnets {
			org.add(block.Child("subnets").Index(i), "--subnet", s)
		}
		org.add(block.Child("ipam"), "--ipam", o.ipam)
		o.commonOrigins(block, &org)
	}
	org.add(field.NewPath("spec", "layer3"), "--topology", o.topology)
	org.add(field.NewPath("spec", "layer2"), "--topology", o.topology)
	return spec, org, nil
}

// commonOrigins records the fields both topologies have.
func (o *createOptions) commonOrigins(block *field.Path, org *origins) {
	org.add(block.Child("role"), "--role", o.role)
	org.add(block.Child("mtu"), "--mtu", strconv.Itoa(int(o.mtu)))
	org.add(block.Child("joinSubnets"), "--join-subnet", o.joinSubnets...)
	for i, s := range o.joinSubnets {
		org.add(block.Child("joinSubnets").Index(i), "--join-subnet", s)
	}
}

func (o *createOptions) transportFlags(spec *ovnkv1.NetworkSpec) error {
	transport, err := transportChoice.parse(o.transport)
	if err != nil {
		return err
	}
	snat, err := snatChoice.parse(o.outboundSNAT)
	if err != nil {
		return err
	}
	routing, err := routingChoice.parse(o.routing)
	if err != nil {
		return err
	}
	spec.Transport = ovnkv1.TransportOption(transport)
	noOverlay := spec.Transport == ovnkv1.TransportOptionNoOverlay
	switch {
	case !noOverlay && (snat != "" || routing != ""):
		return fmt.Errorf("--outbound-snat and --routing only apply to --transport no-overlay: add it, or drop them")
	case noOverlay && (snat == "" || routing == ""):
		return fmt.Errorf("--transport no-overlay needs --outbound-snat enabled|disabled and --routing managed|unmanaged")
	case noOverlay:
		spec.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATOption(snat), Routing: ovnkv1.RoutingOption(routing)}
	}
	return nil
}

// layer3Subnets reads --subnet as CIDR or CIDR/HOST-PREFIX and applies --host-subnet to
// those without their own.
func (o *createOptions) layer3Subnets(block *field.Path, org *origins) ([]ovnkv1.Layer3Subnet, error) {
	subnets := block.Child("subnets")
	org.add(subnets, "--subnet", o.subnets...)
	var out []ovnkv1.Layer3Subnet
	usedHostFlag := false
	for i, raw := range o.subnets {
		cidr, host, err := splitHostPrefix(raw)
		if err != nil {
			return nil, err
		}
		s := ovnkv1.Layer3Subnet{CIDR: ovnkv1.CIDR(cidr), HostSubnet: host}
		org.add(subnets.Index(i), "--subnet", raw)
		if host == 0 && o.changed("host-subnet") {
			s.HostSubnet = o.hostSubnet
			usedHostFlag = true
			org.add(subnets.Index(i).Child("hostSubnet"), "--host-subnet", strconv.Itoa(int(o.hostSubnet)))
		}
		out = append(out, s)
	}
	if o.changed("host-subnet") && !usedHostFlag {
		return nil, fmt.Errorf("--host-subnet %d: every --subnet already gives its host prefix (CIDR/HOST-PREFIX); drop --host-subnet", o.hostSubnet)
	}
	return out, nil
}

// splitHostPrefix splits "10.128.0.0/14/23" into the CIDR and 23; a plain CIDR has 0.
func splitHostPrefix(raw string) (string, int32, error) {
	if strings.Count(raw, "/") < 2 {
		return raw, 0, nil
	}
	i := strings.LastIndex(raw, "/")
	host, err := strconv.ParseInt(raw[i+1:], 10, 32)
	if err != nil || host <= 0 {
		return "", 0, fmt.Errorf("--subnet %s: after the CIDR comes the prefix length of each node's block, a number as in 10.128.0.0/14/23", raw)
	}
	return raw[:i], int32(host), nil
}

func (o *createOptions) layer2Subnets() ([]ovnkv1.CIDR, error) {
	if o.changed("host-subnet") {
		return nil, fmt.Errorf("--host-subnet %d: a layer2 network has no per-node blocks (its subnets span all nodes); drop --host-subnet or use --topology layer3", o.hostSubnet)
	}
	for _, raw := range o.subnets {
		if strings.Count(raw, "/") > 1 {
			return nil, fmt.Errorf("--subnet %s: a layer2 network has no per-node blocks; give the CIDR alone, or use --topology layer3", raw)
		}
	}
	return cidrs(o.subnets), nil
}

// ipamConfig is the ipam block of --ipam's value; enabled is the default, no block.
func ipamConfig(v string) *ovnkv1.IPAMConfig {
	switch v {
	case string(ovnkv1.IPAMDisabled):
		return &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled}
	case string(ovnkv1.IPAMLifecyclePersistent):
		return &ovnkv1.IPAMConfig{Lifecycle: ovnkv1.IPAMLifecyclePersistent}
	}
	return nil
}

func cidrs(values []string) []ovnkv1.CIDR {
	if len(values) == 0 {
		return nil
	}
	out := make([]ovnkv1.CIDR, len(values))
	for i, v := range values {
		out[i] = ovnkv1.CIDR(v)
	}
	return out
}

// joinAnd writes prefixes as "a and b".
func joinAnd(prefixes []netip.Prefix) string {
	s := make([]string, len(prefixes))
	for i, p := range prefixes {
		s[i] = p.String()
	}
	return strings.Join(s, " and ")
}
