package netconf

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// kernel is the seam between Host's logic and a network namespace: the handful of
// netlink operations Host needs, in this package's own types. netlinkKernel talks
// to the real kernel; fakeKernel simulates one. Errors from a missing link wrap
// ErrLinkNotFound; a refused gateway wraps ErrGatewayUnreachable; a refused VRF
// wraps ErrVRFUnsupported.
type kernel interface {
	links() ([]link, error)
	linkByName(name string) (link, error)
	setMAC(l link, mac net.HardwareAddr) error
	setMTU(l link, mtu int) error
	setUp(l link) error
	setAlias(l link, alias string) error
	setMaster(l link, masterIndex int) error // 0 releases the link
	addVRF(name string, table int) error
	deleteLink(l link) error

	addrs(linkIndex int) ([]netip.Prefix, error)
	// addAddr adds p to l; noPrefixRoute keeps the kernel from adding p's subnet
	// route to the main table.
	addAddr(l link, p netip.Prefix, noPrefixRoute bool) error
	delAddr(l link, p netip.Prefix) error

	// ownRoutes lists protocol-RouteProtocol routes of every table whose device
	// is linkIndex (0: any device).
	ownRoutes(linkIndex int) ([]route, error)
	// defaultRoutes lists the main table's default routes, one entry per next hop.
	defaultRoutes() ([]route, error)
	addRoute(r route) error
	replaceRoute(r route) error
	delRoute(r route) error

	// ownRules lists protocol-RouteProtocol rules of both families.
	ownRules() ([]rule, error)
	addRule(r rule) error
	delRule(r rule) error
}

// link is a network interface as the kernel seam reports it.
type link struct {
	Index       int
	Name        string
	Kind        string // "vrf", "tun", "veth", … ("" when unknown)
	MAC         net.HardwareAddr
	MTU         int
	Up          bool // administratively up (IFF_UP), whatever the carrier
	Loopback    bool
	Alias       string
	MasterIndex int
	VRFTable    int // the table of a VRF device
}

// route is one next hop of a route as the kernel seam reports it.
type route struct {
	Table     int
	Dst       netip.Prefix
	Via       netip.Addr
	LinkIndex int
	Protocol  int
	Metric    int
}

// rule is an ip rule "to Dst lookup Table" of protocol Protocol.
type rule struct {
	Priority int
	Dst      netip.Prefix // the family's default prefix for an oif rule
	Table    int
	Protocol int
	Oif      string
}

// ownerMark starts the ownership record that a configured management port carries
// in its alias; the same owner key and value as our external_ids.
const ownerMark = "ovnk.io/owner=ovnk-agent"

// record is what the ownership record remembers about a configured port.
type record struct {
	table int    // kernel table number of the port's routes and rules
	vrf   string // the VRF device we made for it, if any
}

// String formats r as the alias: "ovnk.io/owner=ovnk-agent table=1007 vrf=blue".
func (r record) String() string {
	s := fmt.Sprintf("%s table=%d", ownerMark, r.table)
	if r.vrf != "" {
		s += " vrf=" + r.vrf
	}
	return s
}

// parseRecord reads the ownership record from an alias; ok is false when the
// alias is not ours (or damaged, in which case the link is treated as not ours).
func parseRecord(alias string) (r record, ok bool) {
	fields := strings.Fields(alias)
	if len(fields) < 2 || fields[0] != ownerMark {
		return record{}, false
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "table":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return record{}, false
			}
			r.table = n
		case "vrf":
			r.vrf = v
		}
	}
	return r, r.table != 0
}

// comparePrefix orders IPv4 before IPv6, then by address, then by length.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}
