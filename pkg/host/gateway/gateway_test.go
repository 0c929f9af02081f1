package gateway

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/openflow"
)

// TestSharedFlowsGolden pins the flows for a dual-stack node with the default network
// and one user-defined network, given out of port order. The expected text is what
// `ovs-ofctl dump-flows --no-stats --no-names br-ex` shows without the cookie (the
// real-packet test holds a real bridge to it).
func TestSharedFlowsGolden(t *testing.T) {
	c := Config{
		NIC: 1,
		Patches: []Patch{
			{Network: "blue", OFPort: 5, CTMark: NetworkCTMark(2), Masquerade: true},
			{Network: "default", OFPort: 4, CTMark: DefaultNetworkCTMark},
		},
		IPv4: true, IPv6: true,
		NodeIPv4: netip.MustParseAddr("172.18.0.2"), NodeIPv6: netip.MustParseAddr("fc00:f853:ccd:e793::2"),
	}
	flows, err := SharedFlows(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"priority=100,ip,in_port=1 actions=ct(table=1,zone=64000,nat)",
		"priority=100,ip,in_port=LOCAL actions=ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:1",
		"priority=100,ip,in_port=4 actions=ct(commit,zone=64000,exec(set_field:0x1->ct_mark)),output:1",
		"priority=100,ip,in_port=5 actions=ct(commit,zone=64000,nat(src=172.18.0.2),exec(set_field:0x5->ct_mark)),output:1",
		"priority=100,ipv6,in_port=1 actions=ct(table=1,zone=64000,nat)",
		"priority=100,ipv6,in_port=LOCAL actions=ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:1",
		"priority=100,ipv6,in_port=4 actions=ct(commit,zone=64000,exec(set_field:0x1->ct_mark)),output:1",
		"priority=100,ipv6,in_port=5 actions=ct(commit,zone=64000,nat(src=fc00:f853:ccd:e793::2),exec(set_field:0x5->ct_mark)),output:1",
		"priority=110,icmp6,in_port=1,icmp_type=135 actions=LOCAL,output:4,output:5",
		"priority=110,icmp6,in_port=1,icmp_type=136 actions=LOCAL,output:4,output:5",
		"priority=10,in_port=1 actions=LOCAL,output:4,output:5",
		"priority=10,in_port=LOCAL actions=output:1",
		"priority=10,in_port=4 actions=output:1",
		"priority=10,in_port=5 actions=output:1",
		"table=1, priority=100,ct_state=+est+trk,ct_mark=0x1 actions=output:4",
		"table=1, priority=100,ct_state=+rel+trk,ct_mark=0x1 actions=output:4",
		"table=1, priority=100,ct_state=+est+trk,ct_mark=0x5 actions=output:5",
		"table=1, priority=100,ct_state=+rel+trk,ct_mark=0x5 actions=output:5",
		"table=1, priority=0 actions=LOCAL",
	}
	got := render(flows)
	if !slices.Equal(got, want) {
		t.Errorf("SharedFlows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The Fake normalises them to themselves, as the real bridge does: they are
	// written in ovs-ofctl's own spelling, so dumps compare line for line.
	f := openflow.NewFake("br-ex")
	ctx := context.Background()
	if _, err := f.Sync(ctx, "br-ex", Cookie, flows); err != nil {
		t.Fatal(err)
	}
	dumped, err := f.Flows(ctx, "br-ex", Cookie)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dumped)
	slices.Sort(got)
	if !slices.Equal(dumped, got) {
		t.Errorf("the Fake normalised the flows to something else:\n%s", strings.Join(dumped, "\n"))
	}
}

// TestSharedFlowsIPv4HostOnly pins the smallest set: an IPv4 node before any GR exists.
func TestSharedFlowsIPv4HostOnly(t *testing.T) {
	flows, err := SharedFlows(Config{NIC: 7, IPv4: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"priority=100,ip,in_port=7 actions=ct(table=1,zone=64000,nat)",
		"priority=100,ip,in_port=LOCAL actions=ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:7",
		"priority=10,in_port=7 actions=LOCAL",
		"priority=10,in_port=LOCAL actions=output:7",
		"table=1, priority=0 actions=LOCAL",
	}
	if got := render(flows); !slices.Equal(got, want) {
		t.Errorf("SharedFlows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSharedFlowsRefuses(t *testing.T) {
	def := Patch{Network: "default", OFPort: 2, CTMark: DefaultNetworkCTMark}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing NIC ofport", Config{IPv4: true}, "NIC ofport 0"},
		{"NIC is LOCAL", Config{NIC: 65534, IPv4: true}, "NIC ofport 65534"},
		{"no family", Config{NIC: 1}, "neither IPv4 nor IPv6"},
		{"patch without network", Config{NIC: 1, IPv4: true, Patches: []Patch{{OFPort: 2, CTMark: 1}}}, "patch port 2 has no network name"},
		{"network twice", Config{NIC: 1, IPv4: true, Patches: []Patch{def, {Network: "default", OFPort: 3, CTMark: 4}}}, `network "default" has two patch ports`},
		{"patch on the NIC", Config{NIC: 1, IPv4: true, Patches: []Patch{{Network: "blue", OFPort: 1, CTMark: 4}}}, `network "blue": patch ofport 1 is the NIC's`},
		{"patch port twice", Config{NIC: 1, IPv4: true, Patches: []Patch{def, {Network: "blue", OFPort: 2, CTMark: 4}}}, `network "blue": patch ofport 2 is network "default"'s too`},
		{"patch port missing", Config{NIC: 1, IPv4: true, Patches: []Patch{{Network: "blue", CTMark: 4}}}, `network "blue": patch ofport 0 out of range`},
		{"mark of the host", Config{NIC: 1, IPv4: true, Patches: []Patch{{Network: "blue", OFPort: 3, CTMark: HostCTMark}}}, `network "blue": ct mark 2 is the host's`},
		{"mark 0", Config{NIC: 1, IPv4: true, Patches: []Patch{{Network: "blue", OFPort: 3}}}, `network "blue": ct mark 0 out of range`},
		{"mark twice", Config{NIC: 1, IPv4: true, Patches: []Patch{def, {Network: "blue", OFPort: 3, CTMark: 1}}}, `network "blue": ct mark 1 is network "default"'s too`},
		{"masquerade without the node's IPv4", Config{NIC: 1, IPv4: true, Patches: []Patch{{Network: "blue", OFPort: 3, CTMark: 5, Masquerade: true}}}, `network "blue" masquerades but the node's IPv4 address "invalid IP" is not one`},
		{"masquerade without the node's IPv6", Config{NIC: 1, IPv4: true, IPv6: true, NodeIPv4: netip.MustParseAddr("172.18.0.2"), Patches: []Patch{{Network: "blue", OFPort: 3, CTMark: 5, Masquerade: true}}}, `network "blue" masquerades but the node's IPv6 address "invalid IP" is not one`},
	} {
		_, err := SharedFlows(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func render(flows []openflow.Flow) []string {
	out := make([]string, len(flows))
	for i, f := range flows {
		out[i] = f.String()
	}
	return out
}
