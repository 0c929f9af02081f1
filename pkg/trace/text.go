package trace

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes a result as people read it: for each direction a heading with the
// packet, one line per hop — zone, datapath, stage, ports, what happened, and the row
// that decided with the object that owns it — and then the verdict, marked
// "(UNCERTAIN)" when a row the simulator could not evaluate could have changed it, with
// a line naming the hops of those rows.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	writePath(&b, "forward", r.Forward)
	if r.Reply != nil {
		b.WriteString("\n")
		writePath(&b, "reply", r.Reply)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writePath(b *strings.Builder, title string, p *Path) {
	fmt.Fprintf(b, "%s: %s\n", title, describePacket(p.Packet))
	for i, h := range p.Hops {
		fmt.Fprintf(b, "%3d. %s %s %s [%s]", i+1, h.Zone, h.Kind, h.Datapath, h.Stage)
		switch {
		case h.InPort != "" && h.OutPort != "":
			fmt.Fprintf(b, " %s→%s", h.InPort, h.OutPort)
		case h.OutPort != "":
			fmt.Fprintf(b, " →%s", h.OutPort)
		case h.InPort != "":
			fmt.Fprintf(b, " %s→", h.InPort)
		}
		fmt.Fprintf(b, ": %s", h.Note)
		if len(h.Nexthops) > 0 {
			fmt.Fprintf(b, " {%s}", strings.Join(h.Nexthops, ", "))
		}
		b.WriteString("\n")
		if h.Row != nil && h.Row.Table != "Logical_Switch_Port" {
			fmt.Fprintf(b, "     %s\n", describeRow(h.Row))
		}
	}
	v := p.Verdict
	word := verdictWord(v.Kind)
	if v.Uncertain {
		word += " (UNCERTAIN)"
	}
	fmt.Fprintf(b, "%s: %s\n", word, v.Reason)
	fmt.Fprintf(b, "     final packet: %s\n", describePacket(v.Packet))
	if v.Uncertain {
		fmt.Fprintf(b, "     uncertain: %s\n", uncertainty(p.Hops))
	}
	for _, warning := range p.Warnings {
		fmt.Fprintf(b, "     warning: %s\n", warning)
	}
}

// uncertainty says why a verdict is uncertain: which hops name rows the simulator
// could not evaluate.
func uncertainty(hops []Hop) string {
	var numbers []string
	for i, h := range hops {
		if h.Unevaluated {
			numbers = append(numbers, fmt.Sprint(i+1))
		}
	}
	switch len(numbers) {
	case 0: // a Result made elsewhere, uncertain without saying which rows made it so
		return "a row the simulator could not evaluate could have decided otherwise"
	case 1:
		return "hop " + numbers[0] + " names a row the simulator could not evaluate: OVN may apply it, and the packet fare otherwise"
	}
	return "hops " + strings.Join(numbers[:len(numbers)-1], ", ") + " and " + numbers[len(numbers)-1] +
		" name rows the simulator could not evaluate: OVN may apply them, and the packet fare otherwise"
}

// describePacket is a packet in one line: addresses, transport, MACs, TTL and mark.
func describePacket(h Header) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s → %s %s", h.IPSrc, h.IPDst, h.Proto)
	if h.SrcPort != 0 || h.DstPort != 0 {
		fmt.Fprintf(&b, " %d→%d", h.SrcPort, h.DstPort)
	}
	fmt.Fprintf(&b, ", eth %s → %s, ttl %d", h.EthSrc, h.EthDst, h.TTL)
	if h.PktMark != 0 {
		fmt.Fprintf(&b, ", pkt.mark %d", h.PktMark)
	}
	return b.String()
}

// describeRow names a row: table, priority, match, action, owner and UUID.
func describeRow(r *Row) string {
	var b strings.Builder
	b.WriteString(r.Table)
	if r.Priority != nil {
		fmt.Fprintf(&b, " priority %d", *r.Priority)
	}
	if r.Match != "" {
		fmt.Fprintf(&b, " «%s»", r.Match)
	}
	if r.Action != "" {
		fmt.Fprintf(&b, " action %s", r.Action)
	}
	if o := r.Owner; o != nil {
		fmt.Fprintf(&b, " (%s %s", o.Kind, o.Name)
		if o.Network != "" {
			fmt.Fprintf(&b, ", network %s", o.Network)
		}
		if o.Node != "" && o.Kind != "Node" {
			fmt.Fprintf(&b, ", node %s", o.Node)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " [%s]", shortUUID(r.UUID))
	return b.String()
}

func verdictWord(k VerdictKind) string {
	switch k {
	case Delivered:
		return "DELIVERED"
	case ToRouter:
		return "ANSWERED"
	case LeftCluster:
		return "LEFT CLUSTER"
	case NoRoute:
		return "NO ROUTE"
	case Stuck:
		return "STOPPED"
	default:
		return "DROPPED"
	}
}

// shortUUID keeps the first block of a real UUID; identities of compiled rows, which
// are names, stay whole.
func shortUUID(id string) string {
	if len(id) == 36 && strings.Count(id, "-") == 4 {
		return id[:8]
	}
	return id
}
