// Package openflow keeps the OpenFlow flows ovnk owns on an OVS bridge. Everything ovnk
// writes carries one cookie, and a Sync replaces exactly that cookie's flows with the
// desired set in one atomic step, leaving flows with any other cookie (the bridge's own
// NORMAL flow, another agent's flows) alone.
//
// Flows are compared as text in the form `ovs-ofctl dump-flows --no-stats --no-names`
// prints them over OpenFlow 1.5, without the cookie: "table=1, priority=10,ip
// actions=LOCAL". OFCtl drives the real bridge through ovs-ofctl; Fake holds flows in
// memory and validates and normalises like ovs-ofctl for the fields and actions it knows.
package openflow

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Bridges programs the flows of one cookie on OVS bridges.
type Bridges interface {
	// Sync makes the flows with cookie on bridge exactly flows, replacing them all at
	// once, and reports whether anything changed. It writes nothing when the bridge
	// already holds exactly those flows, so it is safe to call with the full desired
	// state as often as one likes. An empty flows removes all of the cookie's flows.
	// Flows with another cookie are never touched. A refused Sync (a bad flow, an
	// unknown bridge, a flow the switch rejects) changes nothing.
	Sync(ctx context.Context, bridge string, cookie uint64, flows []Flow) (changed bool, err error)
	// Flows returns the flows with cookie on bridge, in the normalised text of
	// Flow.String, ordered by table, then priority from high to low, then text.
	Flows(ctx context.Context, bridge string, cookie uint64) ([]string, error)
}

// DefaultPriority is the priority ovs-ofctl gives a flow that names none; its dumps
// then leave the priority out.
const DefaultPriority = 32768

// maxTable is the highest table a flow can be in: OpenFlow's table 255 means "all tables".
const maxTable = 254

// Flow is one OpenFlow flow, without its cookie (Sync adds it).
type Flow struct {
	// Table is the flow table, 0 to 254.
	Table int
	// Priority is the flow's priority, 0 to 65535. Its zero value is priority 0, not
	// ovs-ofctl's default of DefaultPriority.
	Priority int
	// Match is the ovs-ofctl match, comma-separated fields without spaces, such as
	// "ip,in_port=1"; empty matches every packet. Fields whose prerequisites are missing
	// (nw_dst without ip, say) are refused rather than dropped as ovs-ofctl would.
	Match string
	// Actions is the ovs-ofctl action list, such as "output:1" or "drop"; never empty.
	Actions string
}

// String renders the flow as `ovs-ofctl dump-flows --no-stats --no-names` prints it
// without the cookie: the table when not 0, the priority when not DefaultPriority.
// Normalised flows (what Flows returns) render exactly as the bridge dumps them.
func (f Flow) String() string {
	var b strings.Builder
	if f.Table != 0 {
		fmt.Fprintf(&b, "table=%d, ", f.Table)
	}
	var match []string
	if f.Priority != DefaultPriority {
		match = append(match, "priority="+strconv.Itoa(f.Priority))
	}
	if f.Match != "" {
		match = append(match, f.Match)
	}
	if len(match) > 0 {
		b.WriteString(strings.Join(match, ",") + " ")
	}
	b.WriteString("actions=" + f.Actions)
	return b.String()
}

// modLine is the flow as a line of an ovs-ofctl flow file, with the cookie when not 0.
func (f Flow) modLine(cookie uint64) string {
	parts := []string{}
	if cookie != 0 {
		parts = append(parts, fmt.Sprintf("cookie=%#x", cookie))
	}
	parts = append(parts, "table="+strconv.Itoa(f.Table), "priority="+strconv.Itoa(f.Priority))
	if f.Match != "" {
		parts = append(parts, f.Match)
	}
	return strings.Join(append(parts, "actions="+f.Actions), ",")
}

// flowModKeywords are the words of a flow file that are not match fields but
// parameters of the flow modification; in Match they would change what Sync writes
// (or, for cookie and table, which flows it owns) without showing in the comparison.
var flowModKeywords = map[string]bool{
	"table": true, "priority": true, "cookie": true, "actions": true,
	"idle_timeout": true, "hard_timeout": true, "importance": true, "send_flow_rem": true,
	"check_overlap": true, "reset_counts": true, "no_packet_counts": true,
	"no_byte_counts": true, "out_port": true, "out_group": true,
	"duration": true, "n_packets": true, "n_bytes": true,
}

// validate checks what both implementations refuse before looking at fields: ranges,
// empty actions, whitespace (a newline would inject a command into the bundle), and
// flow modification parameters hidden in Match.
func (f Flow) validate() error {
	if f.Table < 0 || f.Table > maxTable {
		return fmt.Errorf("table %d out of range 0..%d", f.Table, maxTable)
	}
	if f.Priority < 0 || f.Priority > 65535 {
		return fmt.Errorf("priority %d out of range 0..65535", f.Priority)
	}
	if f.Actions == "" {
		return fmt.Errorf("no actions (write \"drop\" to drop)")
	}
	for _, s := range []string{f.Match, f.Actions} {
		if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
			return fmt.Errorf("whitespace at offset %d of %q", i, s)
		}
	}
	if f.Match == "" {
		return nil
	}
	for _, field := range strings.Split(f.Match, ",") {
		key, _, _ := strings.Cut(field, "=")
		if key == "" {
			return fmt.Errorf("empty field in match %q", f.Match)
		}
		if flowModKeywords[key] {
			return fmt.Errorf("%q in match %q is not a match field (use the Flow's fields)", key, f.Match)
		}
	}
	return nil
}

// checkBridge refuses names ovs-ofctl would take for something else: a connection
// target ("unix:…", "tcp:…"), a path, or an option.
func checkBridge(bridge string) error {
	if bridge == "" || strings.HasPrefix(bridge, "-") || strings.ContainsAny(bridge, ":/ \t\n") {
		return fmt.Errorf("invalid bridge name %q", bridge)
	}
	return nil
}

// checkCookie refuses the cookies that are not ours to own: 0 is the cookie of every
// flow added without one (the bridge's default NORMAL flow among them), and all-ones is
// reserved by OpenFlow.
func checkCookie(cookie uint64) error {
	if cookie == 0 || cookie == ^uint64(0) {
		return fmt.Errorf("cookie %#x cannot be owned: 0 is every unmarked flow's, all-ones is reserved", cookie)
	}
	return nil
}

// checkArgs validates what every Sync validates first.
func checkArgs(bridge string, cookie uint64, flows []Flow) error {
	if err := checkBridge(bridge); err != nil {
		return err
	}
	if err := checkCookie(cookie); err != nil {
		return err
	}
	for _, f := range flows {
		if err := f.validate(); err != nil {
			return fmt.Errorf("flow %q: %w", f.String(), err)
		}
	}
	return nil
}

// checkUnique refuses two normalised flows with the same table, priority and match:
// OpenFlow keeps only the last one added, so the bridge could never equal the desired
// set and every Sync would write again.
func checkUnique(normalised []string) error {
	seen := make(map[string]string, len(normalised))
	for _, f := range normalised {
		key := flowKey(f)
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("flows %q and %q have the same table, priority and match; a bridge keeps only one", prev, f)
		}
		seen[key] = f
	}
	return nil
}

// flowKey is a normalised flow without its actions: what identifies it in a table.
func flowKey(flow string) string {
	if i := strings.Index(flow, "actions="); i >= 0 {
		return flow[:i]
	}
	return flow
}

// sortFlows orders normalised flow text as Flows documents: table, then priority from
// high to low, then text.
func sortFlows(flows []string) {
	slices.SortFunc(flows, func(a, b string) int {
		ta, pa := tableAndPriority(a)
		tb, pb := tableAndPriority(b)
		switch {
		case ta != tb:
			return ta - tb
		case pa != pb:
			return pb - pa
		default:
			return strings.Compare(a, b)
		}
	})
}

// tableAndPriority reads the table and priority of a flow in dump form; what it cannot
// read counts as table 0 and the default priority, which only affects the order.
func tableAndPriority(flow string) (table, priority int) {
	priority = DefaultPriority
	if rest, ok := strings.CutPrefix(flow, "table="); ok {
		n, after, _ := strings.Cut(rest, ", ")
		table, _ = strconv.Atoi(n)
		flow = after
	}
	if rest, ok := strings.CutPrefix(flow, "priority="); ok {
		end := strings.IndexAny(rest, ", ")
		if end < 0 {
			end = len(rest)
		}
		if p, err := strconv.Atoi(rest[:end]); err == nil {
			priority = p
		}
	}
	return table, priority
}
