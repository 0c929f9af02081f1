package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/podnet"
)

// defaultSection is the INI section whose keys have no prefix in flags, environment
// variable names and viper keys, as in ovnkube.
const defaultSection = "default"

// setting is one configuration value. Its key names it everywhere: the file's
// "[section] name", the flag --section-name and the variable OVNK_SECTION_NAME, where
// the [default] section adds no prefix (so [default] mtu is --mtu and OVNK_MTU).
type setting struct {
	// key is "name" for a [default] key and "section.name" otherwise; it is viper's key.
	key string
	// def is the default, written as in the file.
	def string
	// defEnv names an environment variable whose value, when set, is the default.
	defEnv string
	// env are more environment variables, read in order after OVNK_*.
	env []string
	// usage is the flag's help text.
	usage string
	// field returns a pointer to the setting's field of c.
	field func(c *Config) any
}

// settings are every setting of the agent, in the order of the help text and the docs.
var settings = []setting{
	{key: "node-name", env: []string{"NODE_NAME"},
		usage: "the Kubernetes node this agent serves; required",
		field: func(c *Config) any { return &c.NodeName }},
	{key: "nb-address", def: "unix:/var/run/ovn/ovnnb_db.sock",
		usage: "the node's OVN northbound database: comma-separated unix:<path>, tcp:<host>:<port> or ssl:<host>:<port>",
		field: func(c *Config) any { return &c.NBEndpoints }},
	{key: "node-dataplane", def: "true",
		usage: "program the node itself (OVS, the zone's Southbound, management ports, br-ex flows) and publish what it knows; false programs the zone's Northbound only",
		field: func(c *Config) any { return &c.NodeDataplane }},
	{key: "ovs-address", def: "unix:/var/run/openvswitch/db.sock",
		usage: "the node's Open vSwitch database (unix:<path>, tcp:<host>:<port> or ssl:<host>:<port>); with unix:, the socket's directory is also where the bridges' OpenFlow sockets are",
		field: func(c *Config) any { return &c.OVSEndpoint }},
	{key: "sb-address", def: "unix:/var/run/ovn/ovnsb_db.sock",
		usage: "the node's OVN southbound database, comma-separated like nb-address; ovn-controller is pointed at it too",
		field: func(c *Config) any { return &c.SBEndpoints }},
	{key: "gateway-bridge", def: "br-ex",
		usage: "the OVS bridge that holds the node's NIC and address: its MAC, addresses and default route are the node's gateway",
		field: func(c *Config) any { return &c.GatewayBridge }},
	{key: "datapath-type", def: "system",
		usage: "the OVS datapath of br-int: system (the kernel module) or netdev (userspace)",
		field: func(c *Config) any { return &c.DatapathType }},
	{key: "cni-bin-dir", def: "/opt/cni/bin",
		usage: "with node-dataplane: where the container runtime finds CNI plugins; the agent installs ovnk-cni there",
		field: func(c *Config) any { return &c.CNIBinDir }},
	{key: "cni-conf-dir", def: "/etc/cni/net.d",
		usage: "with node-dataplane: where the container runtime reads CNI configurations; the agent writes 10-ovnk.conflist there once its zone is applied",
		field: func(c *Config) any { return &c.CNIConfDir }},
	{key: "cni-plugin", def: "/usr/libexec/ovnk/ovnk-cni",
		usage: "with node-dataplane: the CNI plugin binary the agent installs into cni-bin-dir; empty installs neither plugin nor configuration",
		field: func(c *Config) any { return &c.CNIPlugin }},
	{key: "cni-socket", def: podnet.DefaultSocket,
		usage: "with node-dataplane: the unix socket (0600; its directory created 0700) on which the agent serves pods' network plans to the CNI plugin",
		field: func(c *Config) any { return &c.CNISocket }},
	{key: "kubeconfig",
		usage: "kubeconfig file of the API server; empty for the pod's in-cluster configuration",
		field: func(c *Config) any { return &c.Kubeconfig }},
	{key: "api-server",
		usage: "the API server's URL (https://host:port) for the pod's own service account, instead of the kubernetes Service's address; ignored with kubeconfig",
		field: func(c *Config) any { return &c.APIServer }},
	{key: "http-address", def: ":9476",
		usage: "host:port serving /healthz, /readyz and /metrics (pods' plans go over cni-socket)",
		field: func(c *Config) any { return &c.HTTPAddress }},
	{key: "pprof-address",
		usage: "host:port serving Go's /debug/pprof profiles, e.g. 127.0.0.1:6060; empty serves none (every pod of the node would reach it)",
		field: func(c *Config) any { return &c.PprofAddress }},
	{key: "transport", def: TransportGeneve,
		usage: "the default network's east-west transport: geneve or no-overlay",
		field: func(c *Config) any { return &c.Default.Transport }},
	{key: "cluster-subnets", def: "10.244.0.0/16/24",
		usage: "the default network's subnets as cidr/hostPrefix, comma-separated, e.g. 10.244.0.0/16/24,fd00:10:244::/48/64",
		field: func(c *Config) any { return &c.ClusterSubnets }},
	{key: "mtu", def: strconv.Itoa(cluster.DefaultMTU),
		usage: "the pods' MTU on the default network",
		field: func(c *Config) any { return &c.MTU }},
	{key: "join-subnets", def: formatList(cluster.DefaultJoinSubnets()),
		usage: "the default network's join subnets, one per family",
		field: func(c *Config) any { return &c.JoinSubnets }},
	{key: "transit-subnets", def: formatList(cluster.DefaultTransitSubnets()),
		usage: "the default network's transit switch subnets, one per family",
		field: func(c *Config) any { return &c.TransitSubnets }},
	{key: "masquerade-subnets", def: formatList(cluster.DefaultMasqueradeSubnets()),
		usage: "the host's masquerade subnets, one per family",
		field: func(c *Config) any { return &c.MasqueradeSubnets }},
	{key: "service-subnets", def: formatList(cluster.DefaultServiceSubnets()),
		usage: "the cluster's service CIDRs, one per family",
		field: func(c *Config) any { return &c.ServiceSubnets }},
	{key: "host-service-ips", def: "10.96.0.1,10.96.0.10",
		usage: "ClusterIPs that user-defined networks reach through the management port (API server, DNS)",
		field: func(c *Config) any { return &c.HostServiceIPs }},
	{key: "resync-period", def: "5m",
		usage: "how often to reconcile everything even when nothing changed",
		field: func(c *Config) any { return &c.ResyncPeriod }},
	{key: "min-reconcile-interval", def: "100ms",
		usage: "the least time between two reconciles; events within it coalesce, 0 disables",
		field: func(c *Config) any { return &c.MinReconcileInterval }},
	{key: "layer2-topology", def: Layer2TopologyV2,
		usage: "the node's Layer2 topology: v2 converts to OKEP-5094's transit router once no Layer2 pod runs on the node, v1 keeps the legacy gateway routers on the switch",
		field: func(c *Config) any { return &c.Layer2Topology }},
	{key: "nb-max-operations", def: "20000",
		usage: "the most NB write operations in one transaction; a larger change is split into several",
		field: func(c *Config) any { return &c.NBMaxOperations }},
	{key: "leader-election.enabled", def: "true",
		usage: "campaign for the leader Lease; false does the cluster-wide work without one (a single agent only)",
		field: func(c *Config) any { return &c.LeaderElection.Enabled }},
	{key: "leader-election.namespace", def: "ovnk-system", defEnv: "POD_NAMESPACE",
		usage: "namespace of the leader Lease; the default is POD_NAMESPACE when that is set",
		field: func(c *Config) any { return &c.LeaderElection.Namespace }},
	{key: "leader-election.lease-name", def: "ovnk-agent-leader",
		usage: "name of the leader Lease",
		field: func(c *Config) any { return &c.LeaderElection.LeaseName }},
	{key: "leader-election.lease-duration", def: "15s",
		usage: "how long candidates wait after the leader's last renewal before taking over",
		field: func(c *Config) any { return &c.LeaderElection.LeaseDuration }},
	{key: "leader-election.renew-deadline", def: "10s",
		usage: "how long the leader retries renewing before giving up leadership",
		field: func(c *Config) any { return &c.LeaderElection.RenewDeadline }},
	{key: "leader-election.retry-period", def: "2s",
		usage: "the wait between two attempts to acquire or renew the Lease",
		field: func(c *Config) any { return &c.LeaderElection.RetryPeriod }},
	{key: "no-overlay.outbound-snat",
		usage: "with transport no-overlay: enabled SNATs pod-to-external traffic to the node IP, disabled does not",
		field: func(c *Config) any { return &c.NoOverlay.OutboundSNAT }},
	{key: "no-overlay.routing",
		usage: "with transport no-overlay: managed generates the BGP configuration, unmanaged leaves it to you",
		field: func(c *Config) any { return &c.NoOverlay.Routing }},
	{key: "bgp-managed.topology",
		usage: "the managed BGP fabric's topology: full-mesh; required by managed routing",
		field: func(c *Config) any { return &c.BGPManaged.Topology }},
	{key: "bgp-managed.as-number", def: strconv.Itoa(DefaultASNumber),
		usage: "AS number of every node's BGP speaker in the managed fabric",
		field: func(c *Config) any { return &c.BGPManaged.ASNumber }},
}

// sections are the INI sections, in the order of settings.
var sections = func() []string {
	var out []string
	for _, s := range settings {
		if len(out) == 0 || out[len(out)-1] != s.section() {
			out = append(out, s.section())
		}
	}
	return out
}()

// lookupSetting returns the setting of a file's key, or nil.
func lookupSetting(section, name string) *setting {
	for i := range settings {
		if settings[i].section() == section && settings[i].name() == name {
			return &settings[i]
		}
	}
	return nil
}

// settingByKey returns the setting with the key; it panics on a key that is not in
// settings, which is a bug.
func settingByKey(key string) *setting {
	section, name := defaultSection, key
	if i := strings.IndexByte(key, '.'); i >= 0 {
		section, name = key[:i], key[i+1:]
	}
	if s := lookupSetting(section, name); s != nil {
		return s
	}
	panic("config: no setting " + key)
}

// section is the setting's INI section.
func (s *setting) section() string {
	if i := strings.IndexByte(s.key, '.'); i >= 0 {
		return s.key[:i]
	}
	return defaultSection
}

// name is the setting's key inside its INI section.
func (s *setting) name() string { return s.key[strings.IndexByte(s.key, '.')+1:] }

// flag is the setting's flag name, without dashes in front.
func (s *setting) flag() string { return strings.ReplaceAll(s.key, ".", "-") }

// envVar is the setting's OVNK_* environment variable.
func (s *setting) envVar() string {
	return "OVNK_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s.key))
}

// String names the setting as the file does: "[no-overlay] routing".
func (s *setting) String() string { return "[" + s.section() + "] " + s.name() }

// howToSet tells every way to set the setting.
func (s *setting) howToSet() string {
	env := append([]string{s.envVar()}, s.env...)
	return fmt.Sprintf("set --%s, %s or %s in the file", s.flag(), strings.Join(env, ", "), s)
}

// typeName names the setting's value type in the help text.
func (s *setting) typeName() string {
	switch s.field(new(Config)).(type) {
	case *bool:
		return "bool"
	case *int, *uint32:
		return "number"
	case *time.Duration:
		return "duration"
	case *[]string:
		return "endpoints"
	case *[]netip.Prefix, *[]cluster.Subnet:
		return "cidrs"
	case *[]netip.Addr:
		return "ips"
	default:
		return "string"
	}
}

// parse parses text into dst, a pointer to a Config field, and leaves dst alone when
// text is not valid. Lists are comma-separated; blanks around items are ignored.
func parse(dst any, text string) error {
	switch p := dst.(type) {
	case *string:
		*p = text
	case *[]string:
		*p = splitList(text)
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return errors.New("want true or false")
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return errors.New("want a whole number")
		}
		*p = n
	case *uint32:
		n, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return errors.New("want a whole number from 0 to 4294967295")
		}
		*p = uint32(n)
	case *time.Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return errors.New("want a duration such as 500ms, 10s or 5m")
		}
		*p = d
	case *[]netip.Prefix:
		return parseList(p, text, parsePrefix)
	case *[]netip.Addr:
		return parseList(p, text, func(item string) (netip.Addr, error) {
			a, err := netip.ParseAddr(item)
			if err != nil {
				return a, fmt.Errorf("%q is not an IP address", item)
			}
			return a, nil
		})
	case *[]cluster.Subnet:
		return parseList(p, text, parseClusterSubnet)
	default:
		panic(fmt.Sprintf("config: no parser for %T", dst))
	}
	return nil
}

// splitList splits a comma-separated list, dropping blanks and empty items.
func splitList(text string) []string {
	var out []string
	for item := range strings.SplitSeq(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parseList parses every item of a comma-separated list and stores them in dst only
// when all are valid.
func parseList[T any](dst *[]T, text string, parseItem func(string) (T, error)) error {
	var out []T
	for _, item := range splitList(text) {
		v, err := parseItem(item)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*dst = out
	return nil
}

func parsePrefix(item string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(item)
	if err != nil {
		return p, fmt.Errorf("%q is not a CIDR such as 10.96.0.0/16 or fd00::/112", item)
	}
	return p, nil
}

// parseClusterSubnet parses ovnkube's "cidr/hostPrefix"; a bare CIDR gets the default
// host prefix of its family (24 for IPv4, 64 for IPv6), as in ovnkube.
func parseClusterSubnet(item string) (cluster.Subnet, error) {
	cidr, hostPrefix := item, ""
	if strings.Count(item, "/") == 2 {
		i := strings.LastIndexByte(item, '/')
		cidr, hostPrefix = item[:i], item[i+1:]
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return cluster.Subnet{}, fmt.Errorf("%q is not cidr/hostPrefix such as 10.244.0.0/16/24", item)
	}
	s := cluster.Subnet{CIDR: p, HostSubnet: cluster.DefaultHostSubnetIPv6}
	if p.Addr().Is4() {
		s.HostSubnet = cluster.DefaultHostSubnetIPv4
	}
	if hostPrefix != "" {
		if s.HostSubnet, err = strconv.Atoi(hostPrefix); err != nil {
			return cluster.Subnet{}, fmt.Errorf("%q: host prefix %q is not a number", item, hostPrefix)
		}
	}
	return s, nil
}
