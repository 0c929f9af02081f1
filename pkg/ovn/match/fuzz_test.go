package match_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// FuzzParse checks that Parse never panics or hangs, that its errors locate a column
// inside the input (or just past it), and that what it accepts it describes
// consistently. Its seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		e, err := match.Parse(s)
		if err != nil {
			var se *match.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", s, err)
			}
			if se.Input != s || se.Col < 1 || se.Col > len(s)+1 || se.Msg == "" {
				t.Fatalf("Parse(%q) = %#v", s, se)
			}
			return
		}
		// String may keep the newline closing a final // comment, and nothing else.
		if str := e.String(); strings.TrimSpace(str) != strings.TrimSpace(s) || str != strings.TrimSpace(s) && !strings.HasSuffix(str, "\n") {
			t.Fatalf("Parse(%q).String() = %q", s, e.String())
		}
		// Northd wraps an ACL's match in parentheses; what Parse accepts must survive that
		// (unless the two levels take it past MaxDepth, a limit of ours, not OVN's).
		if _, err := match.Parse("((" + s + "))"); err != nil && !strings.Contains(err.Error(), "parentheses nested more than") {
			t.Fatalf("Parse(%q) succeeded but wrapped as northd wraps an ACL's match it fails: %v", s, err)
		}
		for _, names := range [][]string{e.Fields(), e.AddressSets(), e.PortGroups()} {
			if !sort.StringsAreSorted(names) || hasRepeats(names) {
				t.Fatalf("Parse(%q) lists %q", s, names)
			}
		}
	})
}

func hasRepeats(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// FuzzEval parses each input and evaluates what parses on a fixed set of packets. Eval
// must not panic; it must fail exactly when a name is unknown; and an expression and
// its negation can never both match a packet (both may fail to, through prerequisites).
// Its seeds are FuzzParse's.
func FuzzEval(f *testing.F) {
	for _, s := range corpusSeeds(f, "FuzzParse") {
		f.Add(s)
	}
	packets := []match.Packet{tcp4, udp4, icmp4, mc4, tcp6, icmp6, mc6, mapped, arp, lldp, untrk, regs, marked, arpSHA, ndSLL, mld2, onNode1, {}}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := match.Parse(s)
		if err != nil {
			return
		}
		unknown := false
		for _, name := range append(e.AddressSets(), e.PortGroups()...) {
			unknown = unknown || strings.HasPrefix(name, "x")
		}
		neg, negErr := match.Parse("!(" + s + ")")
		for i := range packets {
			got, err := e.Eval(&packets[i], fuzzSets{})
			if (err != nil) != unknown || err != nil && got {
				t.Fatalf("%q on packet %d = %v, %v (unknown names: %v)", s, i, got, err, unknown)
			}
			if negErr != nil || err != nil {
				continue
			}
			if both, _ := neg.Eval(&packets[i], fuzzSets{}); both && got {
				t.Fatalf("%q and its negation both match packet %d", s, i)
			}
		}
	})
}

// fuzzSets knows every name except those starting with "x". Names starting with "e"
// are empty; the others hold IPv4 and IPv6 members and the ports "p1" and "p2". Every
// port but those starting with "x" is bound to chassis "c1".
type fuzzSets struct{}

func (fuzzSets) AddressSet(name string) ([]netip.Prefix, bool) {
	switch {
	case strings.HasPrefix(name, "x"):
		return nil, false
	case strings.HasPrefix(name, "e"):
		return nil, true
	}
	return []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00::/8")}, true
}

func (fuzzSets) PortGroup(name string) ([]string, bool) {
	switch {
	case strings.HasPrefix(name, "x"):
		return nil, false
	case strings.HasPrefix(name, "e"):
		return nil, true
	}
	return []string{"p1", "p2"}, true
}

func (fuzzSets) Chassis(port string) (string, bool) {
	if strings.HasPrefix(port, "x") {
		return "", false
	}
	return "c1", true
}

// corpusSeeds reads the string inputs of a fuzz target's seed corpus files
// ("go test fuzz v1" then one string(...) line).
func corpusSeeds(tb testing.TB, target string) []string {
	dir := filepath.Join("testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds []string
	for _, ent := range entries {
		data, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		header, value, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		quoted, ok := strings.CutPrefix(value, "string(")
		quoted, ok2 := strings.CutSuffix(quoted, ")")
		s, err := strconv.Unquote(quoted)
		if header != "go test fuzz v1" || !ok || !ok2 || err != nil {
			tb.Fatalf("%s is not a corpus file with one string", ent.Name())
		}
		seeds = append(seeds, s)
	}
	if len(seeds) < 20 {
		tb.Fatalf("%s holds %d seeds, fewer than 20", dir, len(seeds))
	}
	return seeds
}
