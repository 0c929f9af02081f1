package podnet

import "net/url"

// The agent serves a pod's Plan to the CNI plugin on its node, over HTTP:
//
//	GET /cni/v1/pods/{namespace}/{name}?uid={pod UID}
//
// 200 answers the Plan as JSON; any other status answers an Error. The plugin asks
// again while the status is 503 or 425, and gives up at once on any other.

// PlanPath is the path of a pod's plan on the agent's HTTP server.
func PlanPath(namespace, name string) string {
	return "/cni/v1/pods/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

// Error is the body of an answer that is not a plan: a reason a program can test and
// a message naming the pod that an operator understands.
type Error struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Reasons of Error, one per HTTP status of the agent's answer (docs/agent.md, "CNI").
const (
	ReasonNotReady     = "NotReady"     // 503: the agent has not applied its zone yet
	ReasonNotFound     = "NotFound"     // 404: no such pod, or it is on another node or finished
	ReasonUIDMismatch  = "UIDMismatch"  // 409: the pod of that name is another one now
	ReasonNetworkGone  = "NetworkGone"  // 410: a network of the pod's allocation no longer exists
	ReasonInvalid      = "Invalid"      // 422: the allocation cannot be wired
	ReasonNotAllocated = "NotAllocated" // 425: not allocated by the leader yet, or not in the zone yet
)
