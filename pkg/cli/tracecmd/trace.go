// Package tracecmd implements `kubectl ovnk trace SRC DST`: a packet simulated from a
// pod or node to a pod, node or address through the OVN zones on its way, hop by hop,
// naming the NB row — and the Kubernetes object behind it — that decided each hop.
package tracecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/trace"
)

// options are the command's flags.
type options struct {
	proto, network, nb string
	port               int
	ipv6, noReply      bool
	save, fromFile     string
	out                *cmdutil.Output

	f     *cmdutil.Factory
	flags *pflag.FlagSet
	// args are SRC and DST, none with --from-file.
	args []string
	// packet is what the flags ask of the packet, read by Validate.
	packet packetFlags
}

// New returns the `trace` command.
func New(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "trace SRC DST",
		Short: "Follow a packet from a pod or node through every OVN zone on its way",
		Long: `Simulate a packet from SRC to DST through the logical network that the nodes' OVN
Northbound databases describe, crossing from zone to zone as the packet does, and
print every hop: the zone, the switch or router, the ports, what happened, and the
NB row that decided it with the Kubernetes object behind the row (network, node,
ClusterNetworkConnect, EgressIP). Then the verdict: delivered to a pod, answered by a
router, dropped by a row, no route, or left the cluster through a node's gateway.
A delivered packet's reply is traced back too, unless --no-reply.

SRC is a pod as [NAMESPACE/]POD (the namespace of -n or the kubeconfig unless
named), a pod's IP address, or node/NAME for a node's own traffic, which enters
through the node's management port.
DST is a pod (reached at its address on SRC's network when it has one, else on its
primary network), node/NAME (its primary address), or any IP address.

Only the zones the packet reaches are read, through each node's agent with
pods/exec (ovnk's agent, or on a cluster run by upstream OVN-Kubernetes the node's
ovnkube-node pod, found with no configuration) or from the NB endpoints of --nb or
the settings' nb-endpoints. --save writes everything the trace read to a file that
--from-file replays anywhere, without a cluster.

The exit status is 0 whenever the trace ran, whatever its verdict. It is 1, with one
line of error, when SRC, DST or a flag is wrong, the cluster cannot be reached, or the
zone of SRC's or DST's node cannot be read.`,
		Example: `  # From a pod to another pod of its namespace, and back
  kubectl ovnk trace web db -n blue

  # TCP to port 443 of a pod in another namespace
  kubectl ovnk trace blue/web green/api --proto tcp --port 443

  # From a pod to an address outside the cluster: which node does it leave through?
  kubectl ovnk trace blue/web 8.8.8.8

  # From a node to a pod, over IPv6, as JSON
  kubectl ovnk trace node/worker1 blue/web -6 -o json

  # Keep what the trace read, and replay it later without the cluster
  kubectl ovnk trace blue/web blue/db --save trace.json
  kubectl ovnk trace --from-file trace.json`,
		ValidArgsFunction: completeEndpoint(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.flags = cmd.Flags()
	o.out = cmdutil.AddDataOutputFlag(cmd)
	cmd.Flag("output").Usage = "output format: json, yaml, jsonpath=…, go-template=… (default: text)"
	fs := cmd.Flags()
	fs.StringVar(&o.proto, "proto", string(trace.ICMP), "the packet's transport: tcp, udp or icmp (an echo request)")
	fs.IntVar(&o.port, "port", 0, "the destination port, for --proto tcp or udp")
	fs.StringVar(&o.network, "network", "", "the source's network, when it has several: default, a ClusterUserDefinedNetwork's name, NAMESPACE/NAME of a UserDefinedNetwork, or an OVN network name (default: the pod's primary network)")
	fs.BoolVarP(&o.ipv6, "ipv6", "6", false, "trace IPv6 (default: IPv4 when both ends have it)")
	fs.BoolVar(&o.noReply, "no-reply", false, "trace only the forward direction, not the reply")
	fs.StringVar(&o.nb, "nb", "", "read every zone from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of through the nodes' agents (ovnk's, or upstream's ovnkube-node pods)")
	fs.StringVar(&o.save, "save", "", "also write everything the trace read (zones, chassis, pods, request) to this file, for --from-file")
	fs.StringVar(&o.fromFile, "from-file", "", "replay a trace written by --save, without a cluster")
	_ = cmd.RegisterFlagCompletionFunc("network", f.CompleteNames(livezone.ListNetworkNames))
	_ = cmd.RegisterFlagCompletionFunc("proto", cobra.FixedCompletions([]string{"tcp", "udp", "icmp"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the factory and SRC and DST.
func (o *options) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks the arguments and the flags before anything is read, and keeps
// those that shape the packet.
func (o *options) Validate() error {
	if o.fromFile != "" {
		if len(o.args) > 0 {
			return fmt.Errorf("--from-file replays the saved trace's own SRC and DST: drop %s", strings.Join(o.args, " "))
		}
	} else if len(o.args) != 2 {
		return fmt.Errorf("trace takes SRC and DST, got %d argument(s): e.g. kubectl ovnk trace blue/web blue/db", len(o.args))
	}
	if err := o.out.Validate(); err != nil {
		return err
	}
	if o.out.Format() == "name" {
		return fmt.Errorf("-o name needs named objects, and a trace has none: use -o json, yaml or jsonpath")
	}
	if o.fromFile != "" {
		for _, name := range []string{"proto", "port", "network", "ipv6", "nb", "save"} {
			if o.flags.Changed(name) {
				return fmt.Errorf("--from-file replays the saved trace as it was, and --%s would change it: drop --%s", name, name)
			}
		}
		return nil
	}
	var err error
	o.packet, err = o.packetFlags()
	return err
}

// packetFlags reads the flags that shape the packet.
func (o *options) packetFlags() (packetFlags, error) {
	pf := packetFlags{proto: trace.Proto(o.proto), network: o.network, ipv6: o.ipv6, reply: !o.noReply}
	portSet := o.flags.Changed("port")
	switch pf.proto {
	case trace.TCP, trace.UDP:
		if !portSet {
			return pf, fmt.Errorf("--proto %s needs --port, the destination port", o.proto)
		}
	case trace.ICMP:
		if portSet {
			return pf, fmt.Errorf("--port is for --proto tcp or udp, and this trace sends icmp: add --proto tcp or --proto udp")
		}
	default:
		return pf, fmt.Errorf("unknown --proto %q: use tcp, udp or icmp", o.proto)
	}
	if portSet && (o.port < 1 || o.port > 65535) {
		return pf, fmt.Errorf("--port %d is no port: use 1 to 65535", o.port)
	}
	pf.port = uint16(o.port)
	return pf, nil
}

// Run traces: the request of a --from-file, or SRC to DST in the live cluster.
func (o *options) Run(ctx context.Context) error {
	if o.fromFile != "" {
		return o.replay(ctx, o.f)
	}
	return o.run(ctx, o.f, o.args[0], o.args[1], o.packet)
}

// run resolves SRC and DST in the live cluster, traces, and prints.
func (o *options) run(ctx context.Context, f *cmdutil.Factory, srcArg, dstArg string, pf packetFlags) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	src, err := parseEndpoint("SRC", srcArg, ns)
	if err != nil {
		return err
	}
	dst, err := parseEndpoint("DST", dstArg, ns)
	if err != nil {
		return err
	}
	conn, err := f.Connect()
	if err != nil {
		return err
	}
	inv, err := loadInventory(ctx, conn)
	if err != nil {
		return err
	}
	if inv.warning != "" {
		fmt.Fprintf(f.ErrOut, "Warning: %s\n", inv.warning)
	}
	zones := newZoneCache(livezone.For(f, o.nb))
	r := newResolver(inv, zones, ns)
	req, err := r.resolve(ctx, src, dst, pf)
	if err != nil {
		return err
	}
	res, err := trace.Trace(ctx, r.cluster, req)
	if err != nil {
		return traceError(src.arg, dst.arg, err)
	}
	if o.save != "" {
		if err := newSnapshot(src, dst, req, inv, zones).write(o.save); err != nil {
			return err
		}
		fmt.Fprintf(f.ErrOut, "Saved what the trace read to %s; replay it with: kubectl ovnk trace --from-file %s\n", o.save, o.save)
	}
	return o.print(f, res)
}

// replay traces the request of a --save file through its zones.
func (o *options) replay(ctx context.Context, f *cmdutil.Factory) error {
	s, err := readSnapshot(o.fromFile)
	if err != nil {
		return err
	}
	req := s.request()
	req.Reply = req.Reply && !o.noReply
	c := trace.NewCluster(newZoneCache(s), s.Chassis, s.ports())
	res, err := trace.Trace(ctx, c, req)
	if err != nil {
		return traceError(s.Request.Src, s.Request.Dst, err)
	}
	return o.print(f, res)
}

// traceError says which trace an error is about. The simulator refuses a request it
// cannot start (a port its zone lacks, no gateway to send to) in words of its own.
func traceError(src, dst string, err error) error {
	if errors.Is(err, trace.ErrBadRequest) {
		return fmt.Errorf("cannot trace %s → %s: %w", src, dst, err)
	}
	return fmt.Errorf("trace %s → %s: %w", src, dst, err)
}

func (o *options) print(f *cmdutil.Factory, res *trace.Result) error {
	if !o.out.Human() {
		return o.out.PrintData(res, f.Out)
	}
	return writeText(f.Out, res, newStyles(f.Renderer(f.Out)), f.TableWidth())
}
