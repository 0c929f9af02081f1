package cluster

import (
	"net/netip"
	"testing"
)

var testPodRef = ObjectRef{Kind: "Pod", Namespace: "blue", Name: "web"}

func TestPodNetworksCodec(t *testing.T) {
	type m = map[string]PodInterface
	entry := func(fields string) string {
		return `{"default":{"ip_addresses":["10.244.1.5/24"],"mac_address":"0a:58:0a:f4:01:05"` + fields + `}}`
	}
	v4 := PodInterface{IPs: pfxs("10.244.1.5/24"), MAC: "0a:58:0a:f4:01:05"}
	runCodecCases(t, PodNetworksCodec, testPodRef, []codecCase[m]{
		{name: "upstream single-stack with legacy fields",
			value: `{"default":{"ip_addresses":["10.244.1.5/24"],"mac_address":"0a:58:0a:f4:01:05","gateway_ips":["10.244.1.1"],"ip_address":"10.244.1.5/24","gateway_ip":"10.244.1.1"}}`,
			want:  m{"default": {IPs: pfxs("10.244.1.5/24"), MAC: "0a:58:0a:f4:01:05", Gateways: []netip.Addr{addr("10.244.1.1")}}}},
		{name: "legacy fields only",
			value: `{"default":{"ip_address":"10.244.1.5/24","mac_address":"0A:58:0A:F4:01:05","gateway_ip":"10.244.1.1"}}`,
			want:  m{"default": {IPs: pfxs("10.244.1.5/24"), MAC: "0a:58:0a:f4:01:05", Gateways: []netip.Addr{addr("10.244.1.1")}}}},
		{name: "primary UDN, default infrastructure-locked, routes",
			value: `{"default":{"ip_addresses":["10.244.1.5/24","fd00:10:244:2::5/64"],"mac_address":"0a:58:0a:f4:01:05",` +
				`"routes":[{"dest":"10.96.0.0/16","nextHop":"10.244.1.1"},{"dest":"100.64.0.0/16","nextHop":"10.244.1.1"}],"role":"infrastructure-locked"},` +
				`"blue/blue":{"ip_addresses":["10.100.1.5/24"],"mac_address":"0a:58:0a:64:01:05","gateway_ips":["10.100.1.1"],` +
				`"routes":[{"dest":"100.65.0.0/16","nextHop":"10.100.1.1"},{"dest":"172.30.0.0/16","nextHop":""}],"role":"primary"}}`,
			want: m{
				"default": {IPs: pfxs("10.244.1.5/24", "fd00:10:244:2::5/64"), MAC: "0a:58:0a:f4:01:05", Role: PodRoleInfrastructureLocked,
					Routes: []PodRoute{{Dest: pfx("10.96.0.0/16"), NextHop: addr("10.244.1.1")}, {Dest: pfx("100.64.0.0/16"), NextHop: addr("10.244.1.1")}}},
				"blue/blue": {IPs: pfxs("10.100.1.5/24"), MAC: "0a:58:0a:64:01:05", Gateways: []netip.Addr{addr("10.100.1.1")}, Role: PodRolePrimary,
					Routes: []PodRoute{{Dest: pfx("100.65.0.0/16"), NextHop: addr("10.100.1.1")}, {Dest: pfx("172.30.0.0/16")}}},
			}},
		{name: "Layer2 with tunnel id and LLA gateway, unknown fields ignored",
			value: `{"green/net":{"ip_addresses":["10.200.0.7/16","fd20::7/64"],"mac_address":"0a:58:0a:c8:00:07","gateway_ips":["10.200.0.1","fd20::1"],` +
				`"ipv6_lla_gateway_ip":"fe80::858:aff:fec8:1","tunnel_id":7,"role":"primary","ipam_mode":"","future":{"x":1}}}`,
			want: m{"green/net": {IPs: pfxs("10.200.0.7/16", "fd20::7/64"), MAC: "0a:58:0a:c8:00:07",
				Gateways: []netip.Addr{addr("10.200.0.1"), addr("fd20::1")}, GatewayIPv6LLA: addr("fe80::858:aff:fec8:1"), TunnelID: 7, Role: PodRolePrimary}}},
		{name: "IPAM disabled: MAC only", value: `{"ns/l2":{"ip_addresses":null,"mac_address":"0a:58:00:00:00:01","role":"secondary"}}`,
			want: m{"ns/l2": {MAC: "0a:58:00:00:00:01", Role: PodRoleSecondary}}},
		{name: "route dest is masked", value: entry(`,"routes":[{"dest":"10.96.1.2/16","nextHop":"10.244.1.1"}]`),
			want: m{"default": {IPs: v4.IPs, MAC: v4.MAC, Routes: []PodRoute{{Dest: pfx("10.96.0.0/16"), NextHop: addr("10.244.1.1")}}}}},
		{name: "empty", value: `{}`, want: m{}},

		{name: "null entry", value: `{"default":null}`, wantErr: []string{`entry "default": value null is not a JSON object`}},
		{name: "no MAC", value: `{"default":{"ip_addresses":["10.244.1.5/24"]}}`, wantErr: []string{`entry "default": mac_address: "" is not a MAC address`}},
		{name: "64-bit MAC", value: `{"default":{"mac_address":"0a:58:0a:f4:01:05:00:01"}}`,
			wantErr: []string{`MAC address "0a:58:0a:f4:01:05:00:01" has 64 bits, want 48`}},
		{name: "IP without prefix", value: `{"default":{"ip_addresses":["10.244.1.5"],"mac_address":"0a:58:0a:f4:01:05"}}`,
			wantErr: []string{`ip_addresses: "10.244.1.5" is not a CIDR`}},
		{name: "two IPv4", value: `{"default":{"ip_addresses":["10.244.1.5/24","10.244.1.6/24"],"mac_address":"0a:58:0a:f4:01:05"}}`,
			wantErr: []string{"ip_addresses: 10.244.1.5/24 and 10.244.1.6/24 are both IPv4"}},
		{name: "contradicting ip_address", value: entry(`,"ip_address":"10.244.1.6/24"`),
			wantErr: []string{`ip_address "10.244.1.6/24" contradicts ip_addresses "10.244.1.5/24"`}},
		{name: "gateway of another family", value: entry(`,"gateway_ips":["fd00::1"]`),
			wantErr: []string{"gateway_ips: fd00::1 is an IPv6 gateway but the pod has no IPv6 address"}},
		{name: "two IPv4 gateways", value: entry(`,"gateway_ips":["10.244.1.1","10.244.1.2"]`), wantErr: []string{"both IPv4"}},
		{name: "bad gateway", value: entry(`,"gateway_ips":["10.244.1.1/24"]`), wantErr: []string{`gateway_ips: "10.244.1.1/24" is not an IP address`}},
		{name: "gateway with zone", value: entry(`,"gateway_ips":["fe80::1%eth0"]`), wantErr: []string{`"fe80::1%eth0" is not an IP address`}},
		{name: "default route", value: entry(`,"routes":[{"dest":"0.0.0.0/0","nextHop":"10.244.1.1"}]`),
			wantErr: []string{"routes: dest 0.0.0.0/0 is a default route; give it as gateway_ips"}},
		{name: "route families differ", value: entry(`,"routes":[{"dest":"10.96.0.0/16","nextHop":"fd00::1"}]`),
			wantErr: []string{"routes: nextHop fd00::1 and dest 10.96.0.0/16 are of different IP families"}},
		{name: "bad route dest", value: entry(`,"routes":[{"dest":"10.96.0.0","nextHop":""}]`), wantErr: []string{`routes: dest: "10.96.0.0" is not a CIDR`}},
		{name: "bad route next hop", value: entry(`,"routes":[{"dest":"10.96.0.0/16","nextHop":"x"}]`), wantErr: []string{`routes: nextHop: "x" is not an IP address`}},
		{name: "LLA not link-local", value: entry(`,"ipv6_lla_gateway_ip":"fd00::1"`), wantErr: []string{"ipv6_lla_gateway_ip: fd00::1 is not an IPv6 link-local address"}},
		{name: "negative tunnel id", value: entry(`,"tunnel_id":-1`), wantErr: []string{"tunnel_id -1 is negative"}},
		{name: "bad role", value: entry(`,"role":"Primary"`), wantErr: []string{`role "Primary" is not "primary", "secondary" or "infrastructure-locked"`}},
		{name: "empty NAD name", value: `{"":{"mac_address":"0a:58:0a:f4:01:05"}}`, wantErr: []string{"an entry has an empty NAD name"}},
		{name: "entry not an object", value: `{"default":"10.244.1.5/24"}`, wantErr: []string{`entry "default": the value of "\"10.244.1.5/24\"" is a JSON string, want object`}},
		{name: "IPs not a list", value: `{"default":{"ip_addresses":"10.244.1.5/24"}}`, wantErr: []string{`entry "default": field "ip_addresses" of`, "is a JSON string, want array of strings"}},
		{name: "malformed", value: `{"default":{`, wantErr: []string{`malformed JSON "{\"default\":{"`}},
	})

	runFormatCases(t, PodNetworksCodec, []formatCase[m]{
		{name: "single-stack writes the legacy fields", value: m{"default": {IPs: v4.IPs, MAC: v4.MAC, Gateways: []netip.Addr{addr("10.244.1.1")}}},
			want: `{"default":{"ip_addresses":["10.244.1.5/24"],"mac_address":"0a:58:0a:f4:01:05","gateway_ips":["10.244.1.1"],"ip_address":"10.244.1.5/24","gateway_ip":"10.244.1.1"}}`},
		{name: "dual-stack does not", value: m{"ns/n": {IPs: pfxs("10.1.0.5/24", "fd01::5/64"), MAC: "0a:58:0a:01:00:05", Gateways: []netip.Addr{addr("10.1.0.1")},
			Routes: []PodRoute{{Dest: pfx("10.2.0.0/16")}}, GatewayIPv6LLA: addr("fe80::1"), TunnelID: 3, Role: PodRoleSecondary}},
			want: `{"ns/n":{"ip_addresses":["10.1.0.5/24","fd01::5/64"],"mac_address":"0a:58:0a:01:00:05","gateway_ips":["10.1.0.1"],"routes":[{"dest":"10.2.0.0/16","nextHop":""}],"ipv6_lla_gateway_ip":"fe80::1","tunnel_id":3,"role":"secondary"}}`},
		{name: "no IPs", value: m{"ns/n": {MAC: "0a:58:00:00:00:01"}}, want: `{"ns/n":{"ip_addresses":null,"mac_address":"0a:58:00:00:00:01"}}`},
		{name: "bad MAC", value: m{"default": {MAC: "x"}}, wantErr: `entry "default": mac_address: "x" is not a MAC address`},
		{name: "empty NAD name", value: m{"": {MAC: "0a:58:00:00:00:01"}}, wantErr: "an entry has an empty NAD name"},
		{name: "gateway without address", value: m{"default": {MAC: "0a:58:00:00:00:01", Gateways: []netip.Addr{addr("10.0.0.1")}}}, wantErr: "the pod has no IPv4 address"},
		{name: "invalid IP", value: m{"default": {MAC: "0a:58:00:00:00:01", IPs: []netip.Prefix{{}}}}, wantErr: "invalid prefix"},
	})
}
