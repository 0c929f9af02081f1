package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseINI(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []iniSection
	}{{
		name: "empty",
		in:   "",
	}, {
		name: "comments, blanks and spaces",
		in: "# a comment\n; another\n\n  [Default]  # trailing comment\n" +
			"  MTU=1500\ntransport   =   no-overlay ; why\n\t\n[no-overlay]\nrouting = managed#x\n",
		want: []iniSection{
			{name: "default", line: 4, keys: []iniKey{{"mtu", "1500", 5}, {"transport", "no-overlay", 6}}},
			{name: "no-overlay", line: 8, keys: []iniKey{{"routing", "managed", 9}}},
		},
	}, {
		name: "CRLF line ends",
		in:   "[default]\r\nmtu = 1500\r\n",
		want: []iniSection{{name: "default", line: 1, keys: []iniKey{{"mtu", "1500", 2}}}},
	}, {
		name: "quoted values keep comment characters and blanks",
		in:   "[default]\nkubeconfig = \" /etc/kube#1;x \" # comment\nnode-name = \"\"\n",
		want: []iniSection{{name: "default", line: 1, keys: []iniKey{
			{"kubeconfig", " /etc/kube#1;x ", 2}, {"node-name", "", 3},
		}}},
	}, {
		name: "empty value, and = inside a value",
		in:   "[default]\nkubeconfig =\nnode-name = a=b\n",
		want: []iniSection{{name: "default", line: 1, keys: []iniKey{{"kubeconfig", "", 2}, {"node-name", "a=b", 3}}}},
	}, {
		name: "a section may appear twice",
		in:   "[default]\nmtu = 1\n[bgp-managed]\n[default]\ntransport = geneve\n",
		want: []iniSection{
			{name: "default", line: 1, keys: []iniKey{{"mtu", "1", 2}}},
			{name: "bgp-managed", line: 3},
			{name: "default", line: 4, keys: []iniKey{{"transport", "geneve", 5}}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseINI("f.conf", []byte(tt.in))
			if err != nil {
				t.Fatalf("parseINI: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseINI =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseINIErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{{
		name: "key outside a section",
		in:   "mtu = 1500\nrouting = managed\nfoo = 1\n[default]\n",
		want: []string{
			`f.conf:1: key "mtu" is outside any section: put it below a section header such as [default]`,
			`f.conf:2: key "routing" is outside any section: put it below a section header such as [no-overlay]`,
			`f.conf:3: key "foo" is outside any section: put it below a section header such as [default]`,
		},
	}, {
		name: "duplicate keys, also across a repeated section",
		in:   "[default]\nmtu = 1500\nMTU = 1400\n[no-overlay]\n[default]\nmtu = 9000\n",
		want: []string{
			`f.conf:3: duplicate key "mtu" in [default], first set on line 2: keep one`,
			`f.conf:6: duplicate key "mtu" in [default], first set on line 2: keep one`,
		},
	}, {
		name: "malformed lines",
		in: "[default\n[]\n[a]b]\n[default]\njust words\n= 5\n" +
			"kubeconfig = \"/a\nnode-name = \"n1\" x\n",
		want: []string{
			`f.conf:1: malformed section header "[default": want [name]`,
			`f.conf:2: malformed section header "[]": want [name]`,
			`f.conf:3: malformed section header "[a]b]": want [name]`,
			`f.conf:5: "just words" is neither "key = value" nor "[section]"`,
			`f.conf:6: "= 5" is neither "key = value" nor "[section]"`,
			`f.conf:7: kubeconfig: value "/a has no closing quote`,
			`f.conf:8: node-name: unexpected "x" after the quoted value`,
		},
	}, {
		name: "keys below a malformed header are skipped",
		in:   "[default]\nmtu = 1\n[no-overlay\nmtu = 2\n",
		want: []string{`f.conf:3: malformed section header "[no-overlay": want [name]`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseINI("f.conf", []byte(tt.in))
			if got := messages(err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestINICodec(t *testing.T) {
	c := &iniCodec{file: "a.conf"}
	out := map[string]any{}
	err := c.Decode([]byte("[default]\nmtu = 1500\n[no-overlay]\nrouting = managed\n"), out)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := map[string]any{"mtu": "1500", "no-overlay": map[string]any{"routing": "managed"}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("Decode = %v, want %v", out, want)
	}
	if want := map[string]int{"mtu": 2, "no-overlay.routing": 4}; !reflect.DeepEqual(c.lines, want) {
		t.Errorf("lines = %v, want %v", c.lines, want)
	}
	if _, err := c.Encode(out); err == nil {
		t.Error("Encode succeeded, want an error")
	}
}

func TestINICodecUnknownNames(t *testing.T) {
	in := "[default]\ncluster_subnets = 10.0.0.0/8\n[no_overlay]\nrouting = managed\n" +
		"[no-overlay]\nrooting = managed\ntopology = full-mesh\n[bgp]\n[leader-election]\nlease = 1s\n"
	err := (&iniCodec{file: "a.conf"}).Decode([]byte(in), map[string]any{})
	want := []string{
		`a.conf:2: unknown key "cluster_subnets" in [default]: the closest known key is [default] cluster-subnets`,
		`a.conf:3: unknown section [no_overlay]: the closest known section is [no-overlay]`,
		`a.conf:6: unknown key "rooting" in [no-overlay]: the closest known key is [no-overlay] routing`,
		`a.conf:7: unknown key "topology" in [no-overlay]: the closest known key is [bgp-managed] topology`,
		`a.conf:8: unknown section [bgp]: the closest known section is [bgp-managed]`,
		`a.conf:10: unknown key "lease" in [leader-election]: the closest known key is [leader-election] lease-name`,
	}
	if got := messages(err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"routing", "rooting", 1}, {"mtu", "mut", 2}, {"kitten", "sitting", 3}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// messages returns the messages of err's joined errors, or of err itself; nil for nil.
func messages(err error) []string {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range joined.Unwrap() {
		out = append(out, messages(e)...)
	}
	return out
}
