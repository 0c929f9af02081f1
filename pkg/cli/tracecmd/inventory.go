package tracecmd

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/trace"
)

// inventory is what a trace needs to know of the cluster besides the zones: its nodes
// and every pod with its logical ports, each on its network as users name it. Every
// pod, not only SRC and DST: an address on the path may be any pod's, and a delivered
// packet is reported by its pod's name.
type inventory struct {
	nodes []string // sorted
	// chassis maps a chassis name to its node (k8s.ovn.org/node-chassis-id).
	chassis map[string]string
	// primary is each node's k8s.ovn.org/node-primary-ifaddr.
	primary map[string][]netip.Prefix
	// pods are the pods by "namespace/name", to tell a pod that does not exist from
	// one without addresses; badPods the pods whose k8s.ovn.org/pod-networks is malformed.
	pods    map[string]bool
	badPods map[string]error
	ports   []trace.PodPort
	// warning says why ports' networks are named by their attachments, "" when they
	// are not (networkNames.warning).
	warning string

	// namespaceExists asks the cluster whether a namespace exists, to explain a pod
	// that is not found; nil when nobody can be asked.
	namespaceExists func(ctx context.Context, ns string) (bool, error)
}

// loadInventory lists the nodes, the pods and the networks, at the same time.
func loadInventory(ctx context.Context, conn *cmdutil.Connection) (*inventory, error) {
	var nodes corev1.NodeList
	var pods corev1.PodList
	var names networkNames
	var nodesErr, podsErr error
	var wg sync.WaitGroup
	wg.Go(func() { nodesErr = conn.Client.List(ctx, &nodes) })
	wg.Go(func() { podsErr = conn.Client.List(ctx, &pods) })
	wg.Go(func() { names = readNetworkNames(ctx, conn.Client) })
	wg.Wait()
	if nodesErr != nil {
		return nil, conn.Explain(fmt.Errorf("list nodes: %w", nodesErr))
	}
	if podsErr != nil {
		return nil, conn.Explain(fmt.Errorf("list pods: %w", podsErr))
	}
	inv := newInventory(nodes.Items, pods.Items, names.userName)
	inv.warning = names.warning(inv.ports)
	inv.namespaceExists = func(ctx context.Context, ns string) (bool, error) {
		err := conn.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	return inv, nil
}

// newInventory indexes nodes and pods, naming the network of each pod attachment by
// network. A node's malformed annotation costs only what it would tell (its chassis, its
// address); a pod's malformed annotation is reported when that pod is traced, and hides
// nothing else.
func newInventory(nodes []corev1.Node, pods []corev1.Pod, network func(nad string) string) *inventory {
	inv := &inventory{chassis: map[string]string{}, primary: map[string][]netip.Prefix{},
		pods: map[string]bool{}, badPods: map[string]error{}}
	for _, n := range nodes {
		inv.nodes = append(inv.nodes, n.Name)
		ref := cluster.ObjectRef{Kind: "Node", Name: n.Name}
		if id, ok, err := cluster.NodeChassisIDCodec.Lookup(ref, n.Annotations); ok && err == nil {
			inv.chassis[id] = n.Name
		}
		if addrs, ok, err := cluster.PrimaryIfAddrCodec.Lookup(ref, n.Annotations); ok && err == nil {
			inv.primary[n.Name] = addrs
		}
	}
	slices.Sort(inv.nodes)
	for i := range pods {
		p := &pods[i]
		key := p.Namespace + "/" + p.Name
		inv.pods[key] = true
		ports, err := trace.PodPortsOf(p, network)
		if err != nil {
			inv.badPods[key] = err
			continue
		}
		inv.ports = append(inv.ports, ports...)
	}
	slices.SortFunc(inv.ports, func(a, b trace.PodPort) int {
		return cmp.Or(cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Port, b.Port))
	})
	return inv
}

// hasNode reports whether the cluster has the node.
func (inv *inventory) hasNode(name string) bool {
	_, found := slices.BinarySearch(inv.nodes, name)
	return found
}

// unknownNode is the error for a node the cluster does not have.
func (inv *inventory) unknownNode(what, name string) error {
	return fmt.Errorf("unknown node %q in %s: the cluster's nodes are %s", name, what, listSome(inv.nodes))
}

// checkPod returns nil when the pod exists and its annotation could be read, and
// otherwise says what is wrong: no such namespace, no such pod (naming the
// namespace's pods), or a malformed annotation.
func (inv *inventory) checkPod(ctx context.Context, what, pod string) error {
	if err := inv.badPods[pod]; err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if inv.pods[pod] {
		return nil
	}
	ns, name, _ := strings.Cut(pod, "/")
	var others []string
	for p := range inv.pods {
		if pns, pname, _ := strings.Cut(p, "/"); pns == ns {
			others = append(others, pname)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return fmt.Errorf("no pod %q in namespace %q (%s): its pods are %s", name, ns, what, listSome(others))
	}
	if inv.namespaceExists != nil {
		if ok, err := inv.namespaceExists(ctx, ns); err == nil && !ok {
			return fmt.Errorf("unknown namespace %q (%s %s): pick the namespace with -n or write NAMESPACE/POD", ns, what, pod)
		}
	}
	return fmt.Errorf("no pod %q in namespace %q (%s): the namespace has no pods; pick another with -n or write NAMESPACE/POD", name, ns, what)
}

// maxListed is how many names an error lists before "…".
const maxListed = 5

// listSome joins up to maxListed names and says how many there are in all.
func listSome(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(names[:maxListed], ", "), len(names))
}
