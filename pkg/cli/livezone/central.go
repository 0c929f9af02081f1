package livezone

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/ovn"
)

// CentralSource reads zones on upstream OVN-Kubernetes without interconnect, where one
// NB, served by the ovnkube-db pods, holds every node's: it runs the read-only
// `ovsdb-client query` of UpstreamSource in the NB container of a ready ovnkube-db pod,
// once, and answers every node with what that read returned. A command that reads
// every node's zone (status, network list, upgrade-status) so costs one exec.
type CentralSource struct {
	Factory *cmdutil.Factory
	// Cluster is the upstream deployment Detect found; its CentralNB, when Detect
	// found it, saves looking for it again.
	Cluster clusterkind.Cluster
	// Timeout bounds finding the pod and reading the NB; 0 means DefaultExecTimeout.
	Timeout time.Duration

	// mu guards read: the read in flight or done, nil before the first call.
	mu   sync.Mutex
	read *centralRead
}

// centralRead is the one read of the central NB; done closes when nb or err is set.
type centralRead struct {
	done chan struct{}
	nb   *ovn.Dump
	err  error
}

// Dump returns the central NB as node's zone. The first call starts the read; every
// call gets its tables (which callers only read) under its own node's name, or its
// error. The read is the source's, not the first caller's: it runs to its own timeout
// whichever caller's context ends first, and a caller whose context ends while it
// waits gets that error alone, so that nodes read concurrently, each with a deadline
// of its own, cost one exec however long it takes.
func (s *CentralSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	s.mu.Lock()
	r := s.read
	if r == nil {
		r = &centralRead{done: make(chan struct{})}
		s.read = r
		go func() {
			defer close(r.done)
			r.nb, r.err = s.readNB(context.WithoutCancel(ctx))
		}()
	}
	s.mu.Unlock()
	select {
	case <-r.done:
	default:
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("read node %s's zone: waiting for the read of the central NB: %w", node, ctx.Err())
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return &ovn.Dump{SchemaVersion: r.nb.SchemaVersion, Node: node, Tables: r.nb.Tables}, nil
}

// readNB finds the workload serving the NB, a ready pod of it and the pod's NB
// container, and reads the NB there.
func (s *CentralSource) readNB(ctx context.Context) (*ovn.Dump, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Timeout, DefaultExecTimeout))
	defer cancel()
	conn, err := s.Factory.Connect()
	if err != nil {
		return nil, err
	}
	db := s.Cluster.CentralNB
	if db == nil {
		if db, err = clusterkind.FindCentralNB(ctx, conn.Clientset, s.Cluster.Namespace); err != nil {
			return nil, conn.Explain(err)
		}
	}
	pod, err := centralPod(ctx, conn.Clientset, db)
	if err != nil {
		return nil, conn.Explain(err)
	}
	container := clusterkind.NBContainer(&pod.Spec)
	if container == nil {
		return nil, fmt.Errorf("pod %s/%s of %s has no container serving an NB (containers: %s): read the zones with --nb ENDPOINT",
			pod.Namespace, pod.Name, db, containerNames(pod))
	}
	result, err := queryNB(ctx, conn, pod, container)
	if err != nil {
		return nil, err
	}
	d, err := ovn.DumpFromQuery("", result)
	if err != nil {
		return nil, fmt.Errorf("read the central NB from container %s of pod %s/%s: %w", container.Name, pod.Namespace, pod.Name, err)
	}
	return d, nil
}

// centralPod returns a ready pod of the workload, the first by name (ovnkube-db-0 of a
// StatefulSet; ovsdb-client reads a raft follower's copy as well as the leader's), or
// an error that names the workload and says why there is none: no pods,
// or none ready, with what the best of them says.
func centralPod(ctx context.Context, cs kubernetes.Interface, db *clusterkind.Workload) (*corev1.Pod, error) {
	if db.Selector == nil {
		return nil, fmt.Errorf("%s has no pod selector: see kubectl -n %s get %s %s -o yaml",
			db, db.Namespace, strings.ToLower(db.Kind), db.Name)
	}
	selector, err := metav1.LabelSelectorAsSelector(db.Selector)
	if err != nil {
		return nil, fmt.Errorf("the selector of %s: %w", db, err)
	}
	list, err := cs.CoreV1().Pods(db.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("list the pods of %s (%s): %w", db, selector, err)
	}
	pods := list.Items
	if len(pods) == 0 {
		return nil, fmt.Errorf("no pod of %s, which serves OVN-Kubernetes' central NB, in namespace %s (selector %s): see kubectl -n %s describe %s %s",
			db, db.Namespace, selector, db.Namespace, strings.ToLower(db.Kind), db.Name)
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	pod := pickPod(pods)
	if pod.Status.Phase != corev1.PodRunning || !podReady(pod) || pod.DeletionTimestamp != nil {
		state := phase(pod)
		if state == string(corev1.PodRunning) {
			state = "Running but not ready"
		}
		return nil, fmt.Errorf("no ready pod of %s, which serves OVN-Kubernetes' central NB: pod %s is %s%s: see kubectl -n %s describe pod %s",
			db, pod.Name, state, why(pod), pod.Namespace, pod.Name)
	}
	return pod, nil
}
