package connectcmd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/table"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// connectionsOptions are the flags and dependencies of `connections`.
type connectionsOptions struct {
	f      *cmdutil.Factory
	output *cmdutil.Output
	now    func() time.Time
}

func newConnectionsCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &connectionsOptions{f: f, now: now}
	cmd := &cobra.Command{
		Use:     "connections",
		Aliases: []string{"connection", "cnc"},
		Short:   "List the connects between networks: their networks, subnets, status and progress on the nodes",
		Long: `List the ClusterNetworkConnects: the networks each connects (those it selects that
can be connected), its connect subnets, what it connects (pod, service), its status,
and on how many nodes it is programmed (NODES: the nodes whose agent reports the
connect router in its ovnk.io/zone-status annotation).

STATUS is the reason of the first condition that is False (Accepted, then Ready),
else Ready; Pending until the leader has written conditions.
` + "`kubectl ovnk connections describe NAME`" + ` says what reaches what through one connect.`,
		Example: `  # Every connect
  kubectl ovnk connections

  # What one connect makes reachable, and how far it is programmed
  kubectl ovnk connections describe blue-green

  # For scripts: a List of the ClusterNetworkConnects, or their names
  kubectl ovnk connections -o json
  kubectl ovnk connections -o name
  kubectl ovnk connections -o jsonpath='{.items[*].metadata.name}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%s takes no arguments (got %q): to see one connect, run kubectl ovnk connections describe %s", cmd.CommandPath(), args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.Validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.output = cmdutil.AddOutputFlag(cmd)
	cmd.AddCommand(newDescribeCmd(f, now))
	return cmd
}

func (o *connectionsOptions) run(ctx context.Context) error {
	s, err := open(o.f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	snap, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	if !o.output.Human() {
		return o.printObjects(snap.connects)
	}
	if len(snap.connects) == 0 {
		_, err := fmt.Fprintln(o.f.ErrOut, "No connections found: `kubectl ovnk connect A B` connects two networks.")
		return err
	}
	p := newPalette(o.f, o.f.Out)
	t := newTable(p,
		table.Column{Header: "NAME", MinWidth: 10},
		table.Column{Header: "NETWORKS", Stack: true, MinWidth: 10, Fold: foldList("/")},
		// Wide enough for an IPv4 subnet on one line; an IPv6 one may wrap after a colon.
		table.Column{Header: "SUBNETS", Stack: true, MinWidth: len("192.168.0.0/16"), Fold: foldList(":")},
		table.Column{Header: "CONNECTIVITY", Stack: true, Fold: foldList("")},
		table.Column{Header: "STATUS"},
		table.Column{Header: "NODES"},
		table.Column{Header: "AGE", Optional: 1},
	)
	reports := cluster.ReadZoneReports(snap.nodes)
	for i := range snap.connects {
		c := &snap.connects[i]
		var subnets []string
		for _, s := range c.Spec.ConnectSubnets {
			subnets = append(subnets, string(s.CIDR))
		}
		status, h := statusOf(c)
		rs := readiness(reports, c.Name)
		ready := countReady(rs)
		t.Add(
			table.Text(c.Name),
			table.List(refs(selected(c, snap.networks, snap.nsLabels).connected), p.faint),
			table.List(subnets, p.faint),
			table.List(connectivityWordsOf(c), p.faint),
			table.Styled(status, p.of(h)),
			table.Styled(strconv.Itoa(ready)+"/"+strconv.Itoa(len(rs)), p.ratio(ready, len(rs))),
			table.Text(age(c.CreationTimestamp, o.now())),
		)
	}
	return t.Render(o.f.Out, o.f.Width())
}

// printObjects prints the connects as a kubectl List, so that -o json, yaml, name and
// jsonpath give what `kubectl get clusternetworkconnects` would.
func (o *connectionsOptions) printObjects(cncs []ovnkv1.ClusterNetworkConnect) error {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for i := range cncs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cncs[i])
		if err != nil {
			return fmt.Errorf("convert ClusterNetworkConnect %s: %w", cncs[i].Name, err)
		}
		u := unstructured.Unstructured{Object: m}
		// The client leaves apiVersion and kind empty on the typed objects it reads.
		u.SetGroupVersionKind(ovnkv1.SchemeGroupVersion.WithKind("ClusterNetworkConnect"))
		list.Items = append(list.Items, u)
	}
	return o.output.PrintObject(list, o.f.Out)
}

// age is kubectl's AGE: how long ago t was, in its short form (5m, 30h, 12d).
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
