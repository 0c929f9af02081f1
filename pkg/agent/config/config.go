// Package config is the node agent's configuration: the Config struct with its defaults,
// loading it from an ovnkube-style INI file, OVNK_* environment variables and flags
// (Load), and checking it (Config.Validate). docs/agent-config.md lists every setting.
package config

import (
	"net/netip"
	"slices"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// Values of Config.Default.Transport ([default] transport).
const (
	// TransportGeneve tunnels east-west traffic between nodes in Geneve (the default).
	TransportGeneve = "geneve"
	// TransportNoOverlay routes east-west traffic over the underlay (OKEP-5259).
	TransportNoOverlay = "no-overlay"
)

// Values of Config.NoOverlay.OutboundSNAT ([no-overlay] outbound-snat).
const (
	// OutboundSNATEnabled SNATs pod-to-external traffic to the node IP.
	OutboundSNATEnabled = "enabled"
	// OutboundSNATDisabled leaves pod IPs visible outside; they must be routable there.
	OutboundSNATDisabled = "disabled"
)

// Values of Config.NoOverlay.Routing ([no-overlay] routing).
const (
	// RoutingManaged has ovnk generate the BGP configuration that routes pod subnets.
	RoutingManaged = "managed"
	// RoutingUnmanaged leaves RouteAdvertisements and FRRConfigurations to the user.
	RoutingUnmanaged = "unmanaged"
)

// TopologyFullMesh peers every node with every other node (iBGP), the only topology of
// the managed BGP fabric that OKEP-5259 defines ([bgp-managed] topology).
const TopologyFullMesh = "full-mesh"

// DefaultASNumber is the AS number of the managed BGP fabric when none is configured.
const DefaultASNumber = 64512

// Config is everything the node agent needs to know that is not in a Kubernetes object.
// Load fills it; the zero value is not valid. Setting names are the file's keys,
// e.g. [default] mtu, which is also the flag --mtu and the variable OVNK_MTU.
type Config struct {
	// NodeName is the Kubernetes node this agent serves ([default] node-name). Required;
	// also read from NODE_NAME, which the DaemonSet sets from the downward API.
	NodeName string
	// NBEndpoints are the node's OVN northbound database endpoints, each unix:<path>,
	// tcp:<host>:<port> or ssl:<host>:<port> ([default] nb-address, comma-separated;
	// default unix:/var/run/ovn/ovnnb_db.sock).
	NBEndpoints []string
	// NodeDataplane says whether the agent programs the node itself — OVS settings and
	// bridges, the zone's Southbound remote chassis, management ports, br-ex flows — and
	// publishes the node's annotations ([default] node-dataplane, default true). False
	// programs the zone's Northbound only, for nodes whose own side is run by something
	// else (and tests of the zone alone).
	NodeDataplane bool
	// OVSEndpoint is the node's Open vSwitch database ([default] ovs-address, default
	// unix:/var/run/openvswitch/db.sock). With unix:, the socket's directory is the OVS
	// run directory, where ovs-ofctl finds the bridges' OpenFlow sockets.
	OVSEndpoint string
	// SBEndpoints are the zone's OVN southbound database endpoints ([default] sb-address,
	// default unix:/var/run/ovn/ovnsb_db.sock); ovn-controller is pointed at them too.
	SBEndpoints []string
	// GatewayBridge is the OVS bridge holding the node's NIC and address ([default]
	// gateway-bridge, default br-ex).
	GatewayBridge string
	// DatapathType is br-int's OVS datapath, system or netdev ([default] datapath-type).
	DatapathType string
	// CNIBinDir is where the container runtime finds CNI plugins ([default]
	// cni-bin-dir, default /opt/cni/bin); with NodeDataplane the agent installs the
	// plugin there.
	CNIBinDir string
	// CNIConfDir is where the container runtime reads CNI network configurations
	// ([default] cni-conf-dir, default /etc/cni/net.d); with NodeDataplane the agent
	// writes 10-ovnk.conflist there once its zone is applied, which is when kubelet
	// reports the node's network ready.
	CNIConfDir string
	// CNIPlugin is the plugin binary the agent copies into CNIBinDir ([default]
	// cni-plugin, default /usr/libexec/ovnk/ovnk-cni, where the agent's image has it);
	// empty installs neither the plugin nor its configuration.
	CNIPlugin string
	// CNISocket is the unix socket on which, with NodeDataplane, the agent serves the
	// pods' network plans to the CNI plugin ([default] cni-socket, default
	// /var/run/ovnk/cni.sock): only root on the node reaches it (the socket is 0600, a
	// directory the agent creates 0700), never the pods, and the CNI configuration the
	// agent writes names it.
	CNISocket string
	// Kubeconfig is the kubeconfig file to reach the API server; empty means the
	// in-cluster configuration of the pod ([default] kubeconfig).
	Kubeconfig string
	// APIServer is the API server's URL used with the pod's own service account
	// ([default] api-server). Empty means the cluster's kubernetes Service, which a
	// cluster's network plugin may not serve yet when its agent starts: it is the
	// network. Upstream's ovnkube-node is given the API server the same way.
	APIServer string
	// HTTPAddress is where /healthz, /readyz and /metrics are served ([default]
	// http-address, default ":9476"), and nothing else: with the host network every pod
	// of the node reaches it, so the pods' plans go over CNISocket instead.
	HTTPAddress string
	// PprofAddress is where Go's /debug/pprof profiles are served ([default]
	// pprof-address); empty, the default, serves none. It is a listener of its own,
	// best bound to 127.0.0.1: profiles name the agent's internals and cost CPU.
	PprofAddress string
	// LeaderElection elects the one agent that does the cluster-wide work.
	LeaderElection LeaderElectionConfig
	// Default holds the [default] section's OKEP-5259 setting: the default network's
	// transport.
	Default DefaultConfig
	// NoOverlay configures the default network in no-overlay mode.
	NoOverlay NoOverlayConfig
	// BGPManaged configures the BGP fabric that managed no-overlay routing builds, for
	// the default network and for ClusterUserDefinedNetworks alike.
	BGPManaged BGPManagedConfig

	// ClusterSubnets are the default network's subnets and each node's prefix length in
	// them ([default] cluster-subnets in ovnkube's cidr/hostPrefix form; default
	// 10.244.0.0/16/24). Their families are the cluster's IP families.
	ClusterSubnets []cluster.Subnet
	// MTU is the pods' MTU on the default network ([default] mtu, default 1400).
	MTU int
	// JoinSubnets connect the default network's cluster router to the gateway routers,
	// one per family (default 100.64.0.0/16 and fd98::/64).
	JoinSubnets []netip.Prefix
	// TransitSubnets address the default network's transit switch, one per family
	// (default 100.88.0.0/16 and fd97::/64).
	TransitSubnets []netip.Prefix
	// MasqueradeSubnets are the host's masquerade subnets, one per family (default
	// 169.254.0.0/17 and fd69::/112).
	MasqueradeSubnets []netip.Prefix
	// ServiceSubnets are the cluster's service CIDRs, one per family (default
	// 10.96.0.0/16).
	ServiceSubnets []netip.Prefix
	// HostServiceIPs are the ClusterIPs that pods of user-defined networks reach through
	// the node's management port: the kubernetes API and DNS services (default
	// 10.96.0.1 and 10.96.0.10).
	HostServiceIPs []netip.Addr

	// ResyncPeriod is how often everything is reconciled even when nothing changed,
	// which repairs changes made behind the agent's back (default 5m).
	ResyncPeriod time.Duration
	// MinReconcileInterval is the least time between two reconciles: events arriving
	// within it coalesce into one reconcile; 0 reconciles on every event (default 100ms).
	MinReconcileInterval time.Duration
	// NBMaxOperations bounds one NB transaction ([default] nb-max-operations, default
	// 20000); a larger change is applied as several, each whole switches and routers.
	NBMaxOperations int
	// Layer2Topology is the node's Layer2 topology ([default] layer2-topology):
	// Layer2TopologyV2 (the default) converts to the transit router when it is safe,
	// Layer2TopologyV1 keeps the legacy topology.
	Layer2Topology string
}

// Values of Config.Layer2Topology ([default] layer2-topology).
const (
	Layer2TopologyV1 = "v1"
	Layer2TopologyV2 = "v2"
)

// LeaderElectionConfig configures the Lease through which one agent is elected to do the
// cluster-wide work (allocations, status, generated BGP configuration).
type LeaderElectionConfig struct {
	// Enabled makes the agent campaign for the Lease; when false, the agent does the
	// cluster-wide work without a Lease, which is only safe with one agent (default true).
	Enabled bool
	// Namespace of the Lease: POD_NAMESPACE when set, otherwise ovnk-system.
	Namespace string
	// LeaseName is the Lease's name (default ovnk-agent-leader).
	LeaseName string
	// LeaseDuration is how long other candidates wait after the last renewal before
	// taking over (default 15s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying to renew before it gives up
	// leadership (default 10s); less than LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between two attempts to acquire or renew (default 2s);
	// RenewDeadline must exceed 1.2 times it.
	RetryPeriod time.Duration
}

// DefaultConfig holds the [default] section's transport setting (OKEP-5259).
type DefaultConfig struct {
	// Transport carries the default network's east-west traffic: TransportGeneve (the
	// default) or TransportNoOverlay.
	Transport string
}

// NoOverlayConfig is the [no-overlay] section: the default network in no-overlay mode.
// Both fields are required when the transport is no-overlay and unused otherwise.
type NoOverlayConfig struct {
	// OutboundSNAT is OutboundSNATEnabled or OutboundSNATDisabled.
	OutboundSNAT string
	// Routing is RoutingManaged (which needs BGPManaged.Topology) or RoutingUnmanaged.
	Routing string
}

// BGPManagedConfig is the [bgp-managed] section: the cluster's internal BGP fabric.
type BGPManagedConfig struct {
	// Topology is the fabric's shape; TopologyFullMesh is the only one. Required when a
	// network (the default one, or a ClusterUserDefinedNetwork) uses managed routing.
	Topology string
	// ASNumber is the AS number of every node's BGP speaker in the default VRF
	// (default DefaultASNumber). The reserved numbers 0, 23456 (AS_TRANS), 65535 and
	// 4294967295 are refused.
	ASNumber uint32
}

// ClusterConfig returns the cluster-wide configuration the State builder and the
// topology compiler read, restricted to the IP families of the cluster subnets.
func (c *Config) ClusterConfig() cluster.Config {
	return cluster.Config{
		MasqueradeSubnets:  ofFamilies(c, c.MasqueradeSubnets, netip.Prefix.Addr),
		DefaultJoinSubnets: ofFamilies(c, c.JoinSubnets, netip.Prefix.Addr),
		ServiceSubnets:     ofFamilies(c, c.ServiceSubnets, netip.Prefix.Addr),
		HostServiceIPs:     ofFamilies(c, c.HostServiceIPs, func(a netip.Addr) netip.Addr { return a }),
	}
}

// DefaultNetwork returns the default network's configuration for cluster.Build, with
// transit subnets restricted to the IP families of the cluster subnets.
func (c *Config) DefaultNetwork() cluster.DefaultNetworkConfig {
	return cluster.DefaultNetworkConfig{
		Subnets:        slices.Clone(c.ClusterSubnets),
		MTU:            c.MTU,
		TransitSubnets: ofFamilies(c, c.TransitSubnets, netip.Prefix.Addr),
	}
}

// ofFamilies returns the items whose address (addr) has a family of c's cluster
// subnets, in a new slice; nil if none.
func ofFamilies[T any](c *Config, items []T, addr func(T) netip.Addr) []T {
	var out []T
	for _, item := range items {
		if c.hasFamily(addr(item).Is4()) {
			out = append(out, item)
		}
	}
	return out
}

// hasFamily reports whether a cluster subnet is IPv4 (v4 true) or IPv6 (v4 false).
func (c *Config) hasFamily(v4 bool) bool {
	return slices.ContainsFunc(c.ClusterSubnets, func(s cluster.Subnet) bool { return s.CIDR.Addr().Is4() == v4 })
}

// Ranges are the cluster's own ranges of c, those no user-defined network or connect
// subnet may overlap: the leader of an agent running with c (leader.SettingsOf)
// reserves them, and kubectl ovnk checks against them when it reads c from the agent's
// ConfigMap, so both derive them here, from the same family-restricted settings.
func (c *Config) Ranges() (cluster.ClusterRanges, error) {
	return cluster.ConfiguredRanges(c.ClusterConfig(), c.DefaultNetwork())
}
