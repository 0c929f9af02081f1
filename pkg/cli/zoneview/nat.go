package zoneview

import (
	"cmp"
	"slices"

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
// port, external IP, then logical IP.
func (z *Zone) NATs(lr *nbdb.LogicalRouter) []NAT {
	var out []NAT
	for _, key := range lr.Nat {
		nat := z.Index.NATs[key]
		if nat == nil {
			continue
		}
		n := NAT{
			Type: string(nat.Type), ExternalIP: nat.ExternalIP, ExternalPortRange: nat.ExternalPortRange,
			LogicalIP: nat.LogicalIP, ExternalMAC: deref(nat.ExternalMAC), LogicalPort: deref(nat.LogicalPort),
			Match: nat.Match, UUID: nat.UUID,
		}
		if nat.GatewayPort != nil {
			n.GatewayPort = *nat.GatewayPort
			if lrp := z.Index.RouterPorts[*nat.GatewayPort]; lrp != nil {
				n.GatewayPort = lrp.Name
			}
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b NAT) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.GatewayPort, b.GatewayPort),
			cmp.Compare(a.ExternalIP, b.ExternalIP), cmp.Compare(a.LogicalIP, b.LogicalIP))
	})
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
