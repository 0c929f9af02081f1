package topology

import (
	"net/netip"
	"strconv"
	"sync"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// derivations memoizes, for one compile, the addresses derived from every node's id in
// a transit or join subnet, with the texts rows hold of them. The networks of a cluster
// mostly share the default transit and join subnets, so a zone would otherwise derive
// and print the same addresses once per network and node: 250,000 times at 500
// networks × 500 nodes. Networks compile concurrently; each table is derived once.
type derivations struct {
	nodes  []*cluster.Node
	mu     sync.Mutex
	tables map[derivationKey]*derivedTable
}

// derivation names the alloc function a table holds the results of.
type derivation int

const (
	deriveTransitSwitchIP derivation = iota // alloc.TransitSwitchIP
	deriveJoinIP                            // alloc.GatewayRouterJoinIP
	deriveTransitPeers                      // alloc.TransitPeers
)

type derivationKey struct {
	of     derivation
	subnet netip.Prefix
}

// derivedTable holds a derivation in one subnet for every node, in the state's order.
type derivedTable struct {
	once   sync.Once
	byNode []derived
}

// derived is one node's derived address; for deriveTransitPeers, addr is the transit
// router's side of the pair and peer the gateway router's.
type derived struct {
	addr, peer derivedAddr
	err        error
}

// derivedAddr is an address with the texts rows hold of it.
type derivedAddr struct {
	prefix netip.Prefix
	text   string // with its length: "100.88.0.3/16"
	ip     string // without: "100.88.0.3"
	host   string // as a host prefix: "100.88.0.3/32"
	mac    string // the MAC derived from it
}

func newDerivations(nodes []*cluster.Node) *derivations {
	return &derivations{nodes: nodes, tables: map[derivationKey]*derivedTable{}}
}

// of returns, per subnet of subnets, the table of derivation of in it.
func (d *derivations) of(of derivation, subnets []netip.Prefix) [][]derived {
	out := make([][]derived, len(subnets))
	for i, s := range subnets {
		out[i] = d.table(of, s)
	}
	return out
}

func (d *derivations) table(of derivation, subnet netip.Prefix) []derived {
	key := derivationKey{of, subnet}
	d.mu.Lock()
	t, ok := d.tables[key]
	if !ok {
		t = &derivedTable{}
		d.tables[key] = t
	}
	d.mu.Unlock()
	t.once.Do(func() {
		t.byNode = make([]derived, len(d.nodes))
		for i, node := range d.nodes {
			t.byNode[i] = derive(of, subnet, node.ID)
		}
	})
	return t.byNode
}

func derive(of derivation, subnet netip.Prefix, nodeID int) derived {
	var p, peer netip.Prefix
	var err error
	switch of {
	case deriveTransitSwitchIP:
		p, err = alloc.TransitSwitchIP(subnet, nodeID)
	case deriveJoinIP:
		p, err = alloc.GatewayRouterJoinIP(subnet, nodeID)
	case deriveTransitPeers:
		p, peer, err = alloc.TransitPeers(subnet, nodeID)
	}
	if err != nil {
		return derived{err: err}
	}
	d := derived{addr: textsOf(p)}
	if peer.IsValid() {
		d.peer = textsOf(peer)
	}
	return d
}

func textsOf(p netip.Prefix) derivedAddr {
	return derivedAddr{prefix: p, text: p.String(), ip: p.Addr().String(), host: hostPrefix(p.Addr()), mac: alloc.MACFromIP(p.Addr()).String()}
}

// nodeDerived gathers node i's entries of tables into buf (reused between nodes, so the
// loops over nodes allocate nothing), or returns the first error among them.
func nodeDerived(buf []*derived, tables [][]derived, i int) ([]*derived, error) {
	buf = buf[:0]
	for _, t := range tables {
		if t[i].err != nil {
			return buf, t[i].err
		}
		buf = append(buf, &t[i])
	}
	return buf, nil
}

// derivedOfFamily returns the first of ds whose address is of the family v6, as
// addrOfFamily does of plain addresses.
func derivedOfFamily(ds []*derived, v6 bool) (*derived, bool) {
	for _, d := range ds {
		if d.addr.prefix.Addr().Is6() == v6 {
			return d, true
		}
	}
	return nil, false
}

// nodeTexts are a node's own numbers as the options of its ports write them.
type nodeTexts struct {
	idOption string // nodeIDOption(ID)
	peerKey  string // the transit router peer port's tunnel key, 10 + ID
}

func textsOfNodes(nodes []*cluster.Node) []nodeTexts {
	out := make([]nodeTexts, len(nodes))
	for i, n := range nodes {
		out[i] = nodeTexts{idOption: nodeIDOption(n.ID), peerKey: strconv.Itoa(transitRouterPeerKeyBase + n.ID)}
	}
	return out
}
