package cluster

import (
	"net/netip"
	"testing"
)

func TestNodeIDCodec(t *testing.T) {
	runCodecCases(t, NodeIDCodec, testNodeRef, []codecCase[int]{
		{name: "id", value: "4", want: 4},
		{name: "zero", value: "0", want: 0},
		{name: "plus sign", value: "+12", want: 12},
		{name: "negative", value: "-1", wantErr: []string{`"-1" is negative`}},
		{name: "word", value: "four", wantErr: []string{`"four" is not a decimal integer`}},
		{name: "empty", value: "", wantErr: []string{`"" is not a decimal integer`}},
		{name: "space", value: " 4", wantErr: []string{`" 4" is not a decimal integer`}},
		{name: "json", value: `"4"`, wantErr: []string{`"\"4\"" is not a decimal integer`}},
		{name: "overflow", value: "99999999999999999999", wantErr: []string{`"99999999999999999999"`}},
	})
	runFormatCases(t, NodeIDCodec, []formatCase[int]{
		{name: "id", value: 4, want: "4"},
		{name: "negative", value: -1, wantErr: "id -1 is negative"},
	})
}

func TestNodeChassisIDCodec(t *testing.T) {
	const uuid = "b1f96182-2bdd-42b6-88f9-9a1fc1c85ece"
	runCodecCases(t, NodeChassisIDCodec, testNodeRef, []codecCase[string]{
		{name: "uuid", value: uuid, want: uuid},
		{name: "empty", value: "", wantErr: []string{"the chassis id is empty"}},
		{name: "space", value: "a b", wantErr: []string{`chassis id "a b" contains a space`}},
		{name: "newline", value: uuid + "\n", wantErr: []string{`"` + uuid + `\n"`}},
		{name: "not utf-8", value: "a\xffb", wantErr: []string{`"a\xffb" is not valid UTF-8`}},
	})
}

func TestNodeSubnetsCodec(t *testing.T) {
	runCodecCases(t, NodeSubnetsCodec, testNodeRef, []codecCase[map[string][]netip.Prefix]{
		{name: "single-stack string", value: `{"default":"10.244.1.0/24"}`,
			want: map[string][]netip.Prefix{"default": pfxs("10.244.1.0/24")}},
		{name: "dual-stack list", value: `{"default":["10.244.1.0/24","fd00:10:244:2::/64"]}`,
			want: map[string][]netip.Prefix{"default": pfxs("10.244.1.0/24", "fd00:10:244:2::/64")}},
		{name: "several networks", value: `{"default":["10.244.1.0/24"], "cluster_udn_blue": "10.100.1.0/24"}`,
			want: map[string][]netip.Prefix{"default": pfxs("10.244.1.0/24"), "cluster_udn_blue": pfxs("10.100.1.0/24")}},
		{name: "empty object", value: `{}`, want: map[string][]netip.Prefix{}},
		{name: "not a CIDR", value: `{"default":["10.244.1.0/33"]}`,
			wantErr: []string{`network "default": "10.244.1.0/33" is not a CIDR`}},
		{name: "no prefix length", value: `{"default":"10.244.1.0"}`,
			wantErr: []string{`"10.244.1.0" is not a CIDR`}},
		{name: "host bits", value: `{"default":"10.244.1.5/24"}`,
			wantErr: []string{`"10.244.1.5/24" has host bits set; the subnet is 10.244.1.0/24`}},
		{name: "two IPv4", value: `{"l3":["10.1.0.0/24","10.2.0.0/24"]}`,
			wantErr: []string{`network "l3": 10.1.0.0/24 and 10.2.0.0/24 are both IPv4; at most one per IP family`}},
		{name: "empty list", value: `{"default":[]}`, wantErr: []string{`network "default" has no subnets`}},
		{name: "number", value: `{"default":5}`,
			wantErr: []string{`network "default": "5" is neither a CIDR string nor a list of CIDR strings`}},
		{name: "null entry", value: `{"default":null}`, wantErr: []string{`"null" is neither`}},
		{name: "empty network name", value: `{"":"10.0.0.0/24"}`, wantErr: []string{"a network name is empty"}},
		{name: "malformed", value: `{"default":"10.244.1.0/24"`, wantErr: []string{"malformed JSON", `10.244.1.0/24`}},
	})
	runFormatCases(t, NodeSubnetsCodec, []formatCase[map[string][]netip.Prefix]{
		{name: "lists, sorted keys",
			value: map[string][]netip.Prefix{"default": pfxs("10.244.1.0/24", "fd00:10:244:2::/64"), "cluster_udn_blue": pfxs("10.100.1.0/24")},
			want:  `{"cluster_udn_blue":["10.100.1.0/24"],"default":["10.244.1.0/24","fd00:10:244:2::/64"]}`},
		{name: "host bits", value: map[string][]netip.Prefix{"default": pfxs("10.244.1.1/24")}, wantErr: "10.244.1.1/24 has host bits set"},
		{name: "no subnets", value: map[string][]netip.Prefix{"default": nil}, wantErr: `network "default" has no subnets`},
		{name: "invalid", value: map[string][]netip.Prefix{"default": {{}}}, wantErr: "invalid prefix"},
	})
}

func TestIfAddrCodecs(t *testing.T) {
	cases := []codecCase[[]netip.Prefix]{
		{name: "dual-stack", value: `{"ipv4":"100.88.0.4/16","ipv6":"fd97::4/64"}`, want: pfxs("100.88.0.4/16", "fd97::4/64")},
		{name: "IPv6 only", value: `{"ipv6":"fd97::4/64"}`, want: pfxs("fd97::4/64")},
		{name: "IPv4 only, unknown field", value: `{"ipv4":"100.88.0.4/16","zone":"x"}`, want: pfxs("100.88.0.4/16")},
		{name: "wrong family", value: `{"ipv4":"fd97::4/64"}`, wantErr: []string{`"ipv4": "fd97::4/64" is an IPv6 address`}},
		{name: "wrong family v6", value: `{"ipv6":"100.88.0.4/16"}`, wantErr: []string{`"ipv6": "100.88.0.4/16" is an IPv4 address`}},
		{name: "no prefix", value: `{"ipv4":"100.88.0.4"}`, wantErr: []string{`"ipv4": "100.88.0.4" is not a CIDR`}},
		{name: "empty", value: `{}`, wantErr: []string{`"{}" has neither an "ipv4" nor an "ipv6" address`}},
		{name: "number", value: `{"ipv4":4}`, wantErr: []string{`field "ipv4"`, "is a JSON number, want string"}},
	}
	runCodecCases(t, TransitSwitchPortIfAddrCodec, testNodeRef, cases)
	runCodecCases(t, PrimaryIfAddrCodec, testNodeRef, cases)
	runFormatCases(t, PrimaryIfAddrCodec, []formatCase[[]netip.Prefix]{
		{name: "dual-stack, IPv6 first", value: pfxs("fd00::5/64", "172.18.0.5/16"), want: `{"ipv4":"172.18.0.5/16","ipv6":"fd00::5/64"}`},
		{name: "none", value: nil, wantErr: "no address"},
		{name: "two IPv4", value: pfxs("172.18.0.5/16", "172.19.0.5/16"), wantErr: "both IPv4"},
	})
}

func TestHostCIDRsCodec(t *testing.T) {
	runCodecCases(t, HostCIDRsCodec, testNodeRef, []codecCase[[]netip.Prefix]{
		{name: "sorted, deduplicated", value: `["172.18.0.2/16","10.0.0.5/8","fc00:f853:ccd:e793::2/64","10.0.0.5/8"]`,
			want: pfxs("10.0.0.5/8", "172.18.0.2/16", "fc00:f853:ccd:e793::2/64")},
		{name: "empty", value: `[]`, want: nil},
		{name: "no prefix", value: `["172.18.0.2"]`, wantErr: []string{`"172.18.0.2" is not a CIDR`}},
		{name: "object", value: `{"a":"172.18.0.2/16"}`, wantErr: []string{"is a JSON object, want array of strings"}},
	})
	runFormatCases(t, HostCIDRsCodec, []formatCase[[]netip.Prefix]{
		{name: "sorted by text", value: pfxs("172.18.0.2/16", "10.0.0.5/8"), want: `["10.0.0.5/8","172.18.0.2/16"]`},
		{name: "empty", value: nil, want: `[]`},
		{name: "invalid", value: []netip.Prefix{{}}, wantErr: "invalid prefix"},
	})
}

func TestL3GatewayConfigCodec(t *testing.T) {
	shared := Gateway{
		Mode:           GatewayModeShared,
		BridgeID:       "breth0",
		InterfaceID:    "breth0_worker1",
		MAC:            "f2:20:a0:3c:26:4c",
		IPs:            pfxs("172.18.0.3/16"),
		NextHops:       []netip.Addr{addr("172.18.0.1")},
		NodePortEnable: true,
	}
	const sharedJSON = `{"default":{"mode":"shared","bridge-id":"breth0","interface-id":"breth0_worker1","mac-address":"f2:20:a0:3c:26:4c","ip-addresses":["172.18.0.3/16"],"ip-address":"172.18.0.3/16","next-hops":["172.18.0.1"],"next-hop":"172.18.0.1","node-port-enable":"true","vlan-id":"0"}}`
	dual := Gateway{
		Mode:        GatewayModeLocal,
		InterfaceID: "breth0_worker2",
		MAC:         "0a:58:ac:12:00:04",
		IPs:         pfxs("172.18.0.4/16", "fc00::4/64"),
		NextHops:    []netip.Addr{addr("172.18.0.1"), addr("fc00::1")},
		VLANID:      100,
	}
	entry := func(fields string) string {
		return `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26:4c","ip-addresses":["172.18.0.3/16"]` + fields + `}}`
	}
	runCodecCases(t, L3GatewayConfigCodec, testNodeRef, []codecCase[Gateway]{
		{name: "as ovnk writes it", value: sharedJSON, want: shared},
		{name: "dual-stack, other networks ignored",
			value: `{"default":{"mode":"local","interface-id":"breth0_worker2","mac-address":"0A:58:AC:12:00:04",` +
				`"ip-addresses":["172.18.0.4/16","fc00::4/64"],"next-hops":["172.18.0.1","fc00::1"],"node-port-enable":"false","vlan-id":"100"},` +
				`"other":{"mode":"bogus"}}`,
			want: dual},
		{name: "legacy singular fields only",
			value: `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26:4c","ip-address":"172.18.0.3/16","next-hop":"172.18.0.1"}}`,
			want:  Gateway{Mode: GatewayModeShared, MAC: "f2:20:a0:3c:26:4c", IPs: pfxs("172.18.0.3/16"), NextHops: []netip.Addr{addr("172.18.0.1")}}},
		{name: "no next hops", value: entry(""), want: Gateway{Mode: GatewayModeShared, MAC: "f2:20:a0:3c:26:4c", IPs: pfxs("172.18.0.3/16")}},
		{name: "disabled", value: `{"default":{"mode":"disabled","mac-address":"junk"}}`, want: Gateway{Mode: GatewayModeDisabled}},
		{name: "no default entry", value: `{"red":{"mode":"shared"}}`, wantErr: []string{`has no "default" entry`}},
		{name: "bad mode", value: `{"default":{"mode":"bogus"}}`, wantErr: []string{`entry "default": mode "bogus" is not "shared", "local" or "disabled"`}},
		{name: "no mode", value: `{"default":{}}`, wantErr: []string{`mode "" is not`}},
		{name: "short MAC", value: `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26"}}`,
			wantErr: []string{`mac-address: "f2:20:a0:3c:26" is not a MAC address`}},
		{name: "64-bit MAC", value: `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26:4c:00:01"}}`,
			wantErr: []string{`MAC address "f2:20:a0:3c:26:4c:00:01" has 64 bits, want 48`}},
		{name: "no addresses", value: `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26:4c"}}`, wantErr: []string{"ip-addresses is missing"}},
		{name: "address without prefix", value: `{"default":{"mode":"shared","mac-address":"f2:20:a0:3c:26:4c","ip-addresses":["172.18.0.3"]}}`,
			wantErr: []string{`ip-addresses: "172.18.0.3" is not a CIDR`}},
		{name: "contradicting ip-address", value: entry(`,"ip-address":"172.18.0.9/16"`),
			wantErr: []string{`ip-address "172.18.0.9/16" contradicts ip-addresses "172.18.0.3/16"`}},
		{name: "bad next hop", value: entry(`,"next-hops":["172.18.0.1/16"]`), wantErr: []string{`next-hops: "172.18.0.1/16" is not an IP address`}},
		{name: "bad node-port-enable", value: entry(`,"node-port-enable":"yes"`), wantErr: []string{`node-port-enable "yes" is not "true" or "false"`}},
		{name: "VLAN too big", value: entry(`,"vlan-id":"4096"`), wantErr: []string{`vlan-id "4096" is not a VLAN id from 0 to 4095`}},
		{name: "negative VLAN", value: entry(`,"vlan-id":"-1"`), wantErr: []string{`vlan-id "-1"`}},
		{name: "VLAN as number", value: entry(`,"vlan-id":5`), wantErr: []string{`field "vlan-id"`, "is a JSON number, want string"}},
		{name: "default is null", value: `{"default":null}`, wantErr: []string{`entry "default": value null is not a JSON object`}},
	})
	runFormatCases(t, L3GatewayConfigCodec, []formatCase[Gateway]{
		{name: "upstream shape", value: shared, want: sharedJSON},
		{name: "dual-stack has no singular fields", value: dual,
			want: `{"default":{"mode":"local","interface-id":"breth0_worker2","mac-address":"0a:58:ac:12:00:04","ip-addresses":["172.18.0.4/16","fc00::4/64"],"next-hops":["172.18.0.1","fc00::1"],"node-port-enable":"false","vlan-id":"100"}}`},
		{name: "disabled", value: Gateway{Mode: GatewayModeDisabled, MAC: "x"}, want: `{"default":{"mode":"disabled"}}`},
		{name: "bad mode", value: Gateway{Mode: "Shared"}, wantErr: `mode "Shared" is not`},
		{name: "bad MAC", value: Gateway{Mode: GatewayModeLocal, MAC: "x", IPs: pfxs("172.18.0.3/16")}, wantErr: `mac-address: "x"`},
		{name: "no IPs", value: Gateway{Mode: GatewayModeLocal, MAC: "f2:20:a0:3c:26:4c"}, wantErr: "no ip-addresses"},
		{name: "bad VLAN", value: Gateway{Mode: GatewayModeLocal, MAC: "f2:20:a0:3c:26:4c", IPs: pfxs("172.18.0.3/16"), VLANID: 5000}, wantErr: "vlan-id 5000"},
		{name: "bad next hop", value: Gateway{Mode: GatewayModeLocal, MAC: "f2:20:a0:3c:26:4c", IPs: pfxs("172.18.0.3/16"), NextHops: []netip.Addr{{}}}, wantErr: "next-hops: invalid address"},
	})
}

func TestNodeLabelsAndVersion(t *testing.T) {
	n := &Node{Labels: map[string]string{LabelEgressAssignable: ""}, Layer2TopologyVersion: "2.0"}
	if !n.EgressAssignable() || !n.Layer2TransitRouter() {
		t.Errorf("node %+v: EgressAssignable %v, Layer2TransitRouter %v; want both true", n, n.EgressAssignable(), n.Layer2TransitRouter())
	}
	n = &Node{Layer2TopologyVersion: "2.1"}
	if n.EgressAssignable() || n.Layer2TransitRouter() {
		t.Errorf("node %+v: want neither egress-assignable nor on the transit-router topology", n)
	}
}
