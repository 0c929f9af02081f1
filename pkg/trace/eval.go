package trace

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// outcome is what the simulator makes of a row's match on the packet.
type outcome uint8

const (
	// misses: the row does not apply, because its match is false or because OVN itself
	// refuses the match (then the path says so in a warning).
	misses outcome = iota
	// applies: the match holds.
	applies
	// unknown: the simulator cannot tell, and OVN may or may not apply the row.
	unknown
)

// evalMatch evaluates a row's match on the packet. A match OVN refuses (or one naming
// an address set or port group the zone lacks, which OVN refuses as well) misses, and
// leaves a warning on the path; a match the simulator cannot evaluate is unknown, and
// why says why, for the hop that reports it should it matter.
func (w *walker) evalMatch(z *Zone, table, uuid, src string) (o outcome, why string) {
	m := z.expr(src)
	var se *match.SyntaxError
	switch {
	case errors.Is(m.err, match.ErrUnsupported) && errors.As(m.err, &se):
		return unknown, se.Msg
	case m.err != nil:
		w.warn(fmt.Sprintf("%s %s never applies: OVN refuses its match %q too: %v", table, shortUUID(uuid), strings.TrimSpace(src), m.err))
		return misses, ""
	case m.unmodelled != "":
		return unknown, fmt.Sprintf("its match reads %s, which OVN's own stages set and the simulator does not follow", m.unmodelled)
	}
	w.p.Chassis = z.Node
	ok, err := m.expr.Eval(&w.p, w.t.names(z))
	if err != nil {
		w.warn(fmt.Sprintf("%s %s never applies: its match %q names %v, which OVN refuses too", table, shortUUID(uuid), strings.TrimSpace(src), strings.TrimPrefix(err.Error(), "unknown ")))
		return misses, ""
	}
	if ok {
		return applies, ""
	}
	return misses, ""
}

// warn adds a warning to the path, once.
func (w *walker) warn(s string) {
	if !slices.Contains(w.path.Warnings, s) {
		w.path.Warnings = append(w.path.Warnings, s)
	}
}

// unmodelledField names the first field e reads whose value the simulator does not
// follow: the logical registers, which northd's own stages fill as the packet goes,
// and the connection's ct_mark and ct_label, which OVN commits. A row reading one
// cannot be evaluated.
func unmodelledField(e *match.Expr) string {
	for _, f := range e.Fields() {
		switch {
		case f == "ct_mark", f == "ct_label",
			strings.HasPrefix(f, "reg"), strings.HasPrefix(f, "xreg"), strings.HasPrefix(f, "xxreg"):
			return f
		}
	}
	return ""
}

// doubt is a row the simulator could not evaluate, met before the row that decided a
// stage (or at its priority): the hop that reports it, and what the row would have
// done had it applied, in words that compare equal for equal effects.
type doubt struct {
	hop    Hop
	effect string
}

// settle reports the doubts that could have changed the stage's outcome, whose effect
// differs from the effect of what decided it, and makes the path uncertain.
func (w *walker) settle(doubts []doubt, decided string) {
	for _, d := range doubts {
		if d.effect == decided {
			continue
		}
		d.hop.Unevaluated = true
		w.hop(d.hop)
		w.uncertain = true
	}
}

// names resolves, for matches evaluated in z, the address sets and port groups of z and
// the chassis its ports are bound to, as nodes (Packet.Chassis is the zone's node).
type names struct {
	*Zone
	t *tracer
}

// names is z's resolver, made once per trace.
func (t *tracer) names(z *Zone) *names {
	n, ok := t.resolvers[z]
	if !ok {
		n = &names{Zone: z, t: t}
		t.resolvers[z] = n
	}
	return n
}

// Chassis is the node port is bound to: a remote switch port's requested chassis; a
// local one's (a VIF), bound here when its chassis is not another node's, as the zone's
// ports are; a router port's requested chassis or its gateway router's; and a
// chassis-redirect port "cr-<port>" the highest-priority gateway chassis of its
// distributed gateway port. Patch ports and other router ports are bound nowhere.
func (n *names) Chassis(port string) (string, bool) {
	z := n.Zone
	if lsp := z.switchPorts[port]; lsp != nil {
		c := lsp.Options["requested-chassis"]
		switch lsp.Type {
		case "":
			if node, ok := n.t.nodeOfChassis(c); ok {
				return node, true
			}
			return z.Node, true
		case "remote":
			if c != "" {
				return n.t.nodeNamed(c), true
			}
		}
		return "", false // router, localnet and the like: no binding of their own
	}
	if lrp := z.routerPorts[port]; lrp != nil {
		if c := lrp.Options["requested-chassis"]; c != "" {
			return n.t.nodeNamed(c), true
		}
		if lr := z.routerOf[port]; lr != nil && isGatewayRouter(lr) {
			return n.t.nodeNamed(lr.Options["chassis"]), true
		}
		return "", false
	}
	if name, ok := strings.CutPrefix(port, "cr-"); ok {
		if lrp := z.routerPorts[name]; lrp != nil {
			best, prio := "", -1
			for _, id := range lrp.GatewayChassis {
				if gc := z.ix.GatewayChassis[id]; gc != nil && gc.Priority > prio {
					best, prio = gc.ChassisName, gc.Priority
				}
			}
			if best != "" {
				return n.t.nodeNamed(best), true
			}
		}
	}
	return "", false
}

// nodeNamed is the node of a chassis, named by its chassis name or, as upstream names
// requested chassis, by the node's own name.
func (t *tracer) nodeNamed(chassis string) string {
	if node, ok := t.nodeOfChassis(chassis); ok {
		return node
	}
	return chassis
}
