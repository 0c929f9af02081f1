package livezone

import (
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// NAT is one NAT rule of a router, with references resolved to names.
type NAT struct {
	// Type is snat, dnat or dnat_and_snat.
	Type       string `json:"type"`
	ExternalIP string `json:"externalIP"`
	// ExternalPortRange limits the rule to those ports ("" for all).
	ExternalPortRange string `json:"externalPortRange,omitempty"`
	LogicalIP         string `json:"logicalIP"`
	ExternalMAC       string `json:"externalMAC,omitempty"`
	// LogicalPort is the port the rule is bound to (on a distributed router, the
	// gateway port whose chassis performs it).
	LogicalPort string `json:"logicalPort,omitempty"`
	// GatewayPort is the distributed gateway port the rule applies on.
	GatewayPort string `json:"gatewayPort,omitempty"`
	// Match limits the rule to packets matching this OVN expression.
	Match string `json:"match,omitempty"`
	UUID  string `json:"uuid"`
}

// NATs are a router's NAT rules in `ovn-nbctl lr-nat-list` order: by type, gateway
// port and external IP, and rules tied on those in the order ovn-nbctl leaves them.
func (z *Zone) NATs(lr *nbdb.LogicalRouter) []NAT {
	var nats []*nbdb.NAT
	for _, key := range lr.Nat {
		if nat := z.Index.NATs[key]; nat != nil {
			nats = append(nats, nat)
		}
	}
	var out []NAT
	for _, l := range nbctl.SortNATs(nats, z.Index) {
		nat := l.NAT
		out = append(out, NAT{
			Type: nat.Type, ExternalIP: nat.ExternalIP, ExternalPortRange: nat.ExternalPortRange,
			LogicalIP: nat.LogicalIP, ExternalMAC: deref(nat.ExternalMAC), LogicalPort: deref(nat.LogicalPort),
			GatewayPort: l.GatewayPort, Match: nat.Match, UUID: nat.UUID,
		})
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
