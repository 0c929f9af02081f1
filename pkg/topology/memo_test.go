package topology

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// memoLocal is the zone the random clusters are compiled for; it never leaves.
const memoLocal = "node00"

// memoWorld makes random clusters and changes them. Every change gives a new State
// whose every node, network, pod and connect is a new value (as cluster.Build gives at
// each compile), so that the memo can recognize nothing by its pointer; slices are
// shared between states but never modified, as a State never is.
type memoWorld struct {
	rng                       *rand.Rand
	nextNode, nextNet, nextID int
	opts                      Options
}

func newMemoWorld(seed uint64) (*memoWorld, *cluster.State) {
	w := &memoWorld{rng: rand.New(rand.NewPCG(seed, 0x6d656d6f)), nextID: 1}
	st := &cluster.State{Config: memoConfig(false)}
	st.Networks = append(st.Networks, &cluster.Network{
		Name: cluster.DefaultNetworkName, Topology: cluster.Layer3, Role: cluster.Primary, MTU: 1400, Transport: cluster.Geneve,
		Subnets:     []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}},
		JoinSubnets: prefixesOf("100.64.0.0/16"), TransitSubnets: prefixesOf("100.88.0.0/16"),
	})
	for range 2 + w.rng.IntN(3) {
		w.addNetwork(st)
	}
	for range 3 + w.rng.IntN(3) {
		w.addNode(st)
	}
	for range 2 + w.rng.IntN(6) {
		w.addPod(st)
	}
	for range w.rng.IntN(2) {
		w.addConnect(st)
	}
	sortState(st)
	return w, st
}

func memoConfig(more bool) cluster.Config {
	c := cluster.Config{
		MasqueradeSubnets:  prefixesOf("169.254.0.0/17", "fd69::/112"),
		DefaultJoinSubnets: prefixesOf("100.64.0.0/16", "fd98::/64"),
		ServiceSubnets:     prefixesOf("10.96.0.0/16"),
		HostServiceIPs:     []netip.Addr{netip.MustParseAddr("10.96.0.1")},
	}
	if more {
		c.HostServiceIPs = append(c.HostServiceIPs, netip.MustParseAddr("10.96.0.10"))
	}
	return c
}

// netIndex is the number in a random network's name, which its addresses derive from.
func netIndex(n *cluster.Network) int {
	i, _ := strconv.Atoi(n.Name[strings.LastIndexByte(n.Name, '_')+1:])
	return i
}

// nodeIndex is the number in a random node's name.
func nodeIndex(n *cluster.Node) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(n.Name, "node"))
	return i
}

func (w *memoWorld) addNetwork(st *cluster.State) {
	j := w.nextNet
	w.nextNet++
	id := w.nextID
	w.nextID++
	n := &cluster.Network{Role: cluster.Primary, MTU: 1400, Transport: cluster.Geneve, ID: id,
		JoinSubnets: prefixesOf("100.65.0.0/16", "fd99::/64"), TransitSubnets: prefixesOf("100.88.0.0/16", "fd97::/64")}
	if w.rng.IntN(2) == 0 {
		n.Name = fmt.Sprintf("cluster_udn_l3_%d", j)
		n.Topology = cluster.Layer3
		n.Subnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix(fmt.Sprintf("10.%d.0.0/16", 100+j)), HostSubnet: 24}}
		if j%2 == 0 {
			n.Subnets = append(n.Subnets, cluster.Subnet{CIDR: netip.MustParsePrefix(fmt.Sprintf("fd%02x::/48", j)), HostSubnet: 64})
		}
		n.TunnelKeys = []int{16711683 + id}
		for _, node := range st.Nodes {
			w.giveSubnet(node, n)
		}
	} else {
		n.Name = fmt.Sprintf("cluster_udn_l2_%d", j)
		n.Topology = cluster.Layer2
		n.Subnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix(fmt.Sprintf("10.%d.0.0/16", 150+j))}}
		if j%2 == 0 {
			n.Subnets = append(n.Subnets, cluster.Subnet{CIDR: netip.MustParsePrefix(fmt.Sprintf("fd2%x::/60", j%16))})
		}
		n.TunnelKeys = []int{16711683 + id, 16715779 + id}
		for _, node := range st.Nodes {
			node.Layer2GatewayTunnelIDs[n.Name] = 100 + node.ID
		}
	}
	n.Owner = cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: n.Name}
	st.Networks = append(st.Networks, n)
}

// giveSubnet gives node its subnets of the Layer3 network n.
func (w *memoWorld) giveSubnet(node *cluster.Node, n *cluster.Network) {
	i, j := nodeIndex(node), netIndex(n)
	if n.IsDefault() {
		node.Subnets[n.Name] = prefixesOf(fmt.Sprintf("10.244.%d.0/24", i))
		return
	}
	s := prefixesOf(fmt.Sprintf("10.%d.%d.0/24", 100+j, i))
	if len(n.Subnets) > 1 {
		s = append(s, netip.MustParsePrefix(fmt.Sprintf("fd%02x:0:0:%x::/64", j, i)))
	}
	node.Subnets[n.Name] = s
}

func (w *memoWorld) addNode(st *cluster.State) *cluster.Node {
	i := w.nextNode
	w.nextNode++
	name := fmt.Sprintf("node%02d", i)
	v4 := netip.AddrFrom4([4]byte{172, 18, 0, byte(i + 2)})
	node := &cluster.Node{
		Name: name, ID: i + 2, ChassisID: "chassis-" + name,
		Subnets:        map[string][]netip.Prefix{},
		PrimaryIfAddrs: []netip.Prefix{netip.PrefixFrom(v4, 16)},
		Gateway: cluster.Gateway{Mode: "shared", InterfaceID: "breth0_" + name, MAC: fmt.Sprintf("02:42:ac:12:00:%02x", i+2),
			IPs: []netip.Prefix{netip.PrefixFrom(v4, 16)}, NextHops: []netip.Addr{netip.MustParseAddr("172.18.0.1")}},
		Layer2TopologyVersion:  cluster.Layer2TopologyVersionTransitRouter,
		Layer2GatewayTunnelIDs: map[string]int{},
	}
	if i > 0 && w.rng.IntN(5) == 0 {
		node.Layer2TopologyVersion = ""
	}
	for _, n := range st.Networks {
		switch {
		case n.Topology == cluster.Layer3 && w.rng.IntN(8) > 0:
			w.giveSubnet(node, n)
		case n.Topology == cluster.Layer2 && w.rng.IntN(8) > 0:
			node.Layer2GatewayTunnelIDs[n.Name] = 100 + node.ID
		}
	}
	st.Nodes = append(st.Nodes, node)
	return node
}

func (w *memoWorld) addPod(st *cluster.State) {
	n := st.Networks[w.rng.IntN(len(st.Networks))]
	node := st.Nodes[w.rng.IntN(len(st.Nodes))]
	if w.rng.IntN(3) == 0 {
		node = st.Nodes[0] // the zone's own: its pods are most of what a zone builds
	}
	k := w.rng.IntN(200)
	p := &cluster.Pod{Namespace: "ns-" + n.Name, Name: fmt.Sprintf("pod%d", k), Node: node.Name, UID: fmt.Sprintf("uid-%d", w.rng.IntN(1000)),
		Networks: map[string]cluster.PodInterface{}}
	if i := slices.IndexFunc(st.Pods, func(o *cluster.Pod) bool { return o.Namespace == p.Namespace && o.Name == p.Name }); i >= 0 {
		return
	}
	iface := cluster.PodInterface{MAC: fmt.Sprintf("0a:58:0a:%02x:00:%02x", netIndex(n)%256, k+3), Role: cluster.PodRolePrimary}
	switch {
	case n.Topology == cluster.Layer2:
		iface.IPs = []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(150 + netIndex(n)), 1, byte(k + 3)}), 16)}
		iface.TunnelID = k + 3
		if w.rng.IntN(10) == 0 {
			iface.TunnelID = 0 // a remote port is left out, with a warning
		}
	case len(node.Subnets[n.Name]) > 0:
		s := node.Subnets[n.Name][0]
		iface.IPs = []netip.Prefix{netip.PrefixFrom(s.Addr().Next().Next().Next().Next(), s.Bits())}
	default:
		iface.IPs = []netip.Prefix{netip.MustParsePrefix("10.99.0.5/24")}
	}
	if w.rng.IntN(12) == 0 {
		iface.MAC = "not-a-mac" // the port cannot be programmed
	}
	p.Networks[n.Name] = iface
	if !n.IsDefault() && n.Topology == cluster.Layer3 && w.rng.IntN(2) == 0 && len(node.Subnets[cluster.DefaultNetworkName]) > 0 {
		s := node.Subnets[cluster.DefaultNetworkName][0]
		p.Networks[cluster.DefaultNetworkName] = cluster.PodInterface{MAC: fmt.Sprintf("0a:58:0a:f4:00:%02x", k+3), Role: cluster.PodRoleInfrastructureLocked,
			IPs: []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(nodeIndex(node)), byte(k + 3)}), s.Bits())}}
	}
	st.Pods = append(st.Pods, p)
}

func (w *memoWorld) addConnect(st *cluster.State) {
	var udns []*cluster.Network
	for _, n := range st.Networks {
		if !n.IsDefault() {
			udns = append(udns, n)
		}
	}
	if len(udns) < 2 {
		return
	}
	k := w.rng.IntN(4)
	name := fmt.Sprintf("cnc%d", k)
	if slices.ContainsFunc(st.Connects, func(c *cluster.Connect) bool { return c.Name == name }) {
		return
	}
	cc := &cluster.Connect{Name: name, Refused: map[string]string{}, PodNetwork: true, TunnelKey: 16716000 + k,
		Subnets: []cluster.ConnectSubnet{{CIDR: netip.MustParsePrefix("192.168.0.0/16"), NetworkPrefix: 24}},
		Blocks:  map[string][]netip.Prefix{}}
	for b, n := range udns {
		if w.rng.IntN(3) > 0 {
			cc.Networks = append(cc.Networks, n.Name)
			if w.rng.IntN(8) > 0 {
				cc.Blocks[n.Name] = prefixesOf(fmt.Sprintf("192.168.%d.0/24", k*64+b))
			}
		}
	}
	st.Connects = append(st.Connects, cc)
}

// next returns a copy of st with one to three random changes, and sets w.opts.
func (w *memoWorld) next(st *cluster.State) (*cluster.State, string) {
	st = cloneState(st)
	var did []string
	for range 1 + w.rng.IntN(3) {
		did = append(did, w.change(st))
	}
	sortState(st)
	return st, strings.Join(did, ", ")
}

func (w *memoWorld) change(st *cluster.State) string {
	pick := func(n int) int { return w.rng.IntN(n) }
	remote := func() *cluster.Node {
		if len(st.Nodes) < 2 {
			return nil
		}
		return st.Nodes[1+pick(len(st.Nodes)-1)] // node00 sorts first
	}
	switch pick(23) {
	case 0, 1, 2:
		n := w.addNode(st)
		for range pick(3) {
			w.addPod(st)
		}
		return "node " + n.Name + " joins"
	case 3, 4:
		if n := remote(); n != nil {
			st.Nodes = slices.DeleteFunc(st.Nodes, func(o *cluster.Node) bool { return o == n })
			if pick(2) == 0 {
				st.Pods = slices.DeleteFunc(st.Pods, func(p *cluster.Pod) bool { return p.Node == n.Name })
			}
			return "node " + n.Name + " leaves"
		}
	case 5, 6:
		n := st.Nodes[pick(len(st.Nodes))]
		switch pick(8) {
		case 0:
			n.ChassisID += "x"
			return "node " + n.Name + " chassis"
		case 1:
			if n.Layer2TransitRouter() {
				n.Layer2TopologyVersion = ""
			} else {
				n.Layer2TopologyVersion = cluster.Layer2TopologyVersionTransitRouter
			}
			return "node " + n.Name + " Layer2 topology"
		case 2:
			net := st.Networks[pick(len(st.Networks))]
			if _, ok := n.Subnets[net.Name]; ok && pick(2) == 0 {
				delete(n.Subnets, net.Name)
			} else if net.Topology == cluster.Layer3 {
				s := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(100 + netIndex(net)), byte(200 + pick(50)), 0}), 24)
				if net.IsDefault() {
					s = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(200 + pick(50)), 0}), 24)
				}
				n.Subnets[net.Name] = []netip.Prefix{s}
			}
			return "node " + n.Name + " subnets of " + net.Name
		case 3:
			net := st.Networks[pick(len(st.Networks))]
			if _, ok := n.Layer2GatewayTunnelIDs[net.Name]; ok && pick(2) == 0 {
				delete(n.Layer2GatewayTunnelIDs, net.Name)
			} else if net.Topology == cluster.Layer2 {
				n.Layer2GatewayTunnelIDs[net.Name] = 300 + pick(100)
			}
			return "node " + n.Name + " gateway tunnel key of " + net.Name
		case 4:
			v4 := netip.AddrFrom4([4]byte{172, 19, 0, byte(1 + pick(200))})
			n.PrimaryIfAddrs = []netip.Prefix{netip.PrefixFrom(v4, 16)}
			return "node " + n.Name + " primary address"
		case 5:
			n.Gateway.VLANID = pick(3)
			return "node " + n.Name + " gateway VLAN"
		case 6:
			n.ID += 60 // ids stay unique: they start below 60
			return "node " + n.Name + " id"
		default:
			n.Labels = map[string]string{"x": strconv.Itoa(pick(10))}
			return "node " + n.Name + " label"
		}
	case 7:
		w.addNetwork(st)
		return "network added"
	case 8:
		if i := pick(len(st.Networks)); !st.Networks[i].IsDefault() {
			name := st.Networks[i].Name
			st.Networks = slices.Delete(st.Networks, i, i+1)
			return "network " + name + " removed"
		}
	case 9, 10:
		n := st.Networks[pick(len(st.Networks))]
		switch pick(4) {
		case 0:
			n.MTU = 1300 + 100*pick(3)
			return "network " + n.Name + " MTU"
		case 1:
			if len(n.TunnelKeys) > 0 {
				n.TunnelKeys = nil // not compiled until the keys are back
			} else if n.Topology == cluster.Layer3 {
				n.TunnelKeys = []int{16711683 + n.ID}
			} else {
				n.TunnelKeys = []int{16711683 + n.ID, 16715779 + n.ID}
			}
			return "network " + n.Name + " tunnel keys"
		case 2:
			n.TransitSubnets = prefixesOf(fmt.Sprintf("100.%d.0.0/16", 88+pick(3)), "fd97::/64")
			return "network " + n.Name + " transit subnets"
		default:
			n.Namespaces = []string{fmt.Sprintf("ns%d", pick(5))}
			return "network " + n.Name + " namespaces"
		}
	case 11, 12:
		for range 1 + pick(3) {
			w.addPod(st)
		}
		return "pods added"
	case 13, 14, 15:
		if len(st.Pods) > 0 {
			i := pick(len(st.Pods))
			p := st.Pods[i]
			// One field at a time, so that each must count on its own.
			switch field := pick(6); field {
			case 0:
				st.Pods = slices.Delete(st.Pods, i, i+1)
				return "pod " + p.Name + " removed"
			case 1:
				// To another node, or to one not in the state, which a pod of a node that
				// left is on already.
				if gone := !slices.ContainsFunc(st.Nodes, func(n *cluster.Node) bool { return n.Name == p.Node }); gone || pick(3) == 0 {
					p.Node = fmt.Sprintf("gone%d", pick(3))
				} else {
					p.Node = st.Nodes[pick(len(st.Nodes))].Name
				}
				return "pod " + p.Name + " moved to " + p.Node
			case 2:
				p.UID += "x"
				return "pod " + p.Name + " uid"
			default:
				for name, iface := range p.Networks {
					switch field {
					case 3:
						iface.TunnelID = pick(40)
					case 4:
						iface.MAC = fmt.Sprintf("0a:58:0b:00:00:%02x", pick(256))
					default:
						iface.IPs = []netip.Prefix{netip.PrefixFrom(iface.IPs[0].Addr().Next(), iface.IPs[0].Bits())}
					}
					p.Networks[name] = iface
				}
				return fmt.Sprintf("pod %s interface (%d)", p.Name, field)
			}
		}
	case 16:
		w.addConnect(st)
		return "connect added"
	case 17:
		if len(st.Connects) > 0 {
			cc := st.Connects[pick(len(st.Connects))]
			switch pick(5) {
			case 0:
				st.Connects = slices.DeleteFunc(st.Connects, func(o *cluster.Connect) bool { return o == cc })
				return "connect " + cc.Name + " removed"
			case 4:
				if len(cc.Networks) > 0 {
					name := cc.Networks[pick(len(cc.Networks))]
					cc.Blocks[name] = prefixesOf(fmt.Sprintf("192.168.%d.0/24", 32+pick(32)))
					return "connect " + cc.Name + " block of " + name + " moved"
				}
			case 1:
				if len(cc.Networks) > 0 {
					delete(cc.Blocks, cc.Networks[pick(len(cc.Networks))])
				}
				return "connect " + cc.Name + " block removed"
			case 2:
				cc.TunnelKey = pick(2) * (16716100 + pick(10))
				return "connect " + cc.Name + " tunnel key"
			default:
				if len(cc.Networks) > 1 {
					cc.Networks = slices.Delete(slices.Clone(cc.Networks), 0, 1)
				}
				return "connect " + cc.Name + " network left"
			}
		}
	case 18:
		if w.opts.Layer2 == Layer2Legacy {
			w.opts.Layer2 = Layer2TransitRouter
		} else {
			w.opts.Layer2 = Layer2Legacy
		}
		return "zone Layer2 " + w.opts.Layer2.String()
	case 19:
		w.opts.HoldLocalLayer2Pods = !w.opts.HoldLocalLayer2Pods
		return fmt.Sprintf("hold local Layer2 pods %v", w.opts.HoldLocalLayer2Pods)
	case 21:
		// The ports the NB holds: some of the local pods', one perhaps of a pod
		// recreated with other addresses since.
		w.opts.Wired = map[string][]string{}
		all, err := CompileWith(st, memoLocal, Options{Layer2: w.opts.Layer2})
		if err != nil {
			panic(err) // the local node never leaves
		}
		for _, lsp := range all.Rows.SwitchPorts {
			if lsp.ExternalIDs["pod"] == "true" && lsp.ExternalIDs[rows.NodeKey] == memoLocal && pick(2) == 0 {
				w.opts.Wired[lsp.Name] = lsp.Addresses
				if pick(4) == 0 {
					w.opts.Wired[lsp.Name] = []string{"0a:58:0b:00:00:01 10.1.2.3"}
				}
			}
		}
		return fmt.Sprintf("%d local pods wired", len(w.opts.Wired))
	case 20:
		st.Config = memoConfig(len(st.Config.HostServiceIPs) == 1)
		return "configuration"
	}
	return "nothing"
}

// cloneState copies st: new nodes, networks, pods and connects, with maps of their own.
func cloneState(st *cluster.State) *cluster.State {
	out := &cluster.State{Config: st.Config}
	for _, n := range st.Nodes {
		c := *n
		c.Subnets, c.Layer2GatewayTunnelIDs, c.Labels = maps.Clone(n.Subnets), maps.Clone(n.Layer2GatewayTunnelIDs), maps.Clone(n.Labels)
		out.Nodes = append(out.Nodes, &c)
	}
	for _, n := range st.Networks {
		c := *n
		out.Networks = append(out.Networks, &c)
	}
	for _, p := range st.Pods {
		c := *p
		c.Networks = maps.Clone(p.Networks)
		out.Pods = append(out.Pods, &c)
	}
	for _, cc := range st.Connects {
		c := *cc
		c.Blocks, c.Refused = maps.Clone(cc.Blocks), maps.Clone(cc.Refused)
		out.Connects = append(out.Connects, &c)
	}
	return out
}

func sortState(st *cluster.State) {
	slices.SortFunc(st.Nodes, func(a, b *cluster.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Networks, func(a, b *cluster.Network) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Pods, func(a, b *cluster.Pod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	slices.SortFunc(st.Connects, func(a, b *cluster.Connect) int { return strings.Compare(a.Name, b.Name) })
	for _, cc := range st.Connects {
		// Networks that are gone are no longer selected.
		cc.Networks = slices.DeleteFunc(slices.Clone(cc.Networks), func(name string) bool {
			return !slices.ContainsFunc(st.Networks, func(n *cluster.Network) bool { return n.Name == name })
		})
	}
}

// resultDump is everything a Result says: its rows whole (ovn.WriteRows), each table's
// identities in the result's order, and the outcomes, warnings and pod problems; and
// the text of each row, by "table identity".
type resultDump struct {
	text string
	rows map[string]string
}

func dumpResult(t *testing.T, res *Result) resultDump {
	t.Helper()
	var b strings.Builder
	if err := ovn.WriteRows(&b, res.Rows); err != nil {
		t.Fatal(err)
	}
	d := resultDump{rows: map[string]string{}}
	// WriteRows starts each row with its table and identity, its columns indented.
	var row, text []string
	for line := range strings.Lines(b.String()) {
		if !strings.HasPrefix(line, " ") && row != nil {
			d.rows[row[0]] = strings.Join(text, "")
			row, text = nil, nil
		}
		if row == nil {
			row = []string{strings.TrimSuffix(line, "\n")}
		}
		text = append(text, line)
	}
	if row != nil {
		d.rows[row[0]] = strings.Join(text, "")
	}
	for _, tbl := range rows.Tables {
		fmt.Fprintf(&b, "order of %s:", tbl.Name())
		for _, m := range tbl.Models(res.Rows) {
			b.WriteString(" " + m.(uuidRow).GetUUID())
		}
		b.WriteString("\n")
	}
	errs := func(what string, m map[string]error) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "%s %s: %v\n", what, k, m[k])
		}
	}
	errs("not compiled", res.NotCompiled)
	errs("connect", res.Connects)
	errs("pod", res.Pods)
	for _, w := range res.Warnings {
		b.WriteString("warning: " + w + "\n")
	}
	d.text = b.String()
	return d
}

// reuseCount compares next with prev, the result compiled before it with the same
// memo: it counts next's rows that are prev's very rows (reused) and the others (new),
// and lists the rows that are new although prev had them with the same content.
func reuseCount(prev, next *Result, prevDump, nextDump resultDump) (reused, fresh int, missed []string) {
	for _, tbl := range rows.Tables {
		prevRows := map[string]model.Model{}
		for _, m := range tbl.Models(prev.Rows) {
			prevRows[m.(uuidRow).GetUUID()] = m
		}
		for _, m := range tbl.Models(next.Rows) {
			id := m.(uuidRow).GetUUID()
			key := tbl.Name() + " " + id
			switch p, ok := prevRows[id]; {
			case ok && p == m:
				reused++
			case ok && prevDump.rows[key] == nextDump.rows[key]:
				missed = append(missed, key)
				fresh++
			default:
				fresh++
			}
		}
	}
	return reused, fresh, missed
}

// TestMemoCompilesAsAFreshCompile replays random changes of random clusters (nodes
// joining, leaving and changing; networks, pods and connects added, removed and
// changed; the zone's options and the configuration) through one Memo and requires, at
// every step, that the memo's result is a fresh compile's, that every row whose content
// did not change is the last result's very row, and that no earlier result changed.
// OVNK_MEMO_SEED runs one seed.
func TestMemoCompilesAsAFreshCompile(t *testing.T) {
	seeds, steps := 20, 30
	if testing.Short() {
		seeds = 5
	}
	first := uint64(0)
	if s := os.Getenv("OVNK_MEMO_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("OVNK_MEMO_SEED: %v", err)
		}
		first, seeds = n, 1
	}
	var reusedAll, freshAll, compiledAll int
	for seed := first; seed < first+uint64(seeds); seed++ {
		w, st := newMemoWorld(seed)
		var memo Memo
		type earlier struct {
			res  *Result
			dump resultDump
		}
		// The last results, the latest last: none of them may change.
		var history []earlier
		for step := range steps {
			what := "the first compile"
			if step > 0 {
				st, what = w.next(st)
			}
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("seed %d (OVNK_MEMO_SEED=%d), step %d (%s): %s", seed, seed, step, what, fmt.Sprintf(format, args...))
			}
			want, err := CompileWith(st, memoLocal, w.opts)
			if err != nil {
				fail("fresh compile: %v", err)
			}
			got, err := memo.CompileWith(st, memoLocal, w.opts)
			if err != nil {
				fail("memo compile: %v", err)
			}
			gotDump := dumpResult(t, got)
			if d := diffLines(dumpResult(t, want).text, gotDump.text); d != "" {
				fail("the memo's result differs from a fresh compile's:\n%s", d)
			}
			for _, e := range history {
				if d := diffLines(e.dump.text, dumpResult(t, e.res).text); d != "" {
					fail("an earlier result changed:\n%s", d)
				}
			}
			if len(history) > 0 {
				last := history[len(history)-1]
				reused, fresh, missed := reuseCount(last.res, got, last.dump, gotDump)
				if len(missed) > 0 {
					fail("%d rows unchanged since the last compile are new rows, among them %v", len(missed), missed[:min(5, len(missed))])
				}
				reusedAll, freshAll = reusedAll+reused, freshAll+fresh
			}
			compiledAll += len(st.Networks) - len(got.NotCompiled)
			history = append(history, earlier{got, gotDump})
			if len(history) > 2 {
				history = history[1:]
			}
		}
	}
	t.Logf("%d rows reused, %d new; %d networks compiled", reusedAll, freshAll, compiledAll)
	if reusedAll == 0 || freshAll == 0 {
		t.Errorf("the random changes reused %d rows and made %d new: they no longer exercise the memo", reusedAll, freshAll)
	}
}

// diffLines is "" when a and b are equal, else their first differing lines.
func diffLines(a, b string) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return ""
}

// TestMemoFollowsRareChanges takes changes the random ones seldom draw through one memo,
// each compared with a fresh compile: a pod moving between two nodes that are not in
// the state (its remote port's warning names the node), the wired ports changing while
// the local pods are held.
func TestMemoFollowsRareChanges(t *testing.T) {
	st := topologytest.OKEP5094()
	opts := Options{Layer2: Layer2TransitRouter}
	var memo Memo
	step := func(what string) {
		t.Helper()
		got, err := memo.CompileWith(st, "ovn-control-plane", opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := CompileWith(st, "ovn-control-plane", opts)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffLines(dumpResult(t, want).text, dumpResult(t, got).text); d != "" {
			t.Fatalf("%s: the memo's result differs from a fresh compile's:\n%s", what, d)
		}
	}
	movePod := func(name, node string) {
		st = cloneState(st)
		for _, p := range st.Pods {
			if p.Name == name {
				p.Node = node
			}
		}
	}
	step("the first compile")
	movePod("vm-b", "gone-a")
	step("vm-b on a node not in the state")
	movePod("vm-b", "gone-b")
	step("vm-b on another node not in the state")

	local, err := CompileWith(st, "ovn-control-plane", opts)
	if err != nil {
		t.Fatal(err)
	}
	port := portNamed(local.Rows, PodPortName(st.Networks[0], st.Pods[0]))
	opts.HoldLocalLayer2Pods, opts.Wired = true, map[string][]string{port.Name: port.Addresses}
	step("the local pods held, vm-a wired")
	opts.Wired = map[string][]string{}
	step("vm-a no longer wired")
}

// TestMemoNodeJoinReusesTheRest compiles a Scale zone, then the zone after a node
// joins with the first compile's memo: every row is the first compile's very row but
// those that name the new node and their parents.
func TestMemoNodeJoinReusesTheRest(t *testing.T) {
	before, after := topologytest.Scale(20, 10), topologytest.Scale(21, 10)
	joined := after.Nodes[20].Name
	var memo Memo
	first, err := memo.CompileWith(before, before.Nodes[0].Name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	next, err := memo.CompileWith(after, after.Nodes[0].Name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := CompileWith(after, after.Nodes[0].Name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffLines(dumpResult(t, want).text, dumpResult(t, next).text); d != "" {
		t.Fatalf("the memo's result differs from a fresh compile's:\n%s", d)
	}
	old := map[model.Model]bool{}
	for _, tbl := range rows.Tables {
		for _, m := range tbl.Models(first.Rows) {
			old[m] = true
		}
	}
	// The identities of the new node's rows, and then the parents that list them.
	naming := map[string]bool{}
	for _, tbl := range rows.Tables {
		for _, m := range tbl.Models(next.Rows) {
			if ids := rowExternalIDs(m); ids[rows.NodeKey] == joined {
				naming[m.(uuidRow).GetUUID()] = true
			}
		}
	}
	var reused, fresh, parents int
	for _, tbl := range rows.Tables {
		for _, m := range tbl.Models(next.Rows) {
			id := m.(uuidRow).GetUUID()
			switch {
			case old[m]:
				reused++
			case naming[id]:
				fresh++
			case listsAny(tbl, m, naming):
				fresh++
				parents++
			default:
				t.Errorf("%s %s is a new row, yet it neither names node %s nor lists a row that does", tbl.Name(), id, joined)
			}
		}
	}
	t.Logf("%d rows reused, %d new (%d of them parents)", reused, fresh, parents)
	if parents == 0 || fresh-parents == 0 {
		t.Errorf("node %s joining made %d new rows and %d new parents", joined, fresh-parents, parents)
	}
}

func rowExternalIDs(m model.Model) map[string]string {
	return m.(interface{ GetExternalIDs() map[string]string }).GetExternalIDs()
}

// listsAny reports whether row m of table tbl refers to any of ids.
func listsAny(tbl rows.Table, m model.Model, ids map[string]bool) bool {
	for i := range tbl.Refs() {
		if slices.ContainsFunc(*tbl.RefField(m, i), func(id string) bool { return ids[id] }) {
			return true
		}
	}
	return false
}
