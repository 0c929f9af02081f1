package clusterkind

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// UpstreamDB is the name upstream's manifests give the workload serving the one central
// NB of a cluster not in interconnect mode: a Deployment of one pod, or a StatefulSet
// of a raft cluster (ovnkube-db-0, -1, -2), in ovnkube-node's namespace. Its pods'
// container nb-ovsdb serves the NB on the same socket as interconnect's.
const UpstreamDB = "ovnkube-db"

// Workload is the Deployment or StatefulSet whose pods serve the central NB.
type Workload struct {
	// Kind is "Deployment" or "StatefulSet".
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Selector selects the workload's pods: its spec.selector.
	Selector *metav1.LabelSelector `json:"-"`
}

func (w Workload) String() string {
	return fmt.Sprintf("%s %s/%s", w.Kind, w.Namespace, w.Name)
}

// FindCentralNB returns the workload named UpstreamDB in namespace that serves the
// central NB. Where both a Deployment and a StatefulSet are (a move from one layout to
// the other), the one with ready pods wins, then the Deployment, upstream's default;
// one being deleted is passed over. None found, or none the user may read, is an error
// that names the namespace, what was looked for and what to do.
func FindCentralNB(ctx context.Context, cs kubernetes.Interface, namespace string) (*Workload, error) {
	type candidate struct {
		Workload
		ready int32
	}
	var found []candidate
	// denied is the first refusal: both are the same missing right.
	var denied error
	deploy, err := cs.AppsV1().Deployments(namespace).Get(ctx, UpstreamDB, metav1.GetOptions{})
	switch {
	case err == nil && deploy.DeletionTimestamp == nil:
		found = append(found, candidate{Workload{"Deployment", namespace, deploy.Name, deploy.Spec.Selector}, deploy.Status.ReadyReplicas})
	case err != nil && apierrors.IsForbidden(err):
		denied = cmp.Or(denied, err)
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("look for OVN-Kubernetes' central NB, Deployment %s/%s: %w", namespace, UpstreamDB, err)
	}
	sts, err := cs.AppsV1().StatefulSets(namespace).Get(ctx, UpstreamDB, metav1.GetOptions{})
	switch {
	case err == nil && sts.DeletionTimestamp == nil:
		found = append(found, candidate{Workload{"StatefulSet", namespace, sts.Name, sts.Spec.Selector}, sts.Status.ReadyReplicas})
	case err != nil && apierrors.IsForbidden(err):
		denied = cmp.Or(denied, err)
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("look for OVN-Kubernetes' central NB, StatefulSet %s/%s: %w", namespace, UpstreamDB, err)
	}
	if len(found) == 0 {
		if denied != nil {
			return nil, fmt.Errorf("look for OVN-Kubernetes' central NB (Deployment or StatefulSet %s in namespace %s): %w: ask for get on deployments and statefulsets in namespace %s, or read the zones with --nb ENDPOINT",
				UpstreamDB, namespace, denied, namespace)
		}
		return nil, fmt.Errorf("no Deployment or StatefulSet %s in namespace %s, which serves OVN-Kubernetes' central NB when ovnkube-node serves none: see kubectl -n %s get deployments,statefulsets, or read the zones with --nb ENDPOINT",
			UpstreamDB, namespace, namespace)
	}
	// Stable, so that among equally ready ones the Deployment, looked at first, wins.
	slices.SortStableFunc(found, func(a, b candidate) int {
		return boolRank(a.ready > 0) - boolRank(b.ready > 0)
	})
	return &found[0].Workload, nil
}

// boolRank orders true before false.
func boolRank(b bool) int {
	if b {
		return 0
	}
	return 1
}
