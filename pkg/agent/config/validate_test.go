package config

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
)

func TestValidate(t *testing.T) {
	subnets := func(specs ...string) []cluster.Subnet {
		var out []cluster.Subnet
		for _, s := range specs {
			sub, err := parseClusterSubnet(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sub)
		}
		return out
	}
	dualStack := func(c *Config) {
		c.ClusterSubnets = subnets("10.244.0.0/16/24", "fd00:10:244::/48/64")
	}
	noOverlay := func(c *Config) {
		c.Default.Transport = TransportNoOverlay
		c.NoOverlay = NoOverlayConfig{OutboundSNAT: OutboundSNATEnabled, Routing: RoutingManaged}
		c.BGPManaged.Topology = TopologyFullMesh
	}
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{{
		name:   "defaults",
		change: func(*Config) {},
	}, {
		name:   "dual-stack",
		change: dualStack,
	}, {
		name: "OKEP-5259: no-overlay with managed routing",
		change: func(c *Config) {
			noOverlay(c)
			c.BGPManaged.ASNumber = 4200000000
		},
	}, {
		name: "OKEP-5259: no-overlay with unmanaged routing needs no topology",
		change: func(c *Config) {
			noOverlay(c)
			c.NoOverlay = NoOverlayConfig{OutboundSNAT: OutboundSNATDisabled, Routing: RoutingUnmanaged}
			c.BGPManaged.Topology = ""
		},
	}, {
		name: "OKEP-5259: geneve ignores the no-overlay section; a CUDN may use bgp-managed",
		change: func(c *Config) {
			c.NoOverlay.Routing = RoutingManaged
			c.BGPManaged.Topology = TopologyFullMesh
		},
	}, {
		name: "OKEP-5259: values are checked even when unused",
		change: func(c *Config) {
			c.NoOverlay = NoOverlayConfig{OutboundSNAT: "Enabled", Routing: "bgp"}
			c.BGPManaged = BGPManagedConfig{Topology: "route-reflector", ASNumber: 0}
		},
		want: []string{
			`[no-overlay] outbound-snat = "Enabled": accepted values: enabled, disabled`,
			`[no-overlay] routing = "bgp": accepted values: managed, unmanaged`,
			`[bgp-managed] topology = "route-reflector": accepted values: full-mesh`,
			`[bgp-managed] as-number = "0": AS 0 is reserved (RFC 7607): use a private AS number from 64512 to 65534 or from 4200000000 to 4294967294`,
		},
	}, {
		name: "OKEP-5259: no-overlay without its section",
		change: func(c *Config) {
			c.Default.Transport = TransportNoOverlay
			c.BGPManaged.ASNumber = 65535
		},
		want: []string{
			"[no-overlay] outbound-snat is not set: required when [default] transport is no-overlay: set it to enabled " +
				"(pod-to-external traffic leaves with the node IP) or disabled (pod IPs must be routable outside)",
			"[no-overlay] routing is not set: required when [default] transport is no-overlay: set it to managed " +
				"(ovnk generates the BGP configuration) or unmanaged (you provide it)",
			`[bgp-managed] as-number = "65535": AS 65535 is reserved (RFC 7300): use a private AS number from 64512 to 65534 or from 4200000000 to 4294967294`,
		},
	}, {
		name: "OKEP-5259: managed routing without a topology",
		change: func(c *Config) {
			noOverlay(c)
			c.BGPManaged = BGPManagedConfig{ASNumber: 4294967295}
		},
		want: []string{
			"[bgp-managed] topology is not set: required when [no-overlay] routing is managed: " +
				"set it to full-mesh, or set routing to unmanaged and provide the BGP configuration yourself",
			`[bgp-managed] as-number = "4294967295": AS 4294967295 is reserved (RFC 7300): use a private AS number from 64512 to 65534 or from 4200000000 to 4294967294`,
		},
	}, {
		name:   "transport",
		change: func(c *Config) { c.Default.Transport = "" },
		want:   []string{"[default] transport is not set: accepted values: geneve, no-overlay"},
	}, {
		name: "agent settings",
		change: func(c *Config) {
			c.NodeName = "Node_1"
			c.NBEndpoints = []string{"unix:ovnnb_db.sock", "tcp:10.0.0.1", "ssl::6641", "tcp:[fd00::1]:0", "tcp:[fd00::1]:6641"}
			c.HTTPAddress = "9476"
			c.PprofAddress = "localhost"
			c.APIServer = "http://10.0.0.1:6443"
			c.ResyncPeriod = 0
			c.MinReconcileInterval = -time.Second
		},
		want: []string{
			`[default] node-name = "Node_1": not a node name: a lowercase RFC 1123 subdomain must consist of lower case ` +
				`alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. ` +
				`'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`[default] nb-address = "unix:ovnnb_db.sock,tcp:10.0.0.1,ssl::6641,tcp:[fd00::1]:0,tcp:[fd00::1]:6641": ` +
				`unix:ovnnb_db.sock: want unix:<absolute path>, e.g. unix:/var/run/ovn/ovnnb_db.sock`,
			`[default] nb-address = "unix:ovnnb_db.sock,tcp:10.0.0.1,ssl::6641,tcp:[fd00::1]:0,tcp:[fd00::1]:6641": ` +
				`tcp:10.0.0.1: no port: want tcp:<host>:<port>, e.g. tcp:10.0.0.1:6641 or tcp:[fd00::1]:6641`,
			`[default] nb-address = "unix:ovnnb_db.sock,tcp:10.0.0.1,ssl::6641,tcp:[fd00::1]:0,tcp:[fd00::1]:6641": ` +
				`ssl::6641: no host: want ssl:<host>:<port>, e.g. ssl:10.0.0.1:6641 or ssl:[fd00::1]:6641`,
			`[default] nb-address = "unix:ovnnb_db.sock,tcp:10.0.0.1,ssl::6641,tcp:[fd00::1]:0,tcp:[fd00::1]:6641": ` +
				`tcp:[fd00::1]:0: port "0" is not from 1 to 65535: want tcp:<host>:<port>, e.g. tcp:10.0.0.1:6641 or tcp:[fd00::1]:6641`,
			`[default] api-server = "http://10.0.0.1:6443": want the API server's https URL, e.g. https://10.0.0.1:6443`,
			`[default] http-address = "9476": no port: want [host]:port, e.g. :9476`,
			`[default] pprof-address = "localhost": no port: want [host]:port, e.g. 127.0.0.1:6060, or empty`,
			`[default] resync-period = "0s": want a positive duration, e.g. 5m`,
			`[default] min-reconcile-interval = "-1s": want 0 or more and less than resync-period 0s, e.g. 100ms`,
		},
	}, {
		name: "CNI installation",
		change: func(c *Config) {
			c.CNIPlugin = "ovnk-cni"
			c.CNIBinDir = "opt/cni/bin"
		},
		want: []string{
			`[default] cni-plugin = "ovnk-cni": want an absolute path (or cni-plugin empty, so as not to install the CNI plugin)`,
			`[default] cni-bin-dir = "opt/cni/bin": want an absolute path (or cni-plugin empty, so as not to install the CNI plugin)`,
		},
	}, {
		name: "CNI socket",
		change: func(c *Config) {
			c.CNISocket = "run/ovnk/cni.sock"
		},
		want: []string{
			`[default] cni-socket = "run/ovnk/cni.sock": want the absolute path of a unix socket, at most 107 bytes, e.g. /var/run/ovnk/cni.sock`,
		},
	}, {
		name: "CNI socket too long for a unix socket",
		change: func(c *Config) {
			c.CNISocket = "/var/run/" + strings.Repeat("d", 95) + "/cni.sock"
		},
		want: []string{
			`[default] cni-socket = "/var/run/` + strings.Repeat("d", 95) + `/cni.sock": want the absolute path of a unix socket, at most 107 bytes, e.g. /var/run/ovnk/cni.sock`,
		},
	}, {
		name: "no CNI installation needs no directories",
		change: func(c *Config) {
			c.CNIPlugin = ""
			c.CNIBinDir, c.CNIConfDir = "", ""
		},
	}, {
		name: "no node name and no NB",
		change: func(c *Config) {
			c.NodeName = ""
			c.NBEndpoints = nil
			c.MinReconcileInterval = c.ResyncPeriod
		},
		want: []string{
			"[default] node-name is not set: set --node-name, OVNK_NODE_NAME, NODE_NAME or [default] node-name in the file " +
				"(the DaemonSet sets NODE_NAME from spec.nodeName)",
			"[default] nb-address is not set: set --nb-address, OVNK_NB_ADDRESS or [default] nb-address in the file, " +
				"e.g. unix:/var/run/ovn/ovnnb_db.sock",
			`[default] min-reconcile-interval = "5m0s": want 0 or more and less than resync-period 5m0s, e.g. 100ms`,
		},
	}, {
		name: "leader election",
		change: func(c *Config) {
			c.LeaderElection.Namespace = ""
			c.LeaderElection.LeaseName = "Leader"
			c.LeaderElection.RenewDeadline = 15 * time.Second
			c.LeaderElection.RetryPeriod = 12500 * time.Millisecond
		},
		want: []string{
			"[leader-election] namespace is not set: the Lease needs a namespace, e.g. ovnk-system",
			`[leader-election] lease-name = "Leader": not a Lease name: a lowercase RFC 1123 subdomain must consist of ` +
				`lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character ` +
				`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`[leader-election] renew-deadline = "15s": must be shorter than lease-duration 15s: raise lease-duration or lower renew-deadline`,
			`[leader-election] retry-period = "12.5s": 1.2 times retry-period must be less than renew-deadline 15s: lower retry-period`,
		},
	}, {
		name: "leader election durations",
		change: func(c *Config) {
			c.LeaderElection.LeaseName = ""
			c.LeaderElection.LeaseDuration = 0
			c.LeaderElection.RenewDeadline = -time.Second
			c.LeaderElection.RetryPeriod = 0
		},
		want: []string{
			"[leader-election] lease-name is not set: the Lease needs a name, e.g. ovnk-agent-leader",
			`[leader-election] lease-duration = "0s": want a positive duration`,
			`[leader-election] renew-deadline = "-1s": want a positive duration`,
			`[leader-election] retry-period = "0s": want a positive duration`,
		},
	}, {
		name: "cluster subnets",
		change: func(c *Config) {
			c.ClusterSubnets = subnets("10.244.1.0/16/24", "10.244.128.0/17/16", "172.16.0.0/12/33", "fd00::/48/48")
			c.MTU = 1279
		},
		want: []string{
			`[default] cluster-subnets = "10.244.1.0/16/24,10.244.128.0/17/16,172.16.0.0/12/33,fd00::/48/48": 10.244.1.0/16 has host bits set: did you mean 10.244.0.0/16?`,
			`[default] cluster-subnets = "10.244.1.0/16/24,10.244.128.0/17/16,172.16.0.0/12/33,fd00::/48/48": host prefix /16 does not cut 10.244.128.0/17 into node blocks with addresses for pods: want 18 to 29`,
			`[default] cluster-subnets = "10.244.1.0/16/24,10.244.128.0/17/16,172.16.0.0/12/33,fd00::/48/48": host prefix /33 does not cut 172.16.0.0/12 into node blocks with addresses for pods: want 13 to 29`,
			`[default] cluster-subnets = "10.244.1.0/16/24,10.244.128.0/17/16,172.16.0.0/12/33,fd00::/48/48": host prefix /48 does not cut fd00::/48 into node blocks with addresses for pods: want 49 to 126`,
			`[default] cluster-subnets = "10.244.1.0/16/24,10.244.128.0/17/16,172.16.0.0/12/33,fd00::/48/48": 10.244.128.0/17 overlaps cluster-subnets 10.244.1.0/16: choose subnets that do not overlap`,
			`[default] mtu = "1279": want 1280 to 65535 (IPv6 needs at least 1280)`,
		},
	}, {
		// The longest host prefixes that leave a node's block an address for pods once
		// the network address, gateway and management port (and the IPv4 broadcast
		// address) are kept; pkg/cluster's CheckSubnets would refuse one longer.
		name: "cluster subnets: the longest host prefixes",
		change: func(c *Config) {
			c.ClusterSubnets = subnets("10.244.0.0/16/29", "fd00:10:244::/48/126")
		},
	}, {
		name: "cluster subnets: host prefixes one longer, and a subnet too small for any",
		change: func(c *Config) {
			c.ClusterSubnets = subnets("10.244.0.0/16/30", "fd00:10:244::/48/127", "10.7.0.0/29/30")
		},
		want: []string{
			`[default] cluster-subnets = "10.244.0.0/16/30,fd00:10:244::/48/127,10.7.0.0/29/30": host prefix /30 does not cut 10.244.0.0/16 into node blocks with addresses for pods: want 17 to 29`,
			`[default] cluster-subnets = "10.244.0.0/16/30,fd00:10:244::/48/127,10.7.0.0/29/30": host prefix /127 does not cut fd00:10:244::/48 into node blocks with addresses for pods: want 49 to 126`,
			`[default] cluster-subnets = "10.244.0.0/16/30,fd00:10:244::/48/127,10.7.0.0/29/30": host prefix /30 does not cut 10.7.0.0/29 into node blocks with addresses for pods, nor does any other: use a cluster subnet of at most /28`,
		},
	}, {
		name: "no cluster subnets",
		change: func(c *Config) {
			c.ClusterSubnets = nil
			c.MTU = 100000
		},
		want: []string{
			"[default] cluster-subnets is not set: set --cluster-subnets, OVNK_CLUSTER_SUBNETS or [default] cluster-subnets in the file, e.g. 10.244.0.0/16/24",
			`[default] mtu = "100000": want 576 to 65535 (IPv6 needs at least 1280)`,
		},
	}, {
		name: "per-family subnets",
		change: func(c *Config) {
			dualStack(c)
			c.JoinSubnets = prefixes("100.64.0.0/16", "100.65.0.0/16")
			c.TransitSubnets = prefixes("fd97::/64")
			c.MasqueradeSubnets = []netip.Prefix{netip.MustParsePrefix("169.254.0.0/17"), {}}
			c.ServiceSubnets = prefixes("10.96.0.1/16")
		},
		want: []string{
			`[default] join-subnets = "100.64.0.0/16,100.65.0.0/16": 100.64.0.0/16 and 100.65.0.0/16 are of one family: give one subnet per IP family`,
			`[default] join-subnets = "100.64.0.0/16,100.65.0.0/16": no IPv6 subnet, but cluster-subnets 10.244.0.0/16/24,fd00:10:244::/48/64 has one: add one, e.g. fd98::/64`,
			`[default] transit-subnets = "fd97::/64": no IPv4 subnet, but cluster-subnets 10.244.0.0/16/24,fd00:10:244::/48/64 has one: add one, e.g. 100.88.0.0/16`,
			`[default] masquerade-subnets = "169.254.0.0/17,invalid Prefix": a subnet is not set: give every subnet as a CIDR`,
			`[default] masquerade-subnets = "169.254.0.0/17,invalid Prefix": no IPv6 subnet, but cluster-subnets 10.244.0.0/16/24,fd00:10:244::/48/64 has one: add one, e.g. fd69::/112`,
			`[default] service-subnets = "10.96.0.1/16": 10.96.0.1/16 has host bits set: did you mean 10.96.0.0/16?`,
		},
	}, {
		name: "an IPv6 cluster needs IPv6 services",
		change: func(c *Config) {
			c.ClusterSubnets = subnets("fd00:10:244::/48/64")
		},
		want: []string{`[default] service-subnets = "10.96.0.0/16": ` +
			`no subnet of an IP family of cluster-subnets fd00:10:244::/48/64: list the cluster's service CIDRs`},
	}, {
		name: "overlaps between settings",
		change: func(c *Config) {
			c.ClusterSubnets = subnets("100.64.0.0/10/24")
			c.ServiceSubnets = prefixes("100.88.0.0/24")
			c.HostServiceIPs = []netip.Addr{netip.MustParseAddr("100.88.0.1")}
		},
		want: []string{
			`[default] join-subnets = "100.64.0.0/16,fd98::/64": 100.64.0.0/16 overlaps cluster-subnets 100.64.0.0/10: choose subnets that do not overlap`,
			`[default] transit-subnets = "100.88.0.0/16,fd97::/64": 100.88.0.0/16 overlaps cluster-subnets 100.64.0.0/10: choose subnets that do not overlap`,
			`[default] service-subnets = "100.88.0.0/24": 100.88.0.0/24 overlaps cluster-subnets 100.64.0.0/10: choose subnets that do not overlap`,
			`[default] service-subnets = "100.88.0.0/24": 100.88.0.0/24 overlaps transit-subnets 100.88.0.0/16: choose subnets that do not overlap`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaults()
			tt.change(c)
			if got := messages(c.Validate()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestSettingsTable(t *testing.T) {
	seen := map[string]bool{}
	for i := range settings {
		s := &settings[i]
		if seen[s.flag()] {
			t.Errorf("two settings have the flag --%s", s.flag())
		}
		seen[s.flag()] = true
		if s.usage == "" {
			t.Errorf("%s has no help text", s)
		}
		if err := parse(s.field(new(Config)), s.def); err != nil {
			t.Errorf("%s: default %q: %v", s, s.def, err)
		}
		if got := settingByKey(s.key); got.key != s.key {
			t.Errorf("settingByKey(%q) = %s", s.key, got)
		}
	}
	// Every field of Config, and of its section structs, is one setting's.
	c := &Config{}
	fields := map[any]bool{}
	for _, s := range settings {
		fields[s.field(c)] = true
	}
	want := 0
	for f := range reflect.TypeFor[Config]().Fields() {
		if f.Type.Kind() == reflect.Struct {
			want += f.Type.NumField()
		} else {
			want++
		}
	}
	if len(fields) != want || len(settings) != want {
		t.Errorf("%d settings set %d fields of Config, want %d", len(settings), len(fields), want)
	}
}
