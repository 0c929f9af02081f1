package config

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// defaults is the Config that Load returns with nothing but a node name.
func defaults() *Config {
	return &Config{
		NodeName:      "node1",
		NBEndpoints:   []string{"unix:/var/run/ovn/ovnnb_db.sock"},
		HTTPAddress:   ":9476",
		NodeDataplane: true,
		OVSEndpoint:   "unix:/var/run/openvswitch/db.sock",
		SBEndpoints:   []string{"unix:/var/run/ovn/ovnsb_db.sock"},
		GatewayBridge: "br-ex",
		DatapathType:  "system",
		CNIBinDir:     "/opt/cni/bin",
		CNIConfDir:    "/etc/cni/net.d",
		CNIPlugin:     "/usr/libexec/ovnk/ovnk-cni",
		CNISocket:     "/var/run/ovnk/cni.sock",
		LeaderElection: LeaderElectionConfig{
			Enabled: true, Namespace: "ovnk-system", LeaseName: "ovnk-agent-leader",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		},
		Default:              DefaultConfig{Transport: TransportGeneve},
		BGPManaged:           BGPManagedConfig{ASNumber: 64512},
		ClusterSubnets:       []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}},
		MTU:                  1400,
		JoinSubnets:          prefixes("100.64.0.0/16", "fd98::/64"),
		TransitSubnets:       prefixes("100.88.0.0/16", "fd97::/64"),
		MasqueradeSubnets:    prefixes("169.254.0.0/17", "fd69::/112"),
		ServiceSubnets:       prefixes("10.96.0.0/16"),
		HostServiceIPs:       []netip.Addr{netip.MustParseAddr("10.96.0.1"), netip.MustParseAddr("10.96.0.10")},
		ResyncPeriod:         5 * time.Minute,
		MinReconcileInterval: 100 * time.Millisecond,
		NBMaxOperations:      20000,
		Layer2Topology:       Layer2TopologyV2,
	}
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// load runs Load on a fresh flag set parsed from args, with env as the environment;
// args without --config read no file.
func load(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse(append([]string{"--config="}, args...)); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return Load(fs, func(name string) string { return env[name] })
}

// writeConf writes a configuration file and returns its path.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	okep := "[default]\nnode-name = from-file\ntransport = no-overlay\ncluster-subnets = 10.128.0.0/14/23\n" +
		"[no-overlay]\noutbound-snat = enabled\nrouting = managed\n[bgp-managed]\ntopology = full-mesh\nas-number = 64514\n"
	tests := []struct {
		name string
		file string // the configuration file's text, if any
		env  map[string]string
		args []string
		want func(c *Config)
	}{{
		name: "defaults",
		env:  map[string]string{"OVNK_NODE_NAME": "node1"},
		want: func(*Config) {},
	}, {
		name: "file only: OKEP-5259's example",
		file: okep,
		want: func(c *Config) {
			c.NodeName = "from-file"
			c.Default.Transport = TransportNoOverlay
			c.ClusterSubnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.128.0.0/14"), HostSubnet: 23}}
			c.NoOverlay = NoOverlayConfig{OutboundSNAT: OutboundSNATEnabled, Routing: RoutingManaged}
			c.BGPManaged = BGPManagedConfig{Topology: TopologyFullMesh, ASNumber: 64514}
		},
	}, {
		name: "environment over file",
		file: okep + "[leader-election]\nlease-duration = 30s\n",
		env: map[string]string{"NODE_NAME": "from-downward-api", "OVNK_NO_OVERLAY_ROUTING": "unmanaged",
			"OVNK_BGP_MANAGED_AS_NUMBER": "4200000000", "OVNK_LEADER_ELECTION_LEASE_DURATION": "1m",
			"OVNK_TRANSPORT": "", // empty counts as unset
		},
		want: func(c *Config) {
			c.NodeName = "from-downward-api"
			c.Default.Transport = TransportNoOverlay
			c.ClusterSubnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.128.0.0/14"), HostSubnet: 23}}
			c.NoOverlay = NoOverlayConfig{OutboundSNAT: OutboundSNATEnabled, Routing: RoutingUnmanaged}
			c.BGPManaged = BGPManagedConfig{Topology: TopologyFullMesh, ASNumber: 4200000000}
			c.LeaderElection.LeaseDuration = time.Minute
		},
	}, {
		name: "flags over environment",
		file: okep,
		env: map[string]string{"OVNK_NODE_NAME": "from-env", "NODE_NAME": "from-downward-api",
			"OVNK_MTU": "9000", "OVNK_LEADER_ELECTION_ENABLED": "true"},
		args: []string{"--node-name=from-flag", "--mtu", "1500", "--leader-election-enabled=false",
			"--no-overlay-outbound-snat=disabled", "--bgp-managed-as-number=65000"},
		want: func(c *Config) {
			c.NodeName = "from-flag"
			c.MTU = 1500
			c.LeaderElection.Enabled = false
			c.Default.Transport = TransportNoOverlay
			c.ClusterSubnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.128.0.0/14"), HostSubnet: 23}}
			c.NoOverlay = NoOverlayConfig{OutboundSNAT: OutboundSNATDisabled, Routing: RoutingManaged}
			c.BGPManaged = BGPManagedConfig{Topology: TopologyFullMesh, ASNumber: 65000}
		},
	}, {
		name: "OVNK_NODE_NAME before NODE_NAME",
		env:  map[string]string{"OVNK_NODE_NAME": "node1", "NODE_NAME": "other"},
		want: func(*Config) {},
	}, {
		name: "POD_NAMESPACE is the Lease's default namespace",
		env:  map[string]string{"OVNK_NODE_NAME": "node1", "POD_NAMESPACE": "kube-system"},
		want: func(c *Config) { c.LeaderElection.Namespace = "kube-system" },
	}, {
		name: "the file overrides POD_NAMESPACE",
		file: "[default]\nnode-name = node1\n[leader-election]\nnamespace = from-file\n",
		env:  map[string]string{"POD_NAMESPACE": "kube-system"},
		want: func(c *Config) { c.LeaderElection.Namespace = "from-file" },
	}, {
		name: "lists, bare cluster CIDRs and a bare bool flag",
		env:  map[string]string{"OVNK_LEADER_ELECTION_ENABLED": "false"},
		args: []string{"--node-name=node1", "--leader-election-enabled",
			"--nb-address", " tcp:10.0.0.1:6641 , ssl:[fd00::1]:6641,",
			"--cluster-subnets=10.244.0.0/16,fd00:10:244::/48",
			"--service-subnets=10.96.0.0/16,fd00:10:96::/112", "--host-service-ips=10.96.0.1,fd00:10:96::a"},
		want: func(c *Config) {
			c.NBEndpoints = []string{"tcp:10.0.0.1:6641", "ssl:[fd00::1]:6641"}
			c.ClusterSubnets = []cluster.Subnet{
				{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24},
				{CIDR: netip.MustParsePrefix("fd00:10:244::/48"), HostSubnet: 64},
			}
			c.ServiceSubnets = prefixes("10.96.0.0/16", "fd00:10:96::/112")
			c.HostServiceIPs = []netip.Addr{netip.MustParseAddr("10.96.0.1"), netip.MustParseAddr("fd00:10:96::a")}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeConf(t, tt.file)}, args...)
			}
			got, err := load(t, args, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := defaults()
			tt.want(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := writeConf(t, "[default]\nmtu = 1500\n")
	missing := filepath.Join(t.TempDir(), "missing.conf")
	env := map[string]string{"OVNK_NODE_NAME": "node1"}

	// OVNK_CONFIG names the file when --config does not.
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	AddFlags(fs)
	c, err := Load(fs, func(name string) string { return map[string]string{"OVNK_CONFIG": path, "OVNK_NODE_NAME": "n"}[name] })
	if err != nil || c.MTU != 1500 {
		t.Errorf("OVNK_CONFIG: MTU %v, error %v; want 1500, nil", c, err)
	}

	// A missing default file is fine: stand in for DefaultConfigFile without naming it.
	fs = pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Lookup("config").Value.Set(missing); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fs, func(name string) string { return env[name] }); err != nil {
		t.Errorf("missing default file: %v", err)
	}

	// A missing file that was named is an error, from the flag or the environment.
	want := "reading the configuration file: open " + missing + ": no such file or directory"
	if _, err := load(t, []string{"--config", missing}, env); err == nil || err.Error() != want {
		t.Errorf("missing --config: error %v, want %q", err, want)
	}
	fs = pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	AddFlags(fs)
	_, err = Load(fs, func(name string) string { return map[string]string{"OVNK_CONFIG": missing}[name] })
	if err == nil || err.Error() != want {
		t.Errorf("missing OVNK_CONFIG: error %v, want %q", err, want)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want []string // every message; "FILE" stands for the file's path
	}{{
		name: "nothing set",
		want: []string{"[default] node-name is not set: set --node-name, OVNK_NODE_NAME, NODE_NAME or " +
			"[default] node-name in the file (the DaemonSet sets NODE_NAME from spec.nodeName)"},
	}, {
		name: "unknown names in the file stop Load",
		file: "[default]\nnode-name = n\nmtu = abc\n[no-overlay]\nrooting = managed\n[bgp]\n",
		want: []string{
			`FILE:5: unknown key "rooting" in [no-overlay]: the closest known key is [no-overlay] routing`,
			`FILE:6: unknown section [bgp]: the closest known section is [bgp-managed]`,
		},
	}, {
		name: "malformed values name their source",
		file: "[default]\nnode-name = n\nresync-period = often\n[leader-election]\nrenew-deadline = 1 minute\n",
		env: map[string]string{"OVNK_MTU": "big", "OVNK_HOST_SERVICE_IPS": "10.96.0.1,dns",
			"OVNK_BGP_MANAGED_AS_NUMBER": "-1"},
		want: []string{
			`[default] mtu = "big" (from OVNK_MTU): want a whole number`,
			`[default] host-service-ips = "10.96.0.1,dns" (from OVNK_HOST_SERVICE_IPS): "dns" is not an IP address`,
			`[default] resync-period = "often" (from FILE:3): want a duration such as 500ms, 10s or 5m`,
			`[leader-election] renew-deadline = "1 minute" (from FILE:5): want a duration such as 500ms, 10s or 5m`,
			`[bgp-managed] as-number = "-1" (from OVNK_BGP_MANAGED_AS_NUMBER): want a whole number from 0 to 4294967295`,
		},
	}, {
		name: "bad values name the accepted ones",
		file: "[default]\nnode-name = n\n[no-overlay]\nrouting = auto\n",
		env:  map[string]string{"OVNK_TRANSPORT": "vxlan", "OVNK_NB_ADDRESS": "http://nb:6641"},
		args: []string{"--bgp-managed-topology=route-reflector", "--bgp-managed-as-number=23456"},
		want: []string{
			`[default] nb-address = "http://nb:6641" (from OVNK_NB_ADDRESS): http://nb:6641: want unix:<path>, tcp:<host>:<port> or ssl:<host>:<port>`,
			`[default] transport = "vxlan" (from OVNK_TRANSPORT): accepted values: geneve, no-overlay`,
			`[no-overlay] routing = "auto" (from FILE:4): accepted values: managed, unmanaged`,
			`[bgp-managed] topology = "route-reflector" (from --bgp-managed-topology): accepted values: full-mesh`,
			`[bgp-managed] as-number = "23456" (from --bgp-managed-as-number): AS 23456 is reserved as AS_TRANS (RFC 6793): ` +
				`use a private AS number from 64512 to 65534 or from 4200000000 to 4294967294`,
		},
	}, {
		name: "OKEP-5259: no-overlay needs outbound-snat and routing",
		env:  map[string]string{"OVNK_NODE_NAME": "n", "OVNK_TRANSPORT": "no-overlay"},
		want: []string{
			"[no-overlay] outbound-snat is not set: required when [default] transport is no-overlay: set it to enabled " +
				"(pod-to-external traffic leaves with the node IP) or disabled (pod IPs must be routable outside)",
			"[no-overlay] routing is not set: required when [default] transport is no-overlay: set it to managed " +
				"(ovnk generates the BGP configuration) or unmanaged (you provide it)",
		},
	}, {
		name: "OKEP-5259: managed routing needs a topology",
		file: "[default]\nnode-name = n\ntransport = no-overlay\n[no-overlay]\noutbound-snat = enabled\nrouting = managed\n",
		want: []string{"[bgp-managed] topology is not set: required when [no-overlay] routing is managed: " +
			"set it to full-mesh, or set routing to unmanaged and provide the BGP configuration yourself"},
	}, {
		name: "defaults are named as the source",
		args: []string{"--node-name=n", "--service-subnets=10.100.0.0/16"},
		want: []string{`[default] host-service-ips = "10.96.0.1,10.96.0.10" (default): 10.96.0.1 is not in ` +
			`service-subnets 10.100.0.0/16: list the ClusterIPs of the kubernetes and DNS services`,
			`[default] host-service-ips = "10.96.0.1,10.96.0.10" (default): 10.96.0.10 is not in ` +
				`service-subnets 10.100.0.0/16: list the ClusterIPs of the kubernetes and DNS services`},
	}, {
		name: "POD_NAMESPACE is named as the source",
		env:  map[string]string{"OVNK_NODE_NAME": "n", "POD_NAMESPACE": "Kube_System"},
		want: []string{`[leader-election] namespace = "Kube_System" (default from POD_NAMESPACE): not a namespace name: ` +
			`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and ` +
			`end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is ` +
			`'[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
	}, {
		name: "a malformed value is checked against others as its default",
		args: []string{"--node-name=n"},
		env:  map[string]string{"OVNK_LEADER_ELECTION_LEASE_DURATION": "forever"},
		want: []string{`[leader-election] lease-duration = "forever" (from OVNK_LEADER_ELECTION_LEASE_DURATION): ` +
			`want a duration such as 500ms, 10s or 5m`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, path := tt.args, ""
			if tt.file != "" {
				path = writeConf(t, tt.file)
				args = append([]string{"--config", path}, args...)
			}
			_, err := load(t, args, tt.env)
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "FILE", path))
			}
			if got := messages(err); !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestFlagErrors(t *testing.T) {
	tests := map[string]string{
		"--mtu=abc":                      `invalid argument "abc" for "--mtu" flag: want a whole number`,
		"--bgp-managed-as-number=5e9":    `invalid argument "5e9" for "--bgp-managed-as-number" flag: want a whole number from 0 to 4294967295`,
		"--resync-period=5":              `invalid argument "5" for "--resync-period" flag: want a duration such as 500ms, 10s or 5m`,
		"--leader-election-enabled=yes":  `invalid argument "yes" for "--leader-election-enabled" flag: want true or false`,
		"--join-subnets=100.64.0.0":      `invalid argument "100.64.0.0" for "--join-subnets" flag: "100.64.0.0" is not a CIDR such as 10.96.0.0/16 or fd00::/112`,
		"--cluster-subnets=10.0.0.0/8/x": `invalid argument "10.0.0.0/8/x" for "--cluster-subnets" flag: "10.0.0.0/8/x": host prefix "x" is not a number`,
		"--cluster-subnets=10.0.0.0":     `invalid argument "10.0.0.0" for "--cluster-subnets" flag: "10.0.0.0" is not cidr/hostPrefix such as 10.244.0.0/16/24`,
	}
	for arg, want := range tests {
		fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
		fs.SetOutput(&strings.Builder{})
		AddFlags(fs)
		if err := fs.Parse([]string{arg}); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", arg, err, want)
		}
	}
}

func TestLoadNeedsAddFlags(t *testing.T) {
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	want := "flag --config is not registered: call AddFlags on the flag set"
	if _, err := Load(fs, nil); err == nil || err.Error() != want {
		t.Errorf("Load without flags: error %v, want %q", err, want)
	}
	fs.String("config", "", "")
	want = "flag --node-name is not registered: call AddFlags on the flag set"
	if _, err := Load(fs, nil); err == nil || err.Error() != want {
		t.Errorf("Load with --config only: error %v, want %q", err, want)
	}
}

// TestDocs keeps docs/agent-config.md in step with the settings: every setting's file
// key, flag and variable is in the reference table, and the example file is
// testdata/agent.conf, which must load.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/agent-config.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		row := "| `" + s.name() + "` | `--" + s.flag() + "` | `" + s.envVar() + "`"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/agent-config.md has no row starting %q", row)
		}
	}
	example, err := os.ReadFile("testdata/agent.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```ini\n"+string(example)+"```\n") {
		t.Error("docs/agent-config.md does not show testdata/agent.conf as its example")
	}
	if _, err := load(t, []string{"--config=testdata/agent.conf"}, map[string]string{"NODE_NAME": "node1"}); err != nil {
		t.Errorf("testdata/agent.conf: %v", err)
	}
}

// TestLoadText checks that LoadText reads the text as Load reads a file, flags over
// its keys, ignoring --config, and names the text's source in errors.
func TestLoadText(t *testing.T) {
	fs := pflag.NewFlagSet("ovnk-agent", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse([]string{"--config=/nonexistent/agent.conf", "--node-name=n1", "--mtu=1300"}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadText(fs, func(string) string { return "" }, "[default]\ncluster-subnets = 10.128.0.0/14/23\nmtu = 1500\n", "ConfigMap a/b")
	if err != nil {
		t.Fatal(err)
	}
	if c.ClusterSubnets[0].CIDR != netip.MustParsePrefix("10.128.0.0/14") || c.MTU != 1300 {
		t.Errorf("LoadText read cluster subnets %v, MTU %d; want 10.128.0.0/14/23 from the text, MTU 1300 from the flag", c.ClusterSubnets, c.MTU)
	}
	_, err = LoadText(fs, nil, "[default]\ncluster-subnets = 10.244.0.0/16/33\n", "ConfigMap a/b")
	if err == nil || !strings.Contains(err.Error(), "from ConfigMap a/b:2") {
		t.Errorf("LoadText of a bad host prefix: %v; want an error naming ConfigMap a/b:2", err)
	}
}
