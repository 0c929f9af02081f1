package networkcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// listOptions are the flags and dependencies of `network list`.
type listOptions struct {
	f      *cmdutil.Factory
	output *cmdutil.Output
	list   *cmdutil.ListFlags
	now    func() time.Time
	// cluster says that the NAMEs are ClusterUserDefinedNetworks (--cluster).
	cluster bool
	// args name the networks to show, none for all; targets are them read.
	args    []string
	targets []netview.Target
}

func newListCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &listOptions{f: f, now: now}
	cmd := &cobra.Command{
		Use:     "list [NAME | NAMESPACE/NAME ...]",
		Aliases: []string{"ls"},
		Short:   "List networks: where each one applies, its shape, and on how many nodes it is ready",
		Long: `List the ClusterUserDefinedNetworks and the UserDefinedNetworks of every namespace, or,
with -n, the networks of one namespace (its own and the cluster networks selecting it);
-A lists every namespace's whatever -n says. Networks given by NAME are shown alone,
named as network describe takes them (NAME with -n for a UserDefinedNetwork of that
namespace; --cluster when a UserDefinedNetwork has a ClusterUserDefinedNetwork's name).

NAME is how the other commands take the network: NAMESPACE/NAME for a
UserDefinedNetwork, NAME for a ClusterUserDefinedNetwork. READY counts the nodes
whose agent reports the network programmed in its zone (the ovnk.io/zone-status
annotation of each Node). STATUS is Ready, Pending (some zones have not programmed
it yet), or why the leader refused the network (the reason of its NetworkCreated
condition, e.g. SubnetOverlap: network describe shows the message). On a cluster
run by upstream OVN-Kubernetes no node reports its zone: READY is "-" and STATUS
comes from the conditions its cluster manager sets, Ready when NetworkCreated and
NetworkAllocationSucceeded are True. CONNECTED names
the ClusterNetworkConnects that select the network.

On a terminal the table fits its width: cells of several values stack, and AGE,
then CONNECTED, then SUBNETS are left out; no name is ever split. Piped, every
network is one line. -o wide adds TRANSPORT and the OVN network name.

As with kubectl get: -l selects networks by their labels (the API server matches
them); --sort-by orders the table or the List by a field of the network objects;
-o custom-columns shows the fields you choose; -w, after the list, prints a network
again each time its object changes (a deleted one with STATUS Deleted), until
Ctrl-C. A network changes when the leader updates its conditions, so READY moves as
the nodes program it.`,
		Example: `  # Every network of the cluster
  kubectl ovnk network list

  # The networks pods of namespace blue can use
  kubectl ovnk network list -n blue

  # Two networks, named as network describe takes them
  kubectl ovnk network get blue/tenant shared

  # Every column, with the transport and the OVN network name
  kubectl ovnk network list -o wide

  # The networks labelled tier=web, the newest last
  kubectl ovnk network list -l tier=web --sort-by .metadata.creationTimestamp

  # Fields of your choice
  kubectl ovnk network list -o custom-columns=NAME:.metadata.name,NAMESPACE:.metadata.namespace,KIND:.kind

  # Follow the networks as they change, until Ctrl-C
  kubectl ovnk network list -w

  # For scripts: a List of the network objects, or only their names
  kubectl ovnk network list -o json
  kubectl ovnk network list -o name
  kubectl ovnk network list -o jsonpath='{.items[*].metadata.name}'`,
		ValidArgsFunction: f.CompleteNames(completeNetworks(f)),
		RunE:              cmdutil.RunE(f, o),
	}
	o.output = cmdutil.AddOutputFlag(cmd, "wide")
	o.list = cmdutil.AddListFlags(cmd, "networks", true)
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "the NAMEs are ClusterUserDefinedNetworks")
	return cmd
}

// Complete takes the factory and the networks named.
func (o *listOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks the flags and reads the names before anything is contacted.
func (o *listOptions) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	if err := o.list.Validate(); err != nil {
		return err
	}
	switch {
	case len(o.args) == 0 && o.cluster:
		return errors.New("--cluster says that the NAMEs given are ClusterUserDefinedNetworks, and none is given: name them, or drop --cluster")
	case len(o.args) == 0:
		return nil
	case o.list.Selector != "":
		return fmt.Errorf("-l %s chooses networks by their labels, and networks are also named (%s): give one or the other", o.list.Selector, o.args[0])
	case o.list.AllNamespaces:
		return fmt.Errorf("-A lists the networks of every namespace, and networks are also named (%s): name a UserDefinedNetwork as NAMESPACE/NAME, or drop the names", o.args[0])
	}
	o.targets = nil
	for _, arg := range o.args {
		t, err := netview.TargetOf(o.f, arg, o.cluster)
		if err != nil {
			return err
		}
		o.targets = append(o.targets, t)
	}
	return nil
}

// listing is what the list shows, and what it was read with.
type listing struct {
	// ns is -n's namespace when the list is of it, else "".
	ns string
	// nsLabels are the labels of ns, whose cluster networks are those selecting it.
	nsLabels map[string]string
	nets     []netview.Network
	// versions are those of the lists, from which -w follows on.
	versions netview.NetworkList
	// named are the keys (networkKey) of the networks named, nil when none is: -w
	// shows only those.
	named map[string]bool
	// missing says which names name no network: an error for after the networks
	// found are shown, as kubectl get does.
	missing error
}

// Run lists the networks, of every namespace, of -n's, or those named; with -w, then
// follows them.
func (o *listOptions) Run(ctx context.Context) error {
	s, err := connect(o.f)
	if err != nil {
		return err
	}
	look, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	l, err := o.read(look, s)
	if err != nil {
		return err
	}
	if err := o.sort(l); err != nil {
		return err
	}
	view := newListView(o, s)
	if err := view.start(look, l); err != nil {
		return err
	}
	if l.missing != nil || !o.list.Watch {
		return l.missing
	}
	return view.follow(ctx, l)
}

// read reads what the list shows.
func (o *listOptions) read(ctx context.Context, s *session) (*listing, error) {
	if len(o.targets) > 0 {
		return o.readNamed(ctx, s)
	}
	l := &listing{}
	ns, explicit, err := o.f.Namespace()
	if err != nil {
		return nil, err
	}
	if explicit && !o.list.AllNamespaces {
		l.ns = ns
	}
	if l.versions, err = s.ListNetworks(ctx, l.ns, o.list.ListOptions()...); err != nil {
		return nil, err
	}
	l.nets = l.versions.Networks
	sortNetworks(l.nets)
	if l.ns != "" {
		got, err := s.namespace(ctx, l.ns)
		if err != nil {
			return nil, err
		}
		l.nsLabels = got.Labels
		l.nets = servingNamespace(l.nets, l.ns, got.Labels)
	}
	return l, nil
}

// readNamed finds the networks named, as network describe finds one.
func (o *listOptions) readNamed(ctx context.Context, s *session) (*listing, error) {
	l := &listing{named: map[string]bool{}}
	if o.list.Watch {
		// Only the versions, from before the networks are read: the watch sees
		// every change after them.
		var err error
		if l.versions, err = s.ListNetworks(ctx, "", client.Limit(1)); err != nil {
			return nil, err
		}
	}
	var missing []error
	for _, t := range o.targets {
		n, err := s.Resolve(ctx, t)
		var nf *netview.NotFoundError
		if errors.As(err, &nf) {
			missing = append(missing, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		if key := networkKey(n); !l.named[key] {
			l.named[key] = true
			l.nets = append(l.nets, n)
		}
	}
	l.missing = errors.Join(missing...)
	return l, nil
}

// sort orders the networks by --sort-by, if given.
func (o *listOptions) sort(l *listing) error {
	objs := objects(l.nets)
	if err := o.list.Sort(objs); err != nil {
		return err
	}
	for i, obj := range objs {
		l.nets[i] = netview.Of(obj)
	}
	return nil
}

// shows reports whether the list shows n, a network that changed while watching.
func (l *listing) shows(n netview.Network) bool {
	if l.named != nil {
		return l.named[networkKey(n)]
	}
	return l.ns == "" || len(servingNamespace([]netview.Network{n}, l.ns, l.nsLabels)) > 0
}

// networkKey tells networks apart: a UserDefinedNetwork and a
// ClusterUserDefinedNetwork may have the same name.
func networkKey(n netview.Network) string { return n.Kind() + "/" + n.Ref() }

// servingNamespace keeps the networks of namespace ns: its UserDefinedNetworks and the
// ClusterUserDefinedNetworks that select it.
func servingNamespace(nets []netview.Network, ns string, nsLabels map[string]string) []netview.Network {
	var out []netview.Network
	for _, n := range nets {
		if served, err := n.Namespaces(map[string]map[string]string{ns: nsLabels}); err == nil && slices.Contains(served, ns) {
			out = append(out, n)
		}
	}
	return out
}

// objects are the networks' API objects.
func objects(nets []netview.Network) []client.Object {
	objs := make([]client.Object, len(nets))
	for i, n := range nets {
		objs[i] = n.Object()
	}
	return objs
}
