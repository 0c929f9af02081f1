package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// settingError is a problem with one setting's value.
type settingError struct {
	key   string // the setting's key, e.g. "no-overlay.routing"
	value string // the value, as written or formatted; empty when not set
	// source tells where the value came from: "from --mtu", "from OVNK_MTU",
	// "from agent.conf:3", "default"; empty when unknown.
	source  string
	problem string // what is wrong and what to do
}

func (e *settingError) Error() string {
	name := settingByKey(e.key).String()
	switch {
	case e.value == "":
		return name + " is not set: " + e.problem
	case e.source == "":
		return fmt.Sprintf("%s = %q: %s", name, e.value, e.problem)
	default:
		return fmt.Sprintf("%s = %q (%s): %s", name, e.value, e.source, e.problem)
	}
}

// Validate checks every setting and OKEP-5259's rules between them, and returns every
// problem found joined with errors.Join, or nil. Each names the setting as the file
// does ("[no-overlay] routing"), its value and what to do.
func (c *Config) Validate() error {
	var errs []error
	for _, err := range c.validate() {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checker collects the problems of a Config.
type checker struct {
	errs []*settingError
}

func (ch *checker) fail(key, value, format string, args ...any) {
	ch.errs = append(ch.errs, &settingError{key: key, value: value, problem: fmt.Sprintf(format, args...)})
}

func (c *Config) validate() []*settingError {
	ch := &checker{}
	c.checkAgent(ch)
	c.checkLeaderElection(ch)
	c.checkTransport(ch)
	c.checkNetwork(ch)
	return ch.errs
}

func (c *Config) checkAgent(ch *checker) {
	if c.NodeName == "" {
		ch.fail("node-name", "", "%s (the DaemonSet sets NODE_NAME from spec.nodeName)", settingByKey("node-name").howToSet())
	} else if msgs := validation.IsDNS1123Subdomain(c.NodeName); len(msgs) > 0 {
		ch.fail("node-name", c.NodeName, "not a node name: %s", msgs[0])
	}
	if len(c.NBEndpoints) == 0 {
		ch.fail("nb-address", "", "%s, e.g. unix:/var/run/ovn/ovnnb_db.sock", settingByKey("nb-address").howToSet())
	}
	for _, e := range c.NBEndpoints {
		if err := checkEndpoint(e); err != nil {
			ch.fail("nb-address", strings.Join(c.NBEndpoints, ","), "%v", err)
		}
	}
	if c.NodeDataplane {
		c.checkNodeDataplane(ch)
	}
	if c.APIServer != "" {
		if u, err := url.Parse(c.APIServer); err != nil || u.Scheme != "https" || u.Host == "" || u.Path != "" && u.Path != "/" {
			ch.fail("api-server", c.APIServer, "want the API server's https URL, e.g. https://10.0.0.1:6443")
		}
	}
	if _, err := checkHostPort(c.HTTPAddress); err != nil {
		ch.fail("http-address", c.HTTPAddress, "%v: want [host]:port, e.g. :9476", err)
	}
	if c.PprofAddress != "" {
		if _, err := checkHostPort(c.PprofAddress); err != nil {
			ch.fail("pprof-address", c.PprofAddress, "%v: want [host]:port, e.g. 127.0.0.1:6060, or empty", err)
		}
	}
	if c.ResyncPeriod <= 0 {
		ch.fail("resync-period", c.ResyncPeriod.String(), "want a positive duration, e.g. 5m")
	}
	if c.NBMaxOperations < 1 {
		ch.fail("nb-max-operations", fmt.Sprint(c.NBMaxOperations), "must be at least 1")
	}
	if c.MinReconcileInterval < 0 || (c.ResyncPeriod > 0 && c.MinReconcileInterval >= c.ResyncPeriod) {
		ch.fail("min-reconcile-interval", c.MinReconcileInterval.String(),
			"want 0 or more and less than resync-period %s, e.g. 100ms", c.ResyncPeriod)
	}
}

// checkNodeDataplane checks the settings of the node's own side.
func (c *Config) checkNodeDataplane(ch *checker) {
	if err := checkEndpoint(c.OVSEndpoint); err != nil {
		ch.fail("ovs-address", c.OVSEndpoint, "%v", err)
	}
	if len(c.SBEndpoints) == 0 {
		ch.fail("sb-address", "", "%s, e.g. unix:/var/run/ovn/ovnsb_db.sock", settingByKey("sb-address").howToSet())
	}
	for _, e := range c.SBEndpoints {
		if err := checkEndpoint(e); err != nil {
			ch.fail("sb-address", strings.Join(c.SBEndpoints, ","), "%v", err)
		}
	}
	if c.GatewayBridge == "" || len(c.GatewayBridge) > 15 || strings.ContainsAny(c.GatewayBridge, "/ \t") {
		ch.fail("gateway-bridge", c.GatewayBridge, "want the name of an OVS bridge and its link (1 to 15 characters, no '/' or space), e.g. br-ex")
	}
	if c.DatapathType != "system" && c.DatapathType != "netdev" {
		ch.fail("datapath-type", c.DatapathType, "want system (the kernel datapath) or netdev (userspace)")
	}
	if !filepath.IsAbs(c.CNISocket) || len(c.CNISocket) > maxSocketPath {
		ch.fail("cni-socket", c.CNISocket, "want the absolute path of a unix socket, at most %d bytes, e.g. /var/run/ovnk/cni.sock", maxSocketPath)
	}
	if c.CNIPlugin != "" {
		for _, s := range []struct{ key, value string }{{"cni-plugin", c.CNIPlugin}, {"cni-bin-dir", c.CNIBinDir}, {"cni-conf-dir", c.CNIConfDir}} {
			if !filepath.IsAbs(s.value) {
				ch.fail(s.key, s.value, "want an absolute path (or cni-plugin empty, so as not to install the CNI plugin)")
			}
		}
	}
}

// maxSocketPath is the longest path a unix socket can be bound to on Linux: sun_path
// holds 108 bytes with the terminating NUL.
const maxSocketPath = 107

// checkEndpoint checks an OVSDB client endpoint: unix:<path>, tcp:<host>:<port> or
// ssl:<host>:<port>, with an IPv6 host in brackets.
func checkEndpoint(e string) error {
	proto, rest, _ := strings.Cut(e, ":")
	switch proto {
	case "unix":
		if !strings.HasPrefix(rest, "/") {
			return fmt.Errorf("%s: want unix:<absolute path>, e.g. unix:/var/run/ovn/ovnnb_db.sock", e)
		}
	case "tcp", "ssl":
		host, err := checkHostPort(rest)
		if err == nil && host == "" {
			err = errors.New("no host")
		}
		if err != nil {
			return fmt.Errorf("%s: %v: want %s:<host>:<port>, e.g. %s:10.0.0.1:6641 or %s:[fd00::1]:6641",
				e, err, proto, proto, proto)
		}
	default:
		return fmt.Errorf("%s: want unix:<path>, tcp:<host>:<port> or ssl:<host>:<port>", e)
	}
	return nil
}

// checkHostPort checks "host:port" with a port from 1 to 65535 and returns the host.
func checkHostPort(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", errors.New("no port")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return "", fmt.Errorf("port %q is not from 1 to 65535", port)
	}
	return host, nil
}

func (c *Config) checkLeaderElection(ch *checker) {
	le := c.LeaderElection
	if le.Namespace == "" {
		ch.fail("leader-election.namespace", "", "the Lease needs a namespace, e.g. ovnk-system")
	} else if msgs := validation.IsDNS1123Label(le.Namespace); len(msgs) > 0 {
		ch.fail("leader-election.namespace", le.Namespace, "not a namespace name: %s", msgs[0])
	}
	if le.LeaseName == "" {
		ch.fail("leader-election.lease-name", "", "the Lease needs a name, e.g. ovnk-agent-leader")
	} else if msgs := validation.IsDNS1123Subdomain(le.LeaseName); len(msgs) > 0 {
		ch.fail("leader-election.lease-name", le.LeaseName, "not a Lease name: %s", msgs[0])
	}
	durations := []struct {
		key string
		d   time.Duration
	}{
		{"leader-election.lease-duration", le.LeaseDuration},
		{"leader-election.renew-deadline", le.RenewDeadline},
		{"leader-election.retry-period", le.RetryPeriod},
	}
	for _, d := range durations {
		if d.d <= 0 {
			ch.fail(d.key, d.d.String(), "want a positive duration")
		}
	}
	if le.RenewDeadline > 0 && le.RenewDeadline >= le.LeaseDuration {
		ch.fail("leader-election.renew-deadline", le.RenewDeadline.String(),
			"must be shorter than lease-duration %s: raise lease-duration or lower renew-deadline", le.LeaseDuration)
	}
	// client-go's leader election jitters each retry by up to 20%.
	if le.RetryPeriod > 0 && le.RenewDeadline > 0 && le.RenewDeadline <= le.RetryPeriod*12/10 {
		ch.fail("leader-election.retry-period", le.RetryPeriod.String(),
			"1.2 times retry-period must be less than renew-deadline %s: lower retry-period", le.RenewDeadline)
	}
}

// checkTransport applies OKEP-5259's rules to [default] transport, [no-overlay] and
// [bgp-managed].
func (c *Config) checkTransport(ch *checker) {
	oneOf := func(key, value string, optional bool, accepted ...string) bool {
		for _, a := range accepted {
			if value == a {
				return true
			}
		}
		if value == "" && optional {
			return true
		}
		ch.fail(key, value, "accepted values: %s", strings.Join(accepted, ", "))
		return false
	}
	noOverlay := c.Default.Transport == TransportNoOverlay
	oneOf("transport", c.Default.Transport, false, TransportGeneve, TransportNoOverlay)
	oneOf("layer2-topology", c.Layer2Topology, false, Layer2TopologyV1, Layer2TopologyV2)
	if oneOf("no-overlay.outbound-snat", c.NoOverlay.OutboundSNAT, true, OutboundSNATEnabled, OutboundSNATDisabled) &&
		noOverlay && c.NoOverlay.OutboundSNAT == "" {
		ch.fail("no-overlay.outbound-snat", "", "required when [default] transport is no-overlay: "+
			"set it to enabled (pod-to-external traffic leaves with the node IP) or disabled (pod IPs must be routable outside)")
	}
	if oneOf("no-overlay.routing", c.NoOverlay.Routing, true, RoutingManaged, RoutingUnmanaged) &&
		noOverlay && c.NoOverlay.Routing == "" {
		ch.fail("no-overlay.routing", "", "required when [default] transport is no-overlay: "+
			"set it to managed (ovnk generates the BGP configuration) or unmanaged (you provide it)")
	}
	if oneOf("bgp-managed.topology", c.BGPManaged.Topology, true, TopologyFullMesh) &&
		noOverlay && c.NoOverlay.Routing == RoutingManaged && c.BGPManaged.Topology == "" {
		ch.fail("bgp-managed.topology", "", "required when [no-overlay] routing is managed: "+
			"set it to full-mesh, or set routing to unmanaged and provide the BGP configuration yourself")
	}
	if reason := reservedASNumbers[c.BGPManaged.ASNumber]; reason != "" {
		ch.fail("bgp-managed.as-number", strconv.FormatUint(uint64(c.BGPManaged.ASNumber), 10),
			"%s: use a private AS number from 64512 to 65534 or from 4200000000 to 4294967294", reason)
	}
}

// reservedASNumbers are the AS numbers no BGP speaker may use, and why.
var reservedASNumbers = map[uint32]string{
	0:          "AS 0 is reserved (RFC 7607)",
	23456:      "AS 23456 is reserved as AS_TRANS (RFC 6793)",
	65535:      "AS 65535 is reserved (RFC 7300)",
	4294967295: "AS 4294967295 is reserved (RFC 7300)",
}

// checkNetwork checks the default network's subnets, MTU and service addresses.
func (c *Config) checkNetwork(ch *checker) {
	clusterValue := formatSubnets(c.ClusterSubnets)
	if len(c.ClusterSubnets) == 0 {
		ch.fail("cluster-subnets", "", "%s, e.g. 10.244.0.0/16/24", settingByKey("cluster-subnets").howToSet())
	}
	var clusterCIDRs []netip.Prefix
	for _, s := range c.ClusterSubnets {
		checkMasked(ch, "cluster-subnets", clusterValue, s.CIDR)
		var hs *cluster.HostSubnetError
		if s.CIDR.IsValid() && errors.As(cluster.CheckHostSubnet("cluster-subnets", s.CIDR, s.HostSubnet), &hs) {
			ch.fail("cluster-subnets", clusterValue, "%s", hostPrefixProblem(hs))
		}
		clusterCIDRs = append(clusterCIDRs, s.CIDR)
	}
	checkOverlaps(ch, "cluster-subnets", clusterValue, clusterCIDRs, "", nil)

	minMTU := 576
	if c.hasFamily(false) {
		minMTU = 1280
	}
	if c.MTU < minMTU || c.MTU > 65535 {
		ch.fail("mtu", strconv.Itoa(c.MTU), "want %d to 65535 (IPv6 needs at least 1280)", minMTU)
	}

	groups := []struct {
		key      string
		prefixes []netip.Prefix
	}{
		{"cluster-subnets", clusterCIDRs},
		{"join-subnets", c.JoinSubnets},
		{"transit-subnets", c.TransitSubnets},
		{"masquerade-subnets", c.MasqueradeSubnets},
		{"service-subnets", c.ServiceSubnets},
	}
	for i, g := range groups[1:] {
		c.checkPerFamily(ch, g.key, g.prefixes)
		for _, earlier := range groups[:i+1] {
			checkOverlaps(ch, g.key, formatList(g.prefixes), g.prefixes, earlier.key, earlier.prefixes)
		}
	}

	for _, ip := range c.HostServiceIPs {
		if !containsAddr(c.ServiceSubnets, ip) {
			ch.fail("host-service-ips", formatList(c.HostServiceIPs), "%s is not in service-subnets %s: "+
				"list the ClusterIPs of the kubernetes and DNS services", ip, formatList(c.ServiceSubnets))
		}
	}
}

// hostPrefixProblem says in the file's words (a cluster subnet's host prefix) what
// cluster.CheckHostSubnet refused, with the host prefixes that would do or, when none
// would, the longest cluster subnet that has one.
func hostPrefixProblem(e *cluster.HostSubnetError) string {
	const problem = "host prefix /%d does not cut %s into node blocks with addresses for pods"
	if min, max := e.HostSubnets(); min <= max {
		return fmt.Sprintf(problem+": want %d to %d", e.HostSubnet, e.Subnet, min, max)
	}
	return fmt.Sprintf(problem+", nor does any other: use a cluster subnet of at most /%d",
		e.HostSubnet, e.Subnet, e.LongestSubnet())
}

// checkPerFamily checks subnets given one per IP family: masked, at most one per
// family, and covering the cluster's families (service subnets: at least one of them).
func (c *Config) checkPerFamily(ch *checker, key string, prefixes []netip.Prefix) {
	value := formatList(prefixes)
	seen := map[bool]netip.Prefix{} // by Is4
	for _, p := range prefixes {
		checkMasked(ch, key, value, p)
		if !p.IsValid() {
			continue
		}
		if first, dup := seen[p.Addr().Is4()]; dup {
			ch.fail(key, value, "%s and %s are of one family: give one subnet per IP family", first, p)
		}
		seen[p.Addr().Is4()] = p
	}
	if key == "service-subnets" {
		if len(c.ClusterSubnets) > 0 && len(ofFamilies(c, prefixes, netip.Prefix.Addr)) == 0 {
			ch.fail(key, value, "no subnet of an IP family of cluster-subnets %s: list the cluster's service CIDRs",
				formatSubnets(c.ClusterSubnets))
		}
		return
	}
	for _, v4 := range []bool{true, false} {
		if _, ok := seen[v4]; !ok && c.hasFamily(v4) {
			family, example := "IPv6", ""
			if v4 {
				family = "IPv4"
			}
			var defaults []netip.Prefix
			_ = parse(&defaults, settingByKey(key).def)
			for _, d := range defaults {
				if d.Addr().Is4() == v4 {
					example = ", e.g. " + d.String()
				}
			}
			ch.fail(key, value, "no %s subnet, but cluster-subnets %s has one: add one%s",
				family, formatSubnets(c.ClusterSubnets), example)
		}
	}
}

// checkMasked reports a prefix that is not set or has host bits set.
func checkMasked(ch *checker, key, value string, p netip.Prefix) {
	if !p.IsValid() {
		ch.fail(key, value, "a subnet is not set: give every subnet as a CIDR")
	} else if p != p.Masked() {
		ch.fail(key, value, "%s has host bits set: did you mean %s?", p, p.Masked())
	}
}

// checkOverlaps reports a prefix of a that overlaps one of b (of bKey), or, when bKey is
// empty, another prefix of a. Problems are reported on key, whose value is value.
func checkOverlaps(ch *checker, key, value string, a []netip.Prefix, bKey string, b []netip.Prefix) {
	for i, p := range a {
		others, otherKey := b, bKey
		if bKey == "" {
			others, otherKey = a[:i], key
		}
		for _, q := range others {
			if p.Overlaps(q) {
				ch.fail(key, value, "%s overlaps %s %s: choose subnets that do not overlap", p, otherKey, q)
			}
		}
	}
}

func containsAddr(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// formatList writes prefixes or addresses as the file does: comma-separated.
func formatList[T fmt.Stringer](items []T) string {
	s := make([]string, len(items))
	for i, item := range items {
		s[i] = item.String()
	}
	return strings.Join(s, ",")
}

// formatSubnets writes cluster subnets in ovnkube's cidr/hostPrefix form.
func formatSubnets(subnets []cluster.Subnet) string {
	s := make([]string, len(subnets))
	for i, sub := range subnets {
		s[i] = fmt.Sprintf("%s/%d", sub.CIDR, sub.HostSubnet)
	}
	return strings.Join(s, ",")
}
