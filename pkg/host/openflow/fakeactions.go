package openflow

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The Fake's action normaliser knows output to a port (by number or LOCAL), the
// reserved ports NORMAL, LOCAL, IN_PORT, FLOOD and ALL, drop, resubmit, and ct with
// commit, force, table, zone, nat and exec(set_field:…->ct_mark), and prints them as
// OVS 3.5's ovs-ofctl does over OpenFlow 1.5. Anything else is refused as unknown to
// the fake.

// reservedPorts are the port keywords ovs-ofctl prints alone, without "output:".
var reservedPorts = []string{"NORMAL", "LOCAL", "IN_PORT", "FLOOD", "ALL"}

func reservedPort(v string) (string, bool) {
	for _, p := range reservedPorts {
		if strings.EqualFold(v, p) {
			return p, true
		}
	}
	return "", false
}

// normaliseActions parses an action list for a flow with match m and prints it.
func normaliseActions(actions string, m parsedMatch) (string, error) {
	list, err := splitTop(actions)
	if err != nil {
		return "", fmt.Errorf("actions %q: %w", actions, err)
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		n, err := normaliseAction(a, m)
		if err != nil {
			return "", fmt.Errorf("actions %q: %w", actions, err)
		}
		if n == "drop" && len(list) > 1 {
			return "", fmt.Errorf("actions %q: \"drop\" must be the only action", actions)
		}
		out = append(out, n)
	}
	return strings.Join(out, ","), nil
}

func normaliseAction(a string, m parsedMatch) (string, error) {
	if a == "drop" {
		return a, nil
	}
	if p, ok := reservedPort(a); ok {
		return p, nil
	}
	if port, ok := strings.CutPrefix(a, "output:"); ok {
		return normOutput(port)
	}
	if _, err := strconv.ParseUint(a, 10, 32); err == nil {
		return normOutput(a)
	}
	if inner, ok := cutCall(a, "ct"); ok {
		if !m.isIP() {
			return "", fmt.Errorf("%q needs ip or ipv6 in the match", a)
		}
		return normCT(inner)
	}
	if inner, ok := cutCall(a, "resubmit"); ok {
		return normResubmit(inner)
	}
	if strings.HasSuffix(a, "->ct_mark") || strings.Contains(a, "NXM_NX_CT_MARK") {
		return "", fmt.Errorf("%q: ct_mark can only be set inside ct(commit,exec(…))", a)
	}
	return "", fmt.Errorf("unknown action %q (the fake knows output, NORMAL, LOCAL, IN_PORT, FLOOD, ALL, drop, resubmit and ct)", a)
}

// normOutput prints output to a port: reserved ports by keyword, others as output:N.
func normOutput(port string) (string, error) {
	if p, ok := reservedPort(port); ok {
		return p, nil
	}
	p, err := normPort(port)
	if err != nil {
		return "", fmt.Errorf("output: %w", err)
	}
	if p == "LOCAL" {
		return p, nil
	}
	return "output:" + p, nil
}

// normResubmit handles resubmit(PORT,TABLE) with either part empty, not both.
func normResubmit(inner string) (string, error) {
	port, table, ok := strings.Cut(inner, ",")
	if !ok || (port == "" && table == "") {
		return "", fmt.Errorf("resubmit(%s): want resubmit(PORT,TABLE) with a port or a table", inner)
	}
	if port != "" {
		p, err := normPort(port)
		if err != nil {
			return "", fmt.Errorf("resubmit(%s): %w", inner, err)
		}
		port = p
	}
	if table != "" {
		t, err := strconv.ParseUint(table, 0, 8)
		if err != nil || t > maxTable {
			return "", fmt.Errorf("resubmit(%s): table %q out of range 0..%d", inner, table, maxTable)
		}
		table = strconv.FormatUint(t, 10)
	}
	return "resubmit(" + port + "," + table + ")", nil
}

// normCT prints a ct action's arguments in ovs-ofctl's order: commit, force, table,
// zone, then the nested actions, of which a leading nat is printed bare and the rest
// inside exec(…).
func normCT(inner string) (string, error) {
	if inner == "" {
		return "ct()", nil
	}
	args, err := splitTop(inner)
	if err != nil {
		return "", fmt.Errorf("ct(%s): %w", inner, err)
	}
	var commit, force bool
	table, zone := "", ""
	var nested []string
	for _, a := range args {
		key, value, _ := strings.Cut(a, "=")
		switch {
		case a == "commit":
			commit = true
		case a == "force":
			force = true
		case key == "table":
			t, err := strconv.ParseUint(value, 0, 8)
			if err != nil || t > maxTable {
				return "", fmt.Errorf("ct(%s): table %q out of range 0..%d", inner, value, maxTable)
			}
			table = strconv.FormatUint(t, 10)
		case key == "zone":
			z, err := strconv.ParseUint(value, 0, 16)
			if err != nil {
				return "", fmt.Errorf("ct(%s): zone %q is not a 16-bit number (the fake takes no zone fields)", inner, value)
			}
			zone = strconv.FormatUint(z, 10)
		case a == "nat":
			nested = append(nested, "nat")
		case strings.HasPrefix(a, "nat("):
			n, err := normNAT(a)
			if err != nil {
				return "", fmt.Errorf("ct(%s): %w", inner, err)
			}
			nested = append(nested, n)
		default:
			body, ok := cutCall(a, "exec")
			if !ok {
				return "", fmt.Errorf("ct(%s): unknown argument %q (the fake knows commit, force, table, zone, nat and exec)", inner, a)
			}
			acts, err := splitTop(body)
			if err != nil {
				return "", fmt.Errorf("ct(%s): %w", inner, err)
			}
			for _, x := range acts {
				n, err := normCTMarkWrite(x)
				if err != nil {
					return "", fmt.Errorf("ct(%s): %w", inner, err)
				}
				nested = append(nested, n)
			}
		}
	}
	if force && !commit {
		return "", fmt.Errorf("ct(%s): force needs commit", inner)
	}
	// Without commit, ct takes a bare nat (undoing the connection's translation) and
	// nothing else: a nat with arguments would start one.
	if !commit && len(nested) > 0 && (len(nested) > 1 || nested[0] != "nat") {
		return "", fmt.Errorf("ct(%s): actions other than a bare nat need commit", inner)
	}
	var out []string
	if commit {
		out = append(out, "commit")
	}
	if force {
		out = append(out, "force")
	}
	if table != "" {
		out = append(out, "table="+table)
	}
	if zone != "" {
		out = append(out, "zone="+zone)
	}
	if len(nested) > 0 && isNAT(nested[0]) {
		out = append(out, nested[0])
		nested = nested[1:]
	}
	if len(nested) > 0 {
		out = append(out, "exec("+strings.Join(nested, ",")+")")
	}
	return "ct(" + strings.Join(out, ",") + ")", nil
}

// isNAT reports whether a nested ct action is a nat, bare or with arguments.
func isNAT(a string) bool { return a == "nat" || strings.HasPrefix(a, "nat(") }

// normNAT handles nat(src=ADDR) and nat(dst=ADDR) with one address, printed as
// ovs-ofctl does (IPv6 in its canonical form, without brackets); ranges and ports are
// beyond the fake.
func normNAT(a string) (string, error) {
	body, ok := cutCall(a, "nat")
	if !ok {
		return "", fmt.Errorf("%q: malformed nat", a)
	}
	dir, value, _ := strings.Cut(body, "=")
	if dir != "src" && dir != "dst" {
		return "", fmt.Errorf("%q: the fake knows nat(src=ADDR) and nat(dst=ADDR)", a)
	}
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(value, "["), "]"))
	if err != nil || addr.Zone() != "" {
		return "", fmt.Errorf("%q: %q is not one IP address (the fake takes no ranges or ports)", a, value)
	}
	return "nat(" + dir + "=" + addr.String() + ")", nil
}

// normCTMarkWrite handles set_field:V[/M]->ct_mark and load:V->NXM_NX_CT_MARK[], both
// printed as set_field in hex; and a nat inside exec.
func normCTMarkWrite(a string) (string, error) {
	if a == "nat" {
		return a, nil
	}
	var value string
	if rest, ok := strings.CutPrefix(a, "set_field:"); ok {
		v, ok := strings.CutSuffix(rest, "->ct_mark")
		if !ok {
			return "", fmt.Errorf("%q: the fake sets only ct_mark in exec", a)
		}
		value = v
	} else if rest, ok := strings.CutPrefix(a, "load:"); ok {
		v, ok := strings.CutSuffix(rest, "->NXM_NX_CT_MARK[]")
		if !ok {
			return "", fmt.Errorf("%q: the fake loads only NXM_NX_CT_MARK[] in exec", a)
		}
		value = v
	} else {
		return "", fmt.Errorf("unknown action %q in exec (the fake knows set_field:…->ct_mark)", a)
	}
	norm, err := normHexMasked32(value)
	if err != nil || norm == "" {
		return "", fmt.Errorf("%q: bad ct_mark value %q", a, value)
	}
	return "set_field:" + norm + "->ct_mark", nil
}

// cutCall returns the inside of name(…) when a is exactly that.
func cutCall(a, name string) (string, bool) {
	rest, ok := strings.CutPrefix(a, name+"(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return "", false
	}
	return rest[:len(rest)-1], true
}

// splitTop splits a comma-separated list at the commas outside parentheses.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced parentheses in %q", s)
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	out = append(out, s[start:])
	for _, a := range out {
		if a == "" {
			return nil, fmt.Errorf("empty element in %q", s)
		}
	}
	return out, nil
}
