package networkcmd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Defaults of create --wait.
const (
	defaultWaitTimeout = 2 * time.Minute
	// waitInterval is the wait between two looks: about the pace of the agents' zone
	// reports, so each look can see something new.
	waitInterval = 2 * time.Second
)

// waitsByDefault reports whether create waits when --wait is not given: on a terminal,
// where someone watches, and not in a script, which may not expect it.
func waitsByDefault(f *cmdutil.Factory) bool {
	if f.IsTerminal != nil {
		return f.IsTerminal(f.Out)
	}
	return cmdutil.IsTerminal(f.Out)
}

// waitReady looks at the created network until the leader reports it ready on every
// node (NetworkReady True), and fails naming the condition and its reason when the
// leader refuses it (NetworkCreated False) or the timeout passes first. Only
// conditions of the network's current generation count.
func (o *createOptions) waitReady(ctx context.Context, s *session, obj client.Object) error {
	n := netview.Of(obj)
	fmt.Fprintf(o.f.ErrOut, "Waiting up to %s for %s %s to be ready on every node (--wait=false does not wait)\n", o.timeout, n.Kind(), n.Ref())
	var last *metav1.Condition
	var refused error
	err := wait.PollUntilContextTimeout(ctx, o.interval, o.timeout, true, func(ctx context.Context) (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			// A look cut short by the timeout (client-go's rate limiter refuses a
			// request it cannot send before the deadline) is the timeout, reported
			// with the last condition seen, not an error of its own.
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < o.interval {
				return false, nil
			}
			return false, s.Failed(err, "get "+n.Kind()+" "+n.Ref())
		}
		conds, gen := netview.Of(obj).Conditions(), obj.GetGeneration()
		current := func(t string) *metav1.Condition {
			if c := meta.FindStatusCondition(conds, t); c != nil && c.ObservedGeneration == gen {
				return c
			}
			return nil
		}
		if c := current(ovnkv1.ConditionNetworkCreated); c != nil && c.Status == metav1.ConditionFalse {
			refused = fmt.Errorf("%s %s was created, but the leader refuses it: %s False (%s): %s (kubectl ovnk network delete %s deletes it)",
				n.Kind(), n.Ref(), c.Type, c.Reason, c.Message, deleteArg(n))
			return true, nil
		}
		if c := current(cluster.ConditionNetworkReady); c != nil {
			last = c
			return c.Status == metav1.ConditionTrue, nil
		}
		return false, nil
	})
	switch {
	case refused != nil:
		return refused
	case wait.Interrupted(err) && last != nil:
		return fmt.Errorf("%s %s is not ready after %s: %s %s (%s): %s: see kubectl ovnk network describe %s, or wait longer with --timeout",
			n.Kind(), n.Ref(), o.timeout, last.Type, last.Status, last.Reason, last.Message, deleteArg(n))
	case wait.Interrupted(err):
		return fmt.Errorf("%s %s has no %s condition after %s: is the ovnk agent running (kubectl ovnk status)?", n.Kind(), n.Ref(), cluster.ConditionNetworkReady, o.timeout)
	case err != nil:
		return err
	}
	fmt.Fprintf(o.f.ErrOut, "%s %s is ready: %s\n", n.Kind(), n.Ref(), last.Message)
	return nil
}

// deleteArg names the network as describe and delete take it.
func deleteArg(n netview.Network) string {
	if n.Cluster() {
		return n.Name() + " --cluster"
	}
	return n.Ref()
}
