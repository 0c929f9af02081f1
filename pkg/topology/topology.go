// Package topology compiles the cluster's intent into the OVN Northbound rows one zone
// (one node) must contain. It is pure: Compile reads a cluster.State and returns rows,
// talking to no server, so the same inputs always give the same rows, in every zone.
//
// One file per concern: layer3.go (the default network and Layer3 user-defined
// networks), layer2.go (Layer2 networks with a transit router, OKEP-5094), gateway.go
// (the gateway router and external switch both share), policies.go, pods.go, and
// connect.go (ClusterNetworkConnects, OKEP-5224).
package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Result is a zone's desired NB content.
type Result struct {
	// Rows holds every row ovnk wants in the zone, in an order fixed by the state (networks
	// and nodes by name), so equal states give equal sets. Each row carries
	// rows.OwnerController and its identity (rows.IDKey) in external_ids; references between rows
	// hold identities.
	Rows *rows.Set
	// NotCompiled names the networks this zone could not compile, and why. Their rows are
	// absent from Rows; the reconciler must leave such a network's existing rows alone
	// rather than delete them, so one bad network never disturbs what already works.
	NotCompiled map[string]error
	// Connects names every ClusterNetworkConnect of the state with what this zone left
	// out of it: nil when all of it is compiled, else why not (no tunnel key yet, a
	// network without its block of the connect subnets, a node without a link). What is
	// left out is absent from Rows.
	Connects map[string]error
	// Warnings report what was left out without failing a network: a remote node still
	// waiting for its subnet, a pod whose annotation lacks a tunnel id.
	Warnings []string
	// Pods names, by "namespace/name", the local node's pods whose port on some network
	// this zone could not program, and why (a malformed k8s.ovn.org/pod-networks entry).
	Pods map[string]error
}

// ErrNodeNotReady is wrapped by Compile's error when the node is not in the state yet:
// it still lacks the id or chassis OVN needs, which will come.
var ErrNodeNotReady = errors.New("node not ready for OVN")

// Layer2Topology is how a zone builds its own node's side of the Layer2 networks.
type Layer2Topology int

const (
	// Layer2TransitRouter is OKEP-5094's topology: a transit router holds the pods'
	// gateway, the same on every node ("2.0" in k8s.ovn.org/layer2-topology-version).
	Layer2TransitRouter Layer2Topology = iota
	// Layer2Legacy is the topology before it: each node's gateway router is attached to
	// the switch and is the gateway of the pods on its node.
	Layer2Legacy
)

// String names the topology for logs and errors.
func (t Layer2Topology) String() string {
	if t == Layer2Legacy {
		return "legacy"
	}
	return "transit-router"
}

// Options say how the local node's zone is built where the cluster state alone does
// not: the agent decides them during the Layer2 topology upgrade.
type Options struct {
	// Layer2 is the local node's Layer2 topology. Other nodes' topologies come from
	// their k8s.ovn.org/layer2-topology-version annotations.
	Layer2 Layer2Topology
	// HoldLocalLayer2Pods leaves out the local node's pods on Layer2 networks that are
	// not wired yet (see Wired): the node is converting to the transit-router topology,
	// and new pods wait for it.
	HoldLocalLayer2Pods bool
	// Wired are the local pods' ports the zone already holds, by name, with their
	// addresses (a pod recreated under the same name has others): a held pod whose port
	// exists keeps it. The agent reads them from the Northbound before compiling.
	Wired map[string][]string
}

// optionsFor returns the options a zone is built with once nothing is in progress:
// the local node's Layer2 topology as its annotation says.
func optionsFor(node *cluster.Node) Options {
	if node.Layer2TransitRouter() {
		return Options{Layer2: Layer2TransitRouter}
	}
	return Options{Layer2: Layer2Legacy}
}

// Compile returns the rows of nodeName's zone, with the options its annotations imply
// (optionsFor). It fails only when the node itself is not in the state; every network's
// problem is reported in Result.NotCompiled instead.
func Compile(st *cluster.State, nodeName string) (*Result, error) {
	local := st.Node(nodeName)
	if local == nil {
		return nil, NodeNotReadyError(nodeName)
	}
	return CompileWith(st, nodeName, optionsFor(local))
}

// CompileWith is Compile with explicit options.
func CompileWith(st *cluster.State, nodeName string, opts Options) (*Result, error) {
	res, _, err := compile(st, nodeName, opts, nil, false)
	return res, err
}

// compile compiles nodeName's zone. With record, it reuses what prev (the memo's last
// compile, nil if none) emitted, and returns this compile's record for the next.
func compile(st *cluster.State, nodeName string, opts Options, prev *memoState, record bool) (*Result, *memoState, error) {
	c := &compiler{state: st, opts: opts, local: st.Node(nodeName), podsByNetwork: map[string][]*cluster.Pod{}, localPodsByNetwork: map[string][]*cluster.Pod{},
		derived: newDerivations(st.Nodes), nodeTexts: textsOfNodes(st.Nodes), nodeIndex: make(map[string]int, len(st.Nodes))}
	if c.local == nil {
		return nil, nil, NodeNotReadyError(nodeName)
	}
	for i, n := range st.Nodes {
		c.nodeIndex[n.Name] = i
	}
	for _, p := range st.Pods {
		for network := range p.Networks {
			c.podsByNetwork[network] = append(c.podsByNetwork[network], p)
			if p.Node == nodeName {
				c.localPodsByNetwork[network] = append(c.localPodsByNetwork[network], p)
			}
		}
	}
	var next *memoState
	if record {
		c.memo = newCompileMemo(prev, st, nodeName, opts)
		next = &memoState{node: nodeName, config: st.Config, layer2: opts.Layer2, nodes: st.Nodes,
			local: c.local, hold: opts.HoldLocalLayer2Pods, wired: opts.Wired,
			networks: make(map[string]*networkMemo, len(st.Networks)), connects: make(map[string]*connectMemo, len(st.Connects))}
	}
	res := &Result{Rows: &rows.Set{}, NotCompiled: map[string]error{}, Connects: map[string]error{}, Pods: map[string]error{}}
	emitters, errs := c.compileNetworks()
	compiled := make([]*rows.Set, 0, len(emitters))
	for i, n := range st.Networks {
		e := emitters[i]
		if err := errs[i]; err != nil {
			res.NotCompiled[n.Name] = err
			continue
		}
		if next != nil {
			next.networks[n.Name] = e.recorded
		}
		compiled = append(compiled, &e.set)
		res.Warnings = append(res.Warnings, e.warnings...)
		for pod, err := range e.pods {
			res.Pods[pod] = errors.Join(res.Pods[pod], err)
		}
	}
	// Table by table, each grown once rather than at every doubling.
	res.Rows.AppendAll(compiled...)
	c.connects(res, next)
	return res, next, nil
}

// compileNetworks compiles each network of the state into an emitter of its own, on
// as many goroutines as may run at once: a network's compilation only reads the
// compiler (its derivations are safe for concurrent use, the last compile's memo is
// never written) and writes only its emitter. The caller merges the emitters in the
// state's order, so the result is the same whatever the goroutines' timing.
func (c *compiler) compileNetworks() ([]*emitter, []error) {
	networks := c.state.Networks
	emitters := make([]*emitter, len(networks))
	errs := make([]error, len(networks))
	parallel(len(networks), func(i int) {
		e := newEmitter(networks[i])
		c.startRecord(e)
		if e.replay {
			errs[i] = c.replayNetwork(e)
		} else {
			errs[i] = c.network(e, networks[i])
		}
		if errs[i] == nil {
			e.finishRecord()
		}
		emitters[i] = e
	})
	return emitters, errs
}

// parallel calls f with every index below n, on as many goroutines as may run at once,
// and returns when every call has.
func parallel(n int, f func(i int)) {
	var next atomic.Int64 // the next index to call f with
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// NodeNotReadyError is the error, wrapping ErrNodeNotReady, of a node that is not in
// the cluster state yet.
func NodeNotReadyError(nodeName string) error {
	return fmt.Errorf("%w: node %q is not in the cluster state: it may still lack k8s.ovn.org/node-id or k8s.ovn.org/node-chassis-id", ErrNodeNotReady, nodeName)
}

// compiler holds what every network's compilation reads.
type compiler struct {
	state              *cluster.State
	opts               Options
	local              *cluster.Node
	podsByNetwork      map[string][]*cluster.Pod
	localPodsByNetwork map[string][]*cluster.Pod // the local node's pods, by network
	nodeIndex          map[string]int            // by name
	// derived and nodeTexts hold what the nodes' ids give, in the state's node order,
	// derived once for every network.
	derived   *derivations
	nodeTexts []nodeTexts
	// memo is what this compile reuses and records; nil when it has no memo.
	memo *compileMemo
}

func (c *compiler) network(e *emitter, n *cluster.Network) error {
	if n.Role != cluster.Primary {
		return fmt.Errorf("network %s is a %s network: ovnk programs primary networks only", n.Name, n.Role)
	}
	if n.Transport == cluster.NoOverlay {
		return fmt.Errorf("network %s uses transport NoOverlay, which this agent does not program yet", n.Name)
	}
	if len(n.Subnets) == 0 {
		return fmt.Errorf("network %s has no subnets", n.Name)
	}
	switch n.Topology {
	case cluster.Layer3:
		return c.layer3(e, n)
	case cluster.Layer2:
		return c.layer2(e, n)
	}
	return fmt.Errorf("network %s has topology %q: want Layer3 or Layer2", n.Name, n.Topology)
}

// ofFamily returns the prefix of ps in the same IP family as a.
func ofFamily(ps []netip.Prefix, v6 bool) (netip.Prefix, bool) {
	for _, p := range ps {
		if p.Addr().Is6() == v6 {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// addrOfFamily returns the address of as in the requested IP family.
func addrOfFamily(as []netip.Addr, v6 bool) (netip.Addr, bool) {
	for _, a := range as {
		if a.Is6() == v6 {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// hostPrefix is an address as a prefix of its own: upstream writes a route to a join
// IP, and a router port's extra masquerade address, as a /32 (/128).
func hostPrefix(a netip.Addr) string { return netip.PrefixFrom(a, a.BitLen()).String() }

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func subnetCIDRs(n *cluster.Network) []netip.Prefix {
	out := make([]netip.Prefix, len(n.Subnets))
	for i, s := range n.Subnets {
		out[i] = s.CIDR
	}
	return out
}

// subnetAddrs are the addresses the pods' router and management port take in the pods'
// subnets, one of each per subnet: .1 is the gateway, .2 the management port.
type subnetAddrs struct {
	otherConfig map[string]string // the switch's subnet and ipv6_prefix
	gwNetworks  []string          // the gateway addresses with the subnets' lengths
	gwIPs       []netip.Addr
	mgmtIPs     []netip.Addr
}

func podSubnetAddrs(subnets []netip.Prefix) (subnetAddrs, error) {
	a := subnetAddrs{otherConfig: map[string]string{}}
	for _, s := range subnets {
		if s.Addr().Is6() {
			a.otherConfig["ipv6_prefix"] = s.Masked().Addr().String()
		} else {
			a.otherConfig["subnet"] = s.Masked().String()
		}
		gw, err := alloc.NthAddr(s, 1)
		if err != nil {
			return a, fmt.Errorf("gateway of subnet %s: %w", s, err)
		}
		mgmt, err := alloc.NthAddr(s, 2)
		if err != nil {
			return a, fmt.Errorf("management port of subnet %s: %w", s, err)
		}
		a.gwIPs = append(a.gwIPs, gw)
		a.mgmtIPs = append(a.mgmtIPs, mgmt)
		a.gwNetworks = append(a.gwNetworks, netip.PrefixFrom(gw, s.Bits()).String())
	}
	return a, nil
}
