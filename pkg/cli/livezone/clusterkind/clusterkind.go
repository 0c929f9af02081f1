// Package clusterkind tells which OVN-Kubernetes runs on a cluster — ovnk's agent,
// upstream OVN-Kubernetes (or a distribution of it, such as OpenShift's), or neither —
// and where upstream's pods serve a zone's Northbound database, so that the plugin reads
// zones and reports on any of them with no configuration.
package clusterkind

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/manifests"
)

// Kind names who runs OVN-Kubernetes on a cluster.
type Kind string

const (
	// None is a cluster where neither ovnk's agent nor upstream's ovnkube-node was
	// found; "none" rather than empty, so that -o json says it.
	None Kind = "none"
	// OVNK is a cluster running ovnk's agent DaemonSet.
	OVNK Kind = "ovnk"
	// Upstream is a cluster running upstream OVN-Kubernetes' ovnkube-node DaemonSet.
	Upstream Kind = "OVN-Kubernetes"
)

// UpstreamDaemonSet is the name of upstream's per-node DaemonSet, in every deployment of
// it (its own manifests, its Helm chart, OpenShift's).
const UpstreamDaemonSet = "ovnkube-node"

// UpstreamNamespaces are where upstream's deployments put ovnkube-node: its own
// manifests and Helm chart, then OpenShift. They are looked in when listing DaemonSets
// across the cluster is not allowed, and preferred when several namespaces hold one.
var UpstreamNamespaces = []string{"ovn-kubernetes", "openshift-ovn-kubernetes"}

// Cluster is what Detect found.
type Cluster struct {
	Kind Kind `json:"kind"`
	// Namespace and DaemonSet name the DaemonSet found; empty for None.
	Namespace string `json:"namespace,omitempty"`
	DaemonSet string `json:"daemonSet,omitempty"`
	// Interconnect says each node is a zone of its own whose NB a container of the
	// node's ovnkube-node pod serves (upstream's interconnect mode). It is false for a
	// central NB (upstream's ovnkube-db) and for ovnk, whose zones are also per node but
	// served by OVN beside the agent.
	Interconnect bool `json:"interconnect,omitempty"`
	// PodSelector selects the DaemonSet's pods: its spec.selector.
	PodSelector *metav1.LabelSelector `json:"-"`
	// CentralNB is upstream's workload serving the one central NB when not
	// Interconnect, if Detect could find it (FindCentralNB says why not).
	CentralNB *Workload `json:"centralNB,omitempty"`
}

// String says what the cluster runs in one line, for `version` and `status`.
func (c Cluster) String() string {
	switch c.Kind {
	case OVNK:
		return fmt.Sprintf("ovnk (agent DaemonSet %s/%s)", c.Namespace, c.DaemonSet)
	case Upstream:
		layout := "one central NB"
		switch {
		case c.Interconnect:
			layout = "interconnect, a zone per node"
		case c.CentralNB != nil:
			layout += " served by " + c.CentralNB.String()
		}
		return fmt.Sprintf("OVN-Kubernetes, %s (DaemonSet %s/%s)", layout, c.Namespace, c.DaemonSet)
	default:
		return "no OVN-Kubernetes found: neither ovnk's agent nor an ovnkube-node DaemonSet"
	}
}

// Detect looks for ovnk's agent DaemonSet in agentNamespace, and failing that for
// upstream's ovnkube-node DaemonSet in any namespace. Neither found is None, not an
// error; an error is the API server refusing or failing to answer, and names what could
// not be read. A user who may not read DaemonSets in agentNamespace still learns of an
// upstream deployment they may read. Upstream without interconnect also gets the
// workload serving its central NB, when it is found.
func Detect(ctx context.Context, cs kubernetes.Interface, agentNamespace string) (Cluster, error) {
	_, agentErr := cs.AppsV1().DaemonSets(agentNamespace).Get(ctx, manifests.AgentName, metav1.GetOptions{})
	switch {
	case agentErr == nil:
		return Cluster{Kind: OVNK, Namespace: agentNamespace, DaemonSet: manifests.AgentName}, nil
	case apierrors.IsNotFound(agentErr):
		agentErr = nil
	case !apierrors.IsForbidden(agentErr):
		return Cluster{}, fmt.Errorf("look for the ovnk agent's DaemonSet %s/%s: %w", agentNamespace, manifests.AgentName, agentErr)
	}
	ds, err := upstreamDaemonSet(ctx, cs)
	switch {
	case err != nil:
		return Cluster{}, err
	case ds != nil:
		c := Cluster{
			Kind:         Upstream,
			Namespace:    ds.Namespace,
			DaemonSet:    ds.Name,
			Interconnect: NBContainer(&ds.Spec.Template.Spec) != nil,
			PodSelector:  ds.Spec.Selector,
		}
		if !c.Interconnect {
			// Not finding it only costs naming it: the kind is known, and reading a
			// zone looks again and says why it is not there.
			c.CentralNB, _ = FindCentralNB(ctx, cs, c.Namespace)
		}
		return c, nil
	case agentErr != nil:
		return Cluster{}, fmt.Errorf("look for the ovnk agent's DaemonSet %s/%s: %w: ask for get on daemonsets in namespace %s",
			agentNamespace, manifests.AgentName, agentErr, agentNamespace)
	}
	return Cluster{Kind: None}, nil
}

// upstreamDaemonSet finds ovnkube-node in any namespace, or nil. A user who may not list
// DaemonSets across the cluster may still read them in upstream's namespaces.
func upstreamDaemonSet(ctx context.Context, cs kubernetes.Interface) (*appsv1.DaemonSet, error) {
	byName := fields.OneTermEqualSelector("metadata.name", UpstreamDaemonSet).String()
	list, err := cs.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: byName})
	if err == nil {
		return preferred(list.Items), nil
	}
	if !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("look for OVN-Kubernetes' DaemonSet %s: %w", UpstreamDaemonSet, err)
	}
	listErr := err
	var found []appsv1.DaemonSet
	readable := false
	for _, ns := range UpstreamNamespaces {
		ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, UpstreamDaemonSet, metav1.GetOptions{})
		switch {
		case err == nil:
			found, readable = append(found, *ds), true
		case apierrors.IsNotFound(err):
			readable = true
		case !apierrors.IsForbidden(err):
			return nil, fmt.Errorf("look for OVN-Kubernetes' DaemonSet %s/%s: %w", ns, UpstreamDaemonSet, err)
		}
	}
	if !readable {
		return nil, fmt.Errorf("look for OVN-Kubernetes' DaemonSet %s: %w: ask for list on daemonsets in all namespaces, or get in %s",
			UpstreamDaemonSet, listErr, strings.Join(UpstreamNamespaces, " and "))
	}
	return preferred(found), nil
}

// preferred picks among DaemonSets named ovnkube-node: one not being deleted, in
// upstream's namespaces in their order, else the first by namespace; nil for none.
func preferred(list []appsv1.DaemonSet) *appsv1.DaemonSet {
	list = slices.DeleteFunc(list, func(ds appsv1.DaemonSet) bool { return ds.DeletionTimestamp != nil })
	if len(list) == 0 {
		return nil
	}
	rank := func(ds appsv1.DaemonSet) int {
		if i := slices.Index(UpstreamNamespaces, ds.Namespace); i >= 0 {
			return i
		}
		return len(UpstreamNamespaces)
	}
	best := slices.MinFunc(list, func(a, b appsv1.DaemonSet) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Namespace, b.Namespace))
	})
	return &best
}
