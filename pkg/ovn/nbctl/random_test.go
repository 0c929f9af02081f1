package nbctl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestRandomRowsPrintLikeOVNNBCtl writes a few hundred routers of generated routes,
// policies, NAT and ports, and switches of generated ports, with ovn-nbctl's generic
// database commands (so rows take shapes its lr-* commands would refuse), and requires
// our printer to print every router's lists byte for byte as ovn-nbctl does, and show as
// ovn-nbctl shows. The seed is fixed, so a failure repeats.
func TestRandomRowsPrintLikeOVNNBCtl(t *testing.T) {
	const routers, routersPerSwitch, routersPerRun = 400, 5, 50
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	g := &generator{rng: rand.New(rand.NewPCG(5, 23))}
	var names []string
	for i := range routers {
		names = append(names, fmt.Sprintf("r%03d", i))
	}
	for start := 0; start < routers; start += routersPerRun {
		var args []string
		for i := start; i < start+routersPerRun; i++ {
			args = g.router(args, names[i])
			if i%routersPerSwitch == 0 {
				args = g.logicalSwitch(args, fmt.Sprintf("s%03d", i))
			}
		}
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			// The error repeats the thousands of arguments; the reason is at its end.
			msg := err.Error()
			t.Fatalf("ovn-nbctl writing routers %d to %d: ...%s", start, start+routersPerRun-1, msg[max(0, len(msg)-300):])
		}
	}
	p := nbctl.New(snapshotOf(t, ctx, nb, g.counts))
	requireSameLists(t, ctx, nb, p, names)
	requireSameShow(t, ctx, nb, p)
}

// generator writes ovn-nbctl arguments creating random rows. Values come from small
// pools, so routes share prefixes (ECMP, ties), NAT rules share sort keys and policies
// share priorities and matches.
type generator struct {
	rng    *rand.Rand
	ids    int
	counts rowCounts
}

var (
	ipv4Addrs = []string{"10.0.0.0", "10.0.0.5", "10.128.0.0", "172.18.0.1", "172.18.0.10", "172.18.0.7", "0.0.0.0", "192.168.1.128", "255.255.255.255"}
	ipv6Addrs = []string{"2001:db8::", "2001:DB8:0:0::5", "fd00:10:244:1::", "fc00:f853:ccd:e793::2", "::", "::1.2.3.4", "::ffff:1.2.3.4",
		"1:0:0:2:0:0:0:3", "fe80::858:64ff:fe40:2", "fd97::a"}
	ipv4Lengths = []string{"", "/0", "/8", "/16", "/24", "/25", "/32", "/255.255.0.0", "/255.0.255.0"}
	ipv6Lengths = []string{"", "/0", "/48", "/64", "/112", "/127", "/128", "/ffff:ffff::", "/129"}
	natIPs      = []string{"172.18.0.2", "172.18.0.3", "169.254.0.12", "fc00:f853:ccd:e793::2", "fd69::d", "2001:db8:abcd:1234:5678::99"}
	logicalIPs  = []string{"10.244.0.0/16", "10.244.1.5", "100.64.0.2", "fd00:10:244:1::/64", "fd98::2", "10.10.0.0/16"}
	portRanges  = []string{"", "", "80", "8080-8090", "10000-65535", "1-2,3-4,5-6,7-8"}
	matches     = []string{"1", "pkt.mark == 42", `inport == "rtos-node1" && ip4.dst == 172.18.0.2 /* node1 */`,
		"ip4.src == 10.244.0.0/16 && ip4.dst == 10.244.0.0/16", "ip6.dst == fd00::/8"}
	priorities = []int{0, 100, 102, 1004, 32767}
	actions    = []string{"allow", "drop", "reroute", "reroute"}
	nexthops   = []string{"100.88.0.6", "100.88.0.10", "10.244.0.2", "fd00:10:244:1:0::2", "FD97::3", "100.64.0.1/24", "bogus"}
	optionKeys = []string{"pkt_mark", "a", "b", "zeta", "k", "route_table", "an-option-with-a-long-name", "x1", "x2", "x3"}
	natCounts  = []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 33}
	// natMatches are NAT matches, which lr-nat-list shows and sorts by cut to 18 bytes:
	// shorter, exactly 18 and 19 bytes long, alike in their first 18 bytes (so the
	// external IP or the tie order tells their rules apart), and cut inside a two-byte
	// character.
	natMatches = []string{"1", "ip4.src == 1.2.3.4", "ip4.src == 1.2.3.45", "eth.dst == 0a:58:0a:0a:00:02",
		"eth.dst == 0a:58:0a:0a:00:03", `inport == "rtos-node1"`, "pkt.mark == 1 /* é */"}
	routeTables = []string{"", "", "", "blue", "a"}
)

func (g *generator) pick(pool []string) string { return pool[g.rng.IntN(len(pool))] }
func (g *generator) chance(percent int) bool   { return g.rng.IntN(100) < percent }

// id is a fresh --id symbol.
func (g *generator) id() string {
	g.ids++
	return fmt.Sprintf("@i%d", g.ids)
}

// quote writes a string as the database commands parse it: a JSON string.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func set(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func smap(m map[string]string) string {
	var pairs []string
	for k, v := range m {
		pairs = append(pairs, quote(k)+"="+quote(v))
	}
	sort.Strings(pairs)
	return "{" + strings.Join(pairs, ",") + "}"
}

// create appends "-- --id=ID create TABLE COLUMNS..." and returns the arguments and ID.
func (g *generator) create(args []string, table string, columns ...string) ([]string, string) {
	id := g.id()
	return append(append(args, "--", "--id="+id, "create", table), columns...), id
}

func (g *generator) prefix() string {
	if g.chance(50) {
		return g.pick(ipv4Addrs) + g.pick(ipv4Lengths)
	}
	return g.pick(ipv6Addrs) + g.pick(ipv6Lengths)
}

func (g *generator) options(keys int) map[string]string {
	m := map[string]string{}
	for range keys {
		m[g.pick(optionKeys)] = fmt.Sprint(g.rng.IntN(100))
	}
	return m
}

// router appends a router with ports, gateway chassis, routes, policies and NAT.
func (g *generator) router(args []string, name string) []string {
	var ports, portNames []string
	for i := range 1 + g.rng.IntN(3) {
		// Port names share their first 18 bytes, which is all lr-nat-list shows.
		portName := fmt.Sprintf("%s-gateway-port-with-long-name-%d", name, i)
		columns := []string{"name=" + quote(portName), "mac=" + quote(fmt.Sprintf("0a:58:64:40:%02x:%02x", g.rng.IntN(256), i)),
			"networks=" + set([]string{g.pick(ipv4Addrs) + "/24", g.pick(ipv6Addrs) + "/64"})}
		if g.chance(30) {
			columns = append(columns, "options:route_table="+quote(g.pick(routeTables[3:])))
		}
		if g.chance(30) {
			columns = append(columns, "peer="+quote("peer-"+portName))
		}
		var chassis []string
		for c := range g.rng.IntN(4) {
			var id string
			args, id = g.create(args, "Gateway_Chassis", "name="+quote(fmt.Sprintf("%s-ch%d", portName, c)),
				"chassis_name="+quote(fmt.Sprintf("ch%d", g.rng.IntN(9))), fmt.Sprintf("priority=%d", g.rng.IntN(3)))
			chassis = append(chassis, id)
			g.counts.gatewayChassis++
		}
		if len(chassis) > 0 {
			columns = append(columns, "gateway_chassis=["+strings.Join(chassis, ",")+"]")
		}
		var id string
		args, id = g.create(args, "Logical_Router_Port", columns...)
		ports = append(ports, id)
		portNames = append(portNames, portName)
		g.counts.routerPorts++
	}

	var routes []string
	prefixes := []string{g.prefix(), g.prefix(), g.prefix(), g.prefix()}
	for range g.rng.IntN(14) {
		prefix := g.pick(prefixes)
		columns := []string{"ip_prefix=" + quote(prefix), "route_table=" + quote(g.pick(routeTables))}
		outputPort := g.chance(30)
		switch n := g.rng.IntN(10); {
		case n == 0:
			columns = append(columns, `nexthop="discard"`)
		case n == 1:
			columns = append(columns, `nexthop=""`)
			outputPort = true
		case n < 5:
			columns = append(columns, "nexthop="+quote(g.pick(ipv4Addrs)))
		default:
			columns = append(columns, "nexthop="+quote(g.pick(ipv6Addrs)))
		}
		if n := g.rng.IntN(3); n > 0 {
			columns = append(columns, "policy="+[]string{"", "dst-ip", "src-ip"}[n])
		}
		if outputPort {
			columns = append(columns, "output_port="+quote(g.pick(portNames)))
		}
		if g.chance(20) {
			columns = append(columns, "options:ecmp_symmetric_reply="+quote(g.pick([]string{"true", "TRUE", "false", "yes"})))
		}
		if g.chance(10) {
			columns = append(columns, `external_ids:ic-learned-route="x"`)
		}
		if g.chance(10) {
			var bfd string
			// BFD rows are unique by port and destination.
			args, bfd = g.create(args, "BFD", "logical_port="+quote(g.pick(portNames)), "dst_ip="+quote(fmt.Sprintf("192.0.2.%d", g.ids)))
			columns = append(columns, "bfd="+bfd)
		}
		var id string
		args, id = g.create(args, "Logical_Router_Static_Route", columns...)
		routes = append(routes, id)
		g.counts.routes++
	}

	var policies []string
	for range g.rng.IntN(8) {
		action := g.pick(actions)
		columns := []string{fmt.Sprintf("priority=%d", priorities[g.rng.IntN(len(priorities))]), "match=" + quote(g.pick(matches)), "action=" + action}
		if action == "reroute" {
			hops := map[string]string{}
			for range 1 + g.rng.IntN(3) {
				hop := g.pick(nexthops)
				hops[hop] = hop
			}
			columns = append(columns, "nexthops="+set(slices.Sorted(maps.Keys(hops))))
		}
		if keys := g.rng.IntN(8); keys > 0 {
			columns = append(columns, "options="+smap(g.options(keys)))
		}
		var id string
		args, id = g.create(args, "Logical_Router_Policy", columns...)
		policies = append(policies, id)
		g.counts.policies++
	}

	var nats []string
	for range natCounts[g.rng.IntN(len(natCounts))] {
		columns := []string{"type=" + g.pick([]string{"snat", "snat", "dnat", "dnat_and_snat"}),
			"external_ip=" + quote(g.pick(natIPs)), "logical_ip=" + quote(g.pick(logicalIPs))}
		if r := g.pick(portRanges); r != "" {
			columns = append(columns, "external_port_range="+quote(r))
		}
		if g.chance(40) {
			columns = append(columns, "gateway_port="+g.pick(ports))
		}
		if g.chance(40) {
			columns = append(columns, "external_mac="+quote(fmt.Sprintf("0a:58:ac:12:00:%02x", g.rng.IntN(256))))
		}
		if g.chance(40) {
			columns = append(columns, "logical_port="+quote(g.pick([]string{"pod-a", "a-very-long-logical-port-name"})))
		}
		if g.chance(50) {
			columns = append(columns, "match="+quote(g.pick(natMatches)))
		}
		var id string
		args, id = g.create(args, "NAT", columns...)
		nats = append(nats, id)
		g.counts.nats++
	}

	args = append(args, "--", "create", "Logical_Router", "name="+quote(name), "ports=["+strings.Join(ports, ",")+"]")
	for _, refs := range []struct {
		column string
		ids    []string
	}{{"static_routes", routes}, {"policies", policies}, {"nat", nats}} {
		if len(refs.ids) > 0 {
			args = append(args, refs.column+"=["+strings.Join(refs.ids, ",")+"]")
		}
	}
	g.counts.routers++
	return args
}

// logicalSwitch appends a switch whose ports carry every field show prints.
func (g *generator) logicalSwitch(args []string, name string) []string {
	var ports []string
	for i := range g.rng.IntN(5) {
		portName := fmt.Sprintf("%s-p%d", name, i)
		columns := []string{"name=" + quote(portName)}
		if typ := g.pick([]string{"", "", "router", "localnet", "remote"}); typ != "" {
			columns = append(columns, "type="+quote(typ))
		}
		addresses := [][]string{nil, {"router"}, {"unknown"}, {"router", "0a:58:0a:00:01:01"},
			{"0a:58:0a:00:01:07 10.0.1.7", "0a:58:0a:00:01:06 10.0.1.6"}}[g.rng.IntN(5)]
		if len(addresses) > 0 {
			columns = append(columns, "addresses="+set(addresses))
		}
		if g.chance(20) {
			columns = append(columns, "parent_name="+quote(name+"-parent"))
		}
		if g.chance(20) {
			columns = append(columns, fmt.Sprintf("tag=%d", 1+g.rng.IntN(4095)))
		}
		if g.chance(30) {
			columns = append(columns, "options:router-port="+quote("rtos-"+portName))
		}
		if g.chance(20) {
			columns = append(columns, "options:requested-chassis="+quote("ch1"))
		}
		if g.chance(20) {
			columns = append(columns, "external_ids="+smap(map[string]string{"neutron:port_name": "neutron-" + portName}))
		}
		var id string
		args, id = g.create(args, "Logical_Switch_Port", columns...)
		ports = append(ports, id)
		g.counts.switchPorts++
	}
	columns := []string{"name=" + quote(name)}
	if len(ports) > 0 {
		columns = append(columns, "ports=["+strings.Join(ports, ",")+"]")
	}
	if g.chance(30) {
		columns = append(columns, "external_ids="+smap(map[string]string{"neutron:network_name": "neutron-" + name}))
	}
	args = append(append(args, "--", "create", "Logical_Switch"), columns...)
	g.counts.switches++
	return args
}
