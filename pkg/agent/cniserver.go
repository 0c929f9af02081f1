package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent/zone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/podnet/podplan"
)

// podPlans answers the node's CNI plugin with the plan of a pod being wired (package
// podnet documents the request and docs/agent.md the answers), on the agent's unix
// socket (servePlans). The plan comes from the cluster state the zone last applied
// (zone.Snapshot): a pod is wired only once its ports are in the Northbound, and no
// second model of the cluster is built for it. The
// pod itself is read from the manager's cache, and an answer that ends the plugin's
// wait (404, 409) is confirmed with the API server first, since the cache may lag the
// kubelet that started the sandbox.
type podPlans struct {
	node string
	// snapshot is the zone's last applied state; nil before the first.
	snapshot func() *zone.Snapshot
	// cache reads pods from the manager's informers; live from the API server (nil:
	// the cache's word is final).
	cache, live client.Reader
}

// podPlanPattern is the route of the endpoint on the agent's mux.
const podPlanPattern = "GET /cni/v1/pods/{namespace}/{name}"

func (s *podPlans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, body := s.answer(r.Context(), r.PathValue("namespace"), r.PathValue("name"), r.URL.Query().Get("uid"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// refusal is an answer other than a plan.
func refusal(status int, reason, format string, args ...any) (int, any) {
	return status, podnet.Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// answer returns the status and body for the pod's plan.
func (s *podPlans) answer(ctx context.Context, namespace, name, uid string) (int, any) {
	ref := namespace + "/" + name
	snap := s.snapshot()
	if snap == nil {
		return refusal(http.StatusServiceUnavailable, podnet.ReasonNotReady,
			"the agent of node %s has not applied its zone yet: pod %s waits", s.node, ref)
	}
	pod, status, body := s.pod(ctx, namespace, name, uid)
	if pod == nil {
		return status, body
	}
	value, ok := pod.Annotations[cluster.AnnotationPodNetworks]
	if !ok {
		return refusal(http.StatusTooEarly, podnet.ReasonNotAllocated,
			"the leader has not allocated pod %s's addresses yet (no %s annotation)", ref, cluster.AnnotationPodNetworks)
	}
	entries, err := cluster.PodNetworksCodec.Parse(cluster.ObjectRef{Kind: "Pod", Namespace: namespace, Name: name}, value)
	if err != nil {
		return refusal(http.StatusUnprocessableEntity, podnet.ReasonInvalid, "pod %s's allocation cannot be read: %v", ref, err)
	}
	var built *cluster.Pod
	for _, p := range snap.State.Pods {
		if p.Namespace == namespace && p.Name == name && p.UID == string(pod.UID) {
			built = p
		}
	}
	if built == nil || len(built.Networks) < len(entries) {
		if err := buildErrorOf(snap.BuildErrors, namespace, name); err != nil {
			return refusal(http.StatusGone, podnet.ReasonNetworkGone, "pod %s cannot be wired: %v", ref, err)
		}
		if built == nil {
			return refusal(http.StatusTooEarly, podnet.ReasonNotAllocated, "node %s's zone has not programmed pod %s yet", s.node, ref)
		}
		return refusal(http.StatusTooEarly, podnet.ReasonNotAllocated,
			"node %s's zone holds pod %s on %d of the %d networks of its allocation: the others are not ready yet",
			s.node, ref, len(built.Networks), len(entries))
	}
	for _, network := range slices.Sorted(maps.Keys(built.Networks)) {
		if err := snap.Unprogrammed[network]; err != nil {
			return refusal(http.StatusTooEarly, podnet.ReasonNotProgrammed,
				"node %s has not programmed network %s of pod %s into its Northbound yet: %v", s.node, network, ref, err)
		}
	}
	if err := snap.PodIssues[ref]; err != nil {
		return refusal(http.StatusUnprocessableEntity, podnet.ReasonInvalid, "node %s cannot program pod %s's ports: %v", s.node, ref, err)
	}
	plan, err := podplan.For(snap.State, built)
	if err != nil {
		return refusal(http.StatusUnprocessableEntity, podnet.ReasonInvalid, "%v", err)
	}
	return http.StatusOK, plan
}

// pod returns the pod if it is this node's and has the UID (when one is given), or
// else the refusal that says why.
func (s *podPlans) pod(ctx context.Context, namespace, name, uid string) (*corev1.Pod, int, any) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	var cached corev1.Pod
	status, body := s.check(s.cache.Get(ctx, key, &cached), key.String(), &cached, uid)
	if status == http.StatusOK {
		return &cached, 0, nil
	}
	if s.live == nil || status != http.StatusNotFound && status != http.StatusConflict {
		return nil, status, body
	}
	var fresh corev1.Pod
	if status, body := s.check(s.live.Get(ctx, key, &fresh), key.String(), &fresh, uid); status != http.StatusOK {
		return nil, status, body
	}
	return nil, http.StatusTooEarly, podnet.Error{Reason: podnet.ReasonNotAllocated,
		Message: fmt.Sprintf("node %s's agent has not seen pod %s (UID %s) yet", s.node, key, uid)}
}

// check judges pod ref as read (p), or the error of reading it.
func (s *podPlans) check(err error, ref string, p *corev1.Pod, uid string) (int, any) {
	switch {
	case apierrors.IsNotFound(err):
		return refusal(http.StatusNotFound, podnet.ReasonNotFound, "pod %s does not exist (deleted?)", ref)
	case err != nil:
		return refusal(http.StatusServiceUnavailable, podnet.ReasonNotReady, "node %s's agent cannot read pod %s: %v", s.node, ref, err)
	case p.Spec.NodeName != s.node:
		return refusal(http.StatusNotFound, podnet.ReasonNotFound, "pod %s is bound to node %q, not to node %s", ref, p.Spec.NodeName, s.node)
	case uid != "" && string(p.UID) != uid:
		return refusal(http.StatusConflict, podnet.ReasonUIDMismatch,
			"pod %s is UID %s now; the sandbox is for UID %s, an earlier pod of that name", ref, p.UID, uid)
	case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		return refusal(http.StatusNotFound, podnet.ReasonNotFound, "pod %s has finished (%s)", ref, p.Status.Phase)
	}
	return http.StatusOK, nil
}

// buildErrorOf returns the builder's error about the pod's allocation: an entry on a
// network the cluster does not have (any more), or two entries on one network.
func buildErrorOf(errs []error, namespace, name string) error {
	for _, err := range errs {
		var oe *cluster.ObjectError
		if errors.As(err, &oe) && oe.Object.Kind == "Pod" && oe.Object.Namespace == namespace && oe.Object.Name == name {
			return oe.Err
		}
	}
	return nil
}
