package podnet

import "net/url"

// The agent serves a pod's Plan to the CNI plugin on its node, as HTTP over a unix
// socket that only root on the node can reach (the agent's cni-socket setting, default
// DefaultSocket), never on a TCP port: a plan holds the pod's addresses, MACs and UID,
// and a plan from anyone but the agent would wire a pod wrongly.
//
//	GET /cni/v1/pods/{namespace}/{name}?uid={pod UID}
//
// 200 answers the Plan as JSON; any other status answers an Error. The plugin asks
// again while the answer may change (Retryable) and gives up at once only on an Error
// whose Reason says it will not.

// DefaultSocket is where the agent serves plans unless its cni-socket setting says
// otherwise; the CNI configuration the agent writes names the socket it serves.
const DefaultSocket = "/var/run/ovnk/cni.sock"

// PlanPath is the path of a pod's plan on the agent's plan server.
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
	ReasonNotReady      = "NotReady"      // 503: the agent has not applied its zone yet
	ReasonNotAllocated  = "NotAllocated"  // 425: not allocated by the leader yet, or not in the zone yet
	ReasonNotProgrammed = "NotProgrammed" // 425: a network of the pod is not in the node's Northbound yet
	ReasonNotFound      = "NotFound"      // 404: no such pod, or it is on another node or finished
	ReasonUIDMismatch   = "UIDMismatch"   // 409: the pod of that name is another one now
	ReasonNetworkGone   = "NetworkGone"   // 410: a network of the pod's allocation no longer exists
	ReasonInvalid       = "Invalid"       // 422: the allocation cannot be wired
)

// Retryable reports whether an answer with this reason may change by asking again
// (retry), and whether the reason is one of the above at all (known). The plugin takes
// an answer as final only when it is known and not retryable: anything else (a proxy's
// error page, a newer agent's reason) is asked again until its time is up.
func Retryable(reason string) (retry, known bool) {
	switch reason {
	case ReasonNotReady, ReasonNotAllocated, ReasonNotProgrammed:
		return true, true
	case ReasonNotFound, ReasonUIDMismatch, ReasonNetworkGone, ReasonInvalid:
		return false, true
	}
	return false, false
}
