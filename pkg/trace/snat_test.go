package trace_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/trace"
)

// On a distributed gateway port, a packet that came in through the port and is routed
// back out of it, into a NAT's network, meets two lr_out_snat flows: the commit of
// traffic entering that NAT's network, and the SNAT of its own source. The higher
// decides (a matched NAT ranks at 300 plus its priority): here the entering flow, so the
// packet leaves untranslated; without the matched NAT the SNAT translates it. Both are
// checked against the real ovn-trace.
func TestEnteringFlowOutranksTheSNAT(t *testing.T) {
	for _, tc := range []struct {
		name     string
		matched  bool
		wantSrc  string
		wantNote string
	}{
		{"matched NAT of the destination's network", true, "10.0.0.5", "left untranslated"},
		{"the SNAT alone", false, "172.16.0.2", "translated to 172.16.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := &randomZone{}
			ls := z.switchNamed("ls")
			lr := z.router("lr", nil)
			z.link(lr, ls, "lr-ls", netip.MustParsePrefix("10.0.0.1/24"))
			gw := z.set.RouterPorts[len(z.set.RouterPorts)-1]
			gc := &nbdb.GatewayChassis{UUID: "GC:lr-ls", Name: "rp-lr-ls-chassis-1", ChassisName: "chassis-1", Priority: 1}
			gw.GatewayChassis = []string{gc.UUID}
			z.set.GatewayChassis = append(z.set.GatewayChassis, gc)
			// c's packet for 10.9.0.7 goes to the router, whose route sends it back out of
			// the same port to a, the next hop for 10.9.0.0/24.
			z.port(ls, &nbdb.LogicalSwitchPort{UUID: "LSP:a", Name: "a", Addresses: []string{"0a:58:0a:00:00:06 10.0.0.6"}})
			z.port(ls, &nbdb.LogicalSwitchPort{UUID: "LSP:c", Name: "c", Addresses: []string{"0a:58:0a:00:00:05 10.0.0.5"}})
			z.route(lr, "10.9.0.0/24", "10.0.0.6", nbdb.LogicalRouterStaticRoutePolicyDstIP)
			z.nat(lr, "172.16.0.2", "10.0.0.5")
			if tc.matched {
				z.nat(lr, "172.16.0.1", "10.9.0.0/24")
				z.set.NATs[len(z.set.NATs)-1].Match = "ip4.dst == 10.9.0.7"
			}
			northd, zone := loadZone(t, "node", &z.set)
			c := trace.NewCluster(trace.Zones{"node": zone}, nil, nil)
			var note string
			counts := differential(t, c, northd, zone, &z.set, []trace.Request{{Node: "node", Port: "c", Dst: netip.MustParseAddr("10.9.0.7")}},
				func(p *trace.Path) {
					if v := p.Verdict; v.Kind != trace.Delivered || v.Port != "a" || v.Packet.IPSrc != tc.wantSrc {
						t.Errorf("verdict %+v, want delivered to a from %s", v, tc.wantSrc)
					}
					for _, h := range p.Hops {
						if h.Stage == trace.StageSNAT {
							note = h.Note
						}
					}
				})
			if counts[plain] != 1 {
				t.Errorf("classes %v, want one plain packet", counts)
			}
			if !strings.Contains(note, tc.wantNote) {
				t.Errorf("SNAT hop %q, want it to say %q", note, tc.wantNote)
			}
		})
	}
}
