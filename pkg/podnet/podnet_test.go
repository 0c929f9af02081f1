package podnet_test

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/podnet"
)

func plan() podnet.Plan {
	return podnet.Plan{
		Namespace: "blue", Name: "web", UID: "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f",
		Interfaces: []podnet.Interface{
			{
				Name: "eth0", Network: "default", IfaceID: "blue_web", MAC: "0a:58:0a:f4:00:05", MTU: 1400,
				IPs:    []netip.Prefix{netip.MustParsePrefix("10.244.0.5/24"), netip.MustParsePrefix("fd00:10:244:1::5/64")},
				Routes: []podnet.Route{{Dst: netip.MustParsePrefix("100.64.0.0/16"), Via: netip.MustParseAddr("10.244.0.1")}},
			},
			{
				Name: "ovn-udn1", Network: "cluster_udn_blue", IfaceID: "blue.blue_blue_web", MAC: "0a:58:0a:0a:00:05", MTU: 1400,
				IPs: []netip.Prefix{netip.MustParsePrefix("10.10.0.5/24")},
				Routes: []podnet.Route{
					{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.10.0.1")},
					{Dst: netip.MustParsePrefix("10.96.0.0/16")}, // on-link: no next hop
				},
			},
		},
	}
}

// A plan survives the trip through JSON, and the JSON is what docs/agent.md shows: plain
// addresses and prefixes, no next hop for an on-link route.
func TestPlanJSON(t *testing.T) {
	p := plan()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back podnet.Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, back) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, p)
	}
	for _, want := range []string{
		`"namespace":"blue"`, `"uid":"5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f"`, `"ifaceID":"blue_web"`,
		`"ips":["10.244.0.5/24","fd00:10:244:1::5/64"]`,
		`{"dst":"100.64.0.0/16","via":"10.244.0.1"}`, `{"dst":"10.96.0.0/16"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
}

func TestHostInterfaceName(t *testing.T) {
	const id = "3f2b8c0d9e1a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4"
	tests := []struct {
		index int
		want  string
	}{
		{0, "3f2b8c0d9e1a4b5"},
		{1, "3f2b8c0d9e1a4_1"},
		{9, "3f2b8c0d9e1a4_9"},
		{10, "3f2b8c0d9e1a_10"},
	}
	for _, tt := range tests {
		got := podnet.HostInterfaceName(id, tt.index)
		if got != tt.want || len(got) > 15 {
			t.Errorf("HostInterfaceName(%d) = %q, want %q (15 bytes at most)", tt.index, got, tt.want)
		}
		if !podnet.IsHostInterfaceOf(id, got) {
			t.Errorf("IsHostInterfaceOf(%q) = false for its own interface %d", got, tt.index)
		}
	}
	if got := podnet.HostInterfaceName("abc", 1); got != "abc_1" {
		t.Errorf("a short id's second interface is %q, want abc_1", got)
	}
	const other = "3f2b8c0d9e1aFFFF"
	for _, name := range []string{"eth0", "3f2b8c0d9e1a4_0", "3f2b8c0d9e1a4_x", "3f2b8c0d9e1a_1", podnet.HostInterfaceName(other, 0), "br-int"} {
		if podnet.IsHostInterfaceOf(id, name) {
			t.Errorf("IsHostInterfaceOf(%q) = true: not an interface of the sandbox", name)
		}
	}
	if podnet.IsHostInterfaceOf("", "") {
		t.Error("an empty container id owns the empty name")
	}
}

func TestValidate(t *testing.T) {
	if err := plan().Validate(); err != nil {
		t.Fatalf("a good plan: %v", err)
	}
	tests := []struct {
		name   string
		change func(p *podnet.Plan)
		want   string
	}{
		{"no interfaces", func(p *podnet.Plan) { p.Interfaces = nil }, "plan of pod blue/web has no interfaces"},
		{"long name", func(p *podnet.Plan) { p.Interfaces[0].Name = "averyveryverylongname" }, `pod blue/web interface "averyveryverylongname" (network default): not a Linux interface name`},
		{"same name", func(p *podnet.Plan) { p.Interfaces[1].Name = "eth0" }, `interface "eth0" (network cluster_udn_blue): the name is used twice`},
		{"bad MAC", func(p *podnet.Plan) { p.Interfaces[0].MAC = "0a:58:0a:f4:00" }, `MAC "0a:58:0a:f4:00" is not a 48-bit MAC`},
		{"MTU", func(p *podnet.Plan) { p.Interfaces[0].MTU = 0 }, "MTU 0 is not from 68 to 65535"},
		{"no addresses", func(p *podnet.Plan) { p.Interfaces[1].IPs = nil }, `interface "ovn-udn1" (network cluster_udn_blue): no addresses`},
		{"no port", func(p *podnet.Plan) { p.Interfaces[0].IfaceID = "" }, "no logical switch port"},
		{"route families", func(p *podnet.Plan) {
			p.Interfaces[0].Routes = []podnet.Route{{Dst: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("10.244.0.1")}}
		}, "route to ::/0 via 10.244.0.1 mixes families"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan()
			tt.change(&p)
			if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate: %v, want %q", err, tt.want)
			}
		})
	}
}

// The plugin's verdict on each reason: final only for the reasons that say asking again
// cannot help; a reason it does not know is not final.
func TestRetryable(t *testing.T) {
	for reason, want := range map[string][2]bool{
		podnet.ReasonNotReady: {true, true}, podnet.ReasonNotAllocated: {true, true}, podnet.ReasonNotProgrammed: {true, true},
		podnet.ReasonNotFound: {false, true}, podnet.ReasonUIDMismatch: {false, true},
		podnet.ReasonNetworkGone: {false, true}, podnet.ReasonInvalid: {false, true},
		"SomethingNew": {false, false}, "": {false, false},
	} {
		if retry, known := podnet.Retryable(reason); retry != want[0] || known != want[1] {
			t.Errorf("Retryable(%q) = %v, %v; want %v, %v", reason, retry, known, want[0], want[1])
		}
	}
}
