package connectcmd

import (
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// conditionReady is the leader's condition saying every zone programmed the connect;
// ovnkv1.ConditionAccepted says whether the leader accepted it at all.
const conditionReady = "Ready"

// routerName is the connect router's name in OVN.
func routerName(cnc string) string { return "connect_router_" + cnc }

// health ranks a status for colour.
type health int

const (
	healthUnknown health = iota
	healthGood
	healthPending
	healthBad
)

// statusOf sums a connect's status up in a word and its health: the reason of the
// first condition that is False (Accepted before Ready), else Ready, else the
// status field, else Pending while the leader has not written any.
func statusOf(cnc *ovnkv1.ClusterNetworkConnect) (string, health) {
	conds := cnc.Status.Conditions
	failed := cnc.Status.Status == ovnkv1.ConnectStatusFailure
	for _, t := range []string{ovnkv1.ConditionAccepted, conditionReady} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionFalse {
			h := healthPending
			if failed || t == ovnkv1.ConditionAccepted {
				h = healthBad
			}
			return orWord(c.Reason, "Not"+t), h
		}
	}
	for _, c := range conds {
		if c.Status == metav1.ConditionFalse {
			return orWord(c.Reason, "Not"+c.Type), healthBad
		}
	}
	switch {
	case failed:
		return string(ovnkv1.ConnectStatusFailure), healthBad
	case meta.IsStatusConditionTrue(conds, conditionReady):
		return conditionReady, healthGood
	case cnc.Status.Status == ovnkv1.ConnectStatusSuccess:
		return string(ovnkv1.ConnectStatusSuccess), healthGood
	}
	return "Pending", healthPending
}

// refusalOf is the leader's Accepted condition when it refused the connect whole, nil
// otherwise. The leader gives the connect router a tunnel key whenever it accepts the
// connect, even in part, and takes it back when it refuses it (pkg/agent/leader,
// connectWrite): Accepted False without a tunnel key is a refusal, and then no zone
// programs anything of the connect, whatever the nodes' reports wait for.
func refusalOf(cnc *ovnkv1.ClusterNetworkConnect, alloc allocation) *metav1.Condition {
	c := meta.FindStatusCondition(cnc.Status.Conditions, ovnkv1.ConditionAccepted)
	if c == nil || c.Status != metav1.ConditionFalse || alloc.tunnelKey != 0 {
		return nil
	}
	return c
}

func orWord(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// allocation is what the leader recorded on a connect: its router's tunnel key (0 until
// allocated) and each network's blocks, by the network's owner key.
type allocation struct {
	tunnelKey int
	blocks    map[string][]netip.Prefix
	// problem says why an annotation could not be read, "" when both could.
	problem string
	// keys are the owner keys of the networks that have an id, by network object
	// (session.allocation reads them).
	keys map[cluster.ObjectRef]string
}

// allocationOf reads cnc's annotations; keys are the networks' owner keys.
func allocationOf(cnc *ovnkv1.ClusterNetworkConnect, keys map[cluster.ObjectRef]string) allocation {
	ref := cluster.ObjectRef{Kind: "ClusterNetworkConnect", Name: cnc.Name}
	a := allocation{keys: keys}
	var problems []string
	if k, ok, err := cluster.ConnectTunnelKeyCodec.Lookup(ref, cnc.Annotations); err != nil {
		problems = append(problems, err.Error())
	} else if ok {
		a.tunnelKey = k
	}
	if b, _, err := cluster.ConnectSubnetsCodec.Lookup(ref, cnc.Annotations); err != nil {
		problems = append(problems, err.Error())
	} else {
		a.blocks = b
	}
	if len(problems) > 0 {
		a.problem = andList(problems)
	}
	return a
}

// blocksOf are the network's blocks, nil until the leader allocated them (or while the
// network has no id to key them by).
func (a allocation) blocksOf(n netview.Network) []netip.Prefix {
	key, ok := a.keys[n.Owner()]
	if !ok {
		return nil
	}
	return slices.Clone(a.blocks[key])
}

// connectivityWordsOf shows spec.connectivity in --connectivity's words.
func connectivityWordsOf(cnc *ovnkv1.ClusterNetworkConnect) []string {
	var out []string
	for _, t := range cnc.Spec.Connectivity {
		word := string(t)
		for _, w := range connectivityWords {
			if w.api == t {
				word = w.word
			}
		}
		out = append(out, word)
	}
	return out
}

func requests(cnc *ovnkv1.ClusterNetworkConnect, t ovnkv1.ConnectivityType) bool {
	return slices.Contains(cnc.Spec.Connectivity, t)
}
