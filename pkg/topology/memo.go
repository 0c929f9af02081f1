package topology

import (
	"cmp"
	"maps"
	"net/netip"
	"reflect"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Memo is what a zone's compile leaves for the next compile of the same zone, so that
// a small change (a node joining or leaving, one network changing) is compiled in a
// fraction of a whole compile and gives the reconciler the very rows it applied last
// time wherever their content did not change: the reconciler passes over such a row
// without comparing it (ovn.Reconciler.Reconcile).
//
// It reuses three ways, each checked, none trusted:
//
//   - Pieces. The rows of a network that depend on one remote node (its transit switch
//     or transit router port and the routes to it, its legacy gateway port) or on one
//     remote pod (its port on a Layer2 switch), and the connect router's rows of one
//     remote node's link, are kept with what they were derived from: the node's or
//     pod's fields the piece reads. Where those are unchanged, and so are the network
//     (the connect, for a link), the zone's node, the configuration and the Layer2
//     topology, the piece's rows are emitted again as they are, without being built.
//   - Replay. A network whose rows outside its loops over the remote nodes and pods
//     read nothing that changed is not built: its loops run again and their rows take
//     the place of the last compile's (replayNetwork).
//   - Interning. Every other row is built as in a compile without a memo and then
//     replaced by the last compile's row of the same identity when the two are equal
//     (rows.Table.Same and equal references). A rebuilt piece's rows are interned
//     against the last compile's piece of the same node or pod.
//
// Rows handed out in a Result are never modified afterwards, by this compile or a later
// one: a network router a ClusterNetworkConnect adds ports or policies to is copied
// first (networkRouters). A Memo's content is never modified either, so a copy of a
// Memo (a value) is a snapshot the original's later compiles leave alone. The zero
// value holds nothing; a Memo serves one compile at a time.
type Memo struct {
	last *memoState
}

// CompileWith is the package's CompileWith, reusing what the memo's last compile
// emitted; the memo then holds this compile. A compile that fails (the node is not in
// the state) leaves the memo as it was.
func (m *Memo) CompileWith(st *cluster.State, nodeName string, opts Options) (*Result, error) {
	res, next, err := compile(st, nodeName, opts, m.last, true)
	if err != nil {
		return nil, err
	}
	m.last = next
	return res, nil
}

// memoState is one compile's record. It is complete when the compile returns and never
// changes after.
type memoState struct {
	// The zone-wide inputs (sameZone).
	node   string
	config cluster.Config
	layer2 Layer2Topology
	// nodes are the state's nodes: the per-node pieces are kept by their index.
	nodes []*cluster.Node
	// What every network's rows outside its loops read beside the network and its local
	// pods: the local node and the options (replayNetwork).
	local *cluster.Node
	hold  bool
	wired map[string][]string
	// networks holds the networks that compiled, by name.
	networks map[string]*networkMemo
	// connects holds every connect, by name.
	connects map[string]*connectMemo
	// routers are the network routers the connects changed (networkRouters), by
	// identity, as the result held them.
	routers map[string]*nbdb.LogicalRouter
}

// sameZone reports whether prev, the last compile, compiled the zone that nodeName's
// compile from st with opts does, from the same zone-wide inputs: the node's name, the
// configuration (which every network's own rows read) and the local Layer2 topology
// (which decides what the loops over the nodes build). Only then are its pieces and
// networks reused.
func sameZone(prev *memoState, st *cluster.State, nodeName string, opts Options) bool {
	return prev != nil && prev.node == nodeName && prev.layer2 == opts.Layer2 && reflect.DeepEqual(prev.config, st.Config)
}

// networkMemo is what one network's compile emitted.
type networkMemo struct {
	// net is the network as compiled: its pieces and rows are reused only while it is
	// deeply equal (networks are rebuilt from the API objects at every compile).
	net *cluster.Network
	// rows are the network's rows outside pieces, by identity.
	rows map[string]model.Model
	// nodes are the remote nodes' pieces of the Layer3 transit switch or the Layer2
	// transit router; gateways the legacy Layer2 nodes' gateway ports (and, in a
	// transit-router zone, the routes to them: legacyPeers), in one list whichever the
	// zone's topology, so that a port the topology change leaves as it was is interned.
	// Both are by the node's index in memoState.nodes, nil where the node has none.
	nodes, gateways []*piece[nodeKey]
	// pods are the remote pods' ports of a Layer2 network, in pod order.
	pods []*piece[podKey]

	// What a replay of the network builds on (replayNetwork), if replayable: its rows as
	// the result holds them, its warnings, its local pods' problems and the calls of its
	// loops; and the local pods it was compiled with.
	replayable bool
	set        rows.Set
	warnings   []string
	podErrors  map[string]error
	loops      []loopRun
	localPods  []*cluster.Pod
}

// connectMemo is what one connect's compile emitted.
type connectMemo struct {
	cc *cluster.Connect
	// rows are the connect's rows outside pieces, by identity.
	rows map[string]model.Model
	// links are, by network, the pieces of other nodes' links, by node index as
	// networkMemo.nodes.
	links map[string][]*piece[nodeKey]
}

// compileMemo is a compile's side of its memo.
type compileMemo struct {
	prev *memoState // the last compile's; nil before the first
	// reuse says prev's pieces and networks may be reused (sameZone).
	reuse bool
	// prevNode is, by node index, the node's index in prev.nodes, -1 for a node prev
	// did not have; sameNode says whether it reads the same there (nodeReadsSame).
	prevNode []int
	sameNode []bool
	// sameLocal says the local node and the options are deeply equal to prev's;
	// anyLegacy that some other node still runs the legacy Layer2 topology.
	sameLocal, anyLegacy bool
}

func newCompileMemo(prev *memoState, st *cluster.State, nodeName string, opts Options) *compileMemo {
	m := &compileMemo{prev: prev, reuse: sameZone(prev, st, nodeName, opts),
		prevNode: make([]int, len(st.Nodes)), sameNode: make([]bool, len(st.Nodes))}
	index := map[string]int{}
	if prev != nil {
		for j, n := range prev.nodes {
			index[n.Name] = j
		}
	}
	for i, n := range st.Nodes {
		j, ok := index[n.Name]
		if !ok {
			j = -1
		}
		m.prevNode[i] = j
	}
	for _, n := range st.Nodes {
		if n.Name != nodeName && !n.Layer2TransitRouter() {
			m.anyLegacy = true
		}
	}
	if !m.reuse {
		return m
	}
	m.sameLocal = reflect.DeepEqual(prev.local, st.Node(nodeName)) && prev.hold == opts.HoldLocalLayer2Pods && reflect.DeepEqual(prev.wired, opts.Wired)
	// Each comparison reads a node's subnets of every network, both compiles' apart in
	// memory: spread them like the networks.
	parallel(len(st.Nodes), func(i int) {
		if j := m.prevNode[i]; j >= 0 {
			m.sameNode[i] = nodeReadsSame(prev.nodes[j], st.Nodes[i])
		}
	})
	return m
}

// podsEqual reports whether two of the local node's pods are deeply equal: all of a
// local pod is its port's, or the isolation port group's.
func podsEqual(a, b *cluster.Pod) bool { return a == b || reflect.DeepEqual(a, b) }

// nodeReadsSame reports whether a and b are the same to every per-node piece: equal in
// each field a nodeKey holds, for every network. Comparing them once per compile spares
// each network its look-ups of the node's subnets and gateway keys. The Layer2 topology
// a node runs is not among them: it decides which list a node's piece is in, and each
// compile's lists hold only that compile's pieces.
func nodeReadsSame(a, b *cluster.Node) bool {
	return a == b || a.Name == b.Name && a.ID == b.ID && a.ChassisID == b.ChassisID &&
		maps.EqualFunc(a.Subnets, b.Subnets, slices.Equal[[]netip.Prefix]) && maps.Equal(a.Layer2GatewayTunnelIDs, b.Layer2GatewayTunnelIDs)
}

// startRecord prepares e to record its network's compile for the memo, against the
// last compile's record of the network. Without a memo it does nothing.
func (c *compiler) startRecord(e *emitter) {
	if c.memo == nil {
		return
	}
	n := e.net
	if c.memo.prev != nil {
		e.prev = c.memo.prev.networks[n.Name]
	}
	reuse := c.memo.reuse && e.prev != nil && reflect.DeepEqual(e.prev.net, n)
	e.rec = &recorder{set: &e.set, warnings: &e.warnings}
	e.localPods = c.localPodsByNetwork[n.Name]
	// The upgrade pieces of a transit-router zone read every node (legacyPeers): a
	// network that has them is built whole.
	e.replayable = !(n.Topology == cluster.Layer2 && c.opts.Layer2 == Layer2TransitRouter && c.memo.anyLegacy)
	e.replay = reuse && e.replayable && e.prev.replayable && c.memo.sameLocal && slices.EqualFunc(e.prev.localPods, e.localPods, podsEqual)
	var old networkMemo
	if e.prev != nil {
		old = *e.prev
	}
	e.nodes = c.newNodePieces(e.rec, old.nodes, reuse)
	e.gateways = c.newNodePieces(e.rec, old.gateways, reuse)
	e.remotePods = &podPieces{rec: e.rec, old: old.pods, reuse: reuse, next: make([]*piece[podKey], 0, len(c.podsByNetwork[n.Name]))}
}

// finishRecord interns the network's rows outside pieces and keeps the record.
func (e *emitter) finishRecord() {
	if e.rec == nil {
		return
	}
	var prevRows map[string]model.Model
	if e.prev != nil {
		prevRows = e.prev.rows
	}
	e.recorded = &networkMemo{net: e.net, rows: e.rec.intern(prevRows), nodes: e.nodes.next, gateways: e.gateways.next, pods: e.remotePods.next,
		replayable: e.replayable, set: e.set, warnings: e.warnings, podErrors: e.pods, loops: e.loops, localPods: e.localPods}
}

// loopKind names a loop over a network's remote nodes or pods.
type loopKind int

const (
	loopTransitSwitch  loopKind = iota // transitSwitchRemotes
	loopTransitRouter                  // transitRouterPeers
	loopLegacyGateways                 // legacyGateways
	loopRemotePods                     // remotePodPorts
)

// loopRun is one call of a loop as a compile made it: where its rows lie in the
// network's tables and warnings, its parents as built (the switch its switch ports
// belong to, the router its router ports and routes belong to; nil if none), and where
// the references to its rows lie in their lists.
type loopRun struct {
	kind                       loopKind
	from, to                   mark
	ls                         *nbdb.LogicalSwitch
	lr                         *nbdb.LogicalRouter
	lsPorts, lrPorts, lrRoutes [2]int
}

// loop calls f, which runs a loop over e's network's remote nodes or pods whose switch
// ports belong to ls and router ports and routes to lr, and records the call.
func (e *emitter) loop(kind loopKind, ls *nbdb.LogicalSwitch, lr *nbdb.LogicalRouter, f func() error) error {
	if e.rec == nil {
		return f()
	}
	run := loopRun{kind: kind, from: e.rec.mark(), ls: ls, lr: lr}
	run.lsPorts[0], run.lrPorts[0], run.lrRoutes[0] = refLens(ls, lr)
	if err := f(); err != nil {
		return err
	}
	run.to = e.rec.mark()
	run.lsPorts[1], run.lrPorts[1], run.lrRoutes[1] = refLens(ls, lr)
	e.loops = append(e.loops, run)
	return nil
}

func refLens(ls *nbdb.LogicalSwitch, lr *nbdb.LogicalRouter) (lsPorts, lrPorts, lrRoutes int) {
	if ls != nil {
		lsPorts = len(ls.Ports)
	}
	if lr != nil {
		lrPorts, lrRoutes = len(lr.Ports), len(lr.StaticRoutes)
	}
	return lsPorts, lrPorts, lrRoutes
}

// replayNetwork compiles e's network from the last compile's record of it when all it
// reads outside its loops over the remote nodes and pods is unchanged (startRecord):
// the network, the zone's node, the options and configuration, the local pods. Its
// output is the last compile's, in order, with only the loops run again where theirs
// ran: their parents are copies of the last compile's as built, whose references
// outside the loops are copied too, and the copies take the last parents' places in
// the tables (finishRecord interns them back where nothing changed).
func (c *compiler) replayNetwork(e *emitter) error {
	prev := e.prev
	n, nm := e.net, namesOf(e.net)
	// The tables the loops do not emit into hold the last compile's rows, in arrays of
	// e's own: interning writes into them.
	own := prev.set
	own.SwitchPorts, own.RouterPorts, own.Routes = nil, nil, nil
	e.set = rows.Set{}
	e.set.Append(&own)
	e.set.SwitchPorts = make([]*nbdb.LogicalSwitchPort, 0, len(prev.set.SwitchPorts)+1)
	e.set.RouterPorts = make([]*nbdb.LogicalRouterPort, 0, len(prev.set.RouterPorts)+1)
	e.set.Routes = make([]*nbdb.LogicalRouterStaticRoute, 0, len(prev.set.Routes)+len(n.Subnets)+len(n.JoinSubnets))
	e.warnings, e.pods = make([]string, 0, len(prev.warnings)), prev.podErrors
	var done mark // how much of the last compile's tables and warnings is copied
	copyUpTo := func(m mark) {
		e.set.SwitchPorts = append(e.set.SwitchPorts, prev.set.SwitchPorts[done.tables.switchPorts:m.tables.switchPorts]...)
		e.set.RouterPorts = append(e.set.RouterPorts, prev.set.RouterPorts[done.tables.routerPorts:m.tables.routerPorts]...)
		e.set.Routes = append(e.set.Routes, prev.set.Routes[done.tables.routes:m.tables.routes]...)
		e.warnings = append(e.warnings, prev.warnings[done.warnings:m.warnings]...)
	}
	// The parents' copies, each with how much of the last lists is copied into it.
	switches := map[*nbdb.LogicalSwitch]*parentCopy[nbdb.LogicalSwitch]{}
	routers := map[*nbdb.LogicalRouter]*parentCopy[nbdb.LogicalRouter]{}
	for _, run := range prev.loops {
		copyUpTo(run.from)
		done = run.to
		var ls *nbdb.LogicalSwitch
		if run.ls != nil {
			p := switches[run.ls]
			if p == nil {
				p = &parentCopy[nbdb.LogicalSwitch]{row: *run.ls}
				p.row.Ports = make([]string, 0, len(run.ls.Ports)+1)
				switches[run.ls] = p
			}
			p.row.Ports = append(p.row.Ports, run.ls.Ports[p.ports:run.lsPorts[0]]...)
			p.ports = run.lsPorts[1]
			ls = &p.row
		}
		var lr *nbdb.LogicalRouter
		if run.lr != nil {
			p := routers[run.lr]
			if p == nil {
				p = &parentCopy[nbdb.LogicalRouter]{row: *run.lr}
				p.row.Ports = make([]string, 0, len(run.lr.Ports)+1)
				p.row.StaticRoutes = make([]string, 0, len(run.lr.StaticRoutes)+len(n.Subnets)+len(n.JoinSubnets))
				routers[run.lr] = p
			}
			p.row.Ports = append(p.row.Ports, run.lr.Ports[p.ports:run.lrPorts[0]]...)
			p.row.StaticRoutes = append(p.row.StaticRoutes, run.lr.StaticRoutes[p.routes:run.lrRoutes[0]]...)
			p.ports, p.routes = run.lrPorts[1], run.lrRoutes[1]
			lr = &p.row
		}
		err := e.loop(run.kind, ls, lr, func() error {
			switch run.kind {
			case loopTransitSwitch:
				return c.transitSwitchRemotes(e, n, nm, ls, lr)
			case loopTransitRouter:
				_, _, _, err := c.transitRouterPeers(e, n, nm, lr)
				return err
			case loopLegacyGateways:
				return c.legacyGateways(e, n, nm, ls)
			default:
				c.remotePodPorts(e, n, ls)
				return nil
			}
		})
		if err != nil {
			return err
		}
	}
	copyUpTo(mark{pieceTables{len(prev.set.SwitchPorts), len(prev.set.RouterPorts), len(prev.set.Routes)}, len(prev.warnings)})
	for last, p := range switches {
		p.row.Ports = append(p.row.Ports, last.Ports[p.ports:]...)
		replaceRow(e.set.Switches, &p.row)
	}
	for last, p := range routers {
		p.row.Ports = append(p.row.Ports, last.Ports[p.ports:]...)
		p.row.StaticRoutes = append(p.row.StaticRoutes, last.StaticRoutes[p.routes:]...)
		replaceRow(e.set.Routers, &p.row)
	}
	return nil
}

// parentCopy is a copy of a parent of the last compile's loops being filled with its
// references: the last lists are copied up to ports and routes.
type parentCopy[T any] struct {
	row           T
	ports, routes int
}

// replaceRow puts row in the place of the row of its identity in table.
func replaceRow[P uuidRow](table []P, row P) {
	if i := slices.IndexFunc(table, func(r P) bool { return r.GetUUID() == row.GetUUID() }); i >= 0 {
		table[i] = row
	}
}

// nodeKey is what a piece reads of its remote node. A kind of piece fills only what it
// reads; the rest stays zero in both keys it compares.
type nodeKey struct {
	name, chassis string
	id            int
	subnets       []netip.Prefix // the node's subnets of the network (Layer3)
	gatewayKey    int            // its gateway port's tunnel key on the network (legacy Layer2)
	hasGatewayKey bool
}

func (k nodeKey) equal(o nodeKey) bool {
	return k.name == o.name && k.chassis == o.chassis && k.id == o.id && slices.Equal(k.subnets, o.subnets) &&
		k.gatewayKey == o.gatewayKey && k.hasGatewayKey == o.hasGatewayKey
}

// podKey is what a remote pod's piece reads: the pod's interface on the network and its
// node's chassis.
type podKey struct {
	namespace, name, node string
	chassis               string // the pod's node's; "" if that node is not in the state
	hasNode               bool
	mac                   string
	ips                   []netip.Prefix
	tunnelID              int
}

func (k podKey) equal(o podKey) bool {
	return k.namespace == o.namespace && k.name == o.name && k.node == o.node && k.chassis == o.chassis &&
		k.hasNode == o.hasNode && k.mac == o.mac && slices.Equal(k.ips, o.ips) && k.tunnelID == o.tunnelID
}

// piece is the rows one remote node or pod contributes to a network or connect, with
// what they were derived from (a nodeKey or a podKey). Its switch ports belong to one
// switch, its router ports and routes to one router, in the order these list them.
type piece[K interface{ equal(K) bool }] struct {
	key K
	pieceRows
}

type pieceRows struct {
	switchPorts []*nbdb.LogicalSwitchPort
	routerPorts []*nbdb.LogicalRouterPort
	routes      []*nbdb.LogicalRouterStaticRoute
	// ids are the rows' identities, switch ports', router ports', then routes': what
	// their parents list. Kept apart, a replay copies them without reading each row.
	ids      []string
	warnings []string
}

// nodePieces are one kind of per-node pieces: the last compile's, by that compile's
// node index, and this compile's, by this one's. Nil when the compile has no memo.
type nodePieces struct {
	rec  *recorder
	memo *compileMemo
	old  []*piece[nodeKey]
	// reuse says the old pieces were derived from the same network (and connect) and
	// zone-wide inputs, so a piece whose node reads the same may be emitted again.
	reuse bool
	next  []*piece[nodeKey]
}

func (c *compiler) newNodePieces(rec *recorder, old []*piece[nodeKey], reuse bool) *nodePieces {
	return &nodePieces{rec: rec, memo: c.memo, old: old, reuse: reuse}
}

// emit emits the piece of the state's node i with emitPiece; keyOf gives what it reads
// of the node.
func (l *nodePieces) emit(i int, keyOf func() nodeKey, ls *nbdb.LogicalSwitch, lr *nbdb.LogicalRouter, build func() error) error {
	if l == nil {
		return build()
	}
	var old *piece[nodeKey]
	if j := l.memo.prevNode[i]; j >= 0 && j < len(l.old) {
		old = l.old[j]
	}
	p, err := emitPiece(l.rec, l.reuse, old, l.memo.sameNode[i], keyOf, ls, lr, build)
	if l.next == nil {
		l.next = make([]*piece[nodeKey], len(l.memo.sameNode))
	}
	l.next[i] = p
	return err
}

// podPieces are the remote pods' pieces of a network, the last compile's and this
// one's, in pod order. Nil when the compile has no memo.
type podPieces struct {
	rec   *recorder
	old   []*piece[podKey]
	reuse bool
	next  []*piece[podKey]
}

// emit emits the piece of the pod key names with emitPiece. The pods must come in
// the state's order (namespace, then name), which the old pieces are in: were they
// not, a piece would only be missed, never mistaken.
func (l *podPieces) emit(key podKey, ls *nbdb.LogicalSwitch, build func() error) error {
	if l == nil {
		return build()
	}
	var old *piece[podKey]
	for len(l.old) > 0 {
		o := l.old[0]
		c := cmp.Or(cmp.Compare(o.key.namespace, key.namespace), cmp.Compare(o.key.name, key.name))
		if c > 0 {
			break
		}
		l.old = l.old[1:]
		if c == 0 {
			old = o
			break
		}
	}
	p, err := emitPiece(l.rec, l.reuse, old, false, func() podKey { return key }, ls, nil, build)
	if p != nil {
		l.next = append(l.next, p)
	}
	return err
}

// recorder is the memo's side of an emitter: the set and warnings it emits into, and
// where pieces lie in the set, so that only the other rows are interned at the end.
type recorder struct {
	set      *rows.Set
	warnings *[]string
	spans    []span
}

// mark is where the tables pieces emit into and the warnings of a recorder end.
type mark struct {
	tables   pieceTables
	warnings int
}

// pieceTables are positions in the tables pieces emit into.
type pieceTables struct{ switchPorts, routerPorts, routes int }

// span is where a run of pieces lies in the tables.
type span struct{ from, to pieceTables }

func (r *recorder) mark() mark {
	return mark{pieceTables{len(r.set.SwitchPorts), len(r.set.RouterPorts), len(r.set.Routes)}, len(*r.warnings)}
}

// addSpan notes that a piece lies between from and to. Pieces come in runs (a loop
// over the nodes emits nothing else), and a run is one span.
func (r *recorder) addSpan(from, to mark) {
	if n := len(r.spans); n > 0 && r.spans[n-1].to == from.tables {
		r.spans[n-1].to = to.tables
		return
	}
	r.spans = append(r.spans, span{from.tables, to.tables})
}

// emitPiece emits the rows of one remote node or pod into r, and returns the piece to
// keep for the next compile. Those rows are old's, the last compile's piece of the same
// node or pod, if reuse allows and the node or pod reads the same: same says so
// without a look (the node reads the same as then), else keyOf gives what the piece
// reads now. Else they are those build emits, a new piece, whose rows equal to old's
// are old's. ls is the switch the piece's switch ports belong to, lr the router its
// router ports and routes belong to.
func emitPiece[K interface{ equal(K) bool }](r *recorder, reuse bool, old *piece[K], same bool, keyOf func() K,
	ls *nbdb.LogicalSwitch, lr *nbdb.LogicalRouter, build func() error) (*piece[K], error) {
	from := r.mark()
	var key K
	if old != nil && reuse {
		if !same {
			key = keyOf()
		}
		if same || old.key.equal(key) {
			r.replay(&old.pieceRows, ls, lr)
			r.addSpan(from, r.mark())
			return old, nil
		}
	} else {
		key = keyOf()
	}
	if err := build(); err != nil {
		return nil, err
	}
	to := r.mark()
	f, t := from.tables, to.tables
	p := &piece[K]{key: key, pieceRows: pieceRows{
		switchPorts: slices.Clone(r.set.SwitchPorts[f.switchPorts:t.switchPorts]),
		routerPorts: slices.Clone(r.set.RouterPorts[f.routerPorts:t.routerPorts]),
		routes:      slices.Clone(r.set.Routes[f.routes:t.routes]),
		ids:         make([]string, 0, t.switchPorts-f.switchPorts+t.routerPorts-f.routerPorts+t.routes-f.routes),
		warnings:    slices.Clone((*r.warnings)[from.warnings:to.warnings]),
	}}
	for _, lsp := range p.switchPorts {
		p.ids = append(p.ids, lsp.UUID)
	}
	for _, lrp := range p.routerPorts {
		p.ids = append(p.ids, lrp.UUID)
	}
	for _, route := range p.routes {
		p.ids = append(p.ids, route.UUID)
	}
	if old != nil {
		// The node or pod changed, but not necessarily every row of it.
		internPieceRows(switchPortTable, p.switchPorts, old.switchPorts, r.set.SwitchPorts[f.switchPorts:])
		internPieceRows(routerPortTable, p.routerPorts, old.routerPorts, r.set.RouterPorts[f.routerPorts:])
		internPieceRows(routeTable, p.routes, old.routes, r.set.Routes[f.routes:])
	}
	r.addSpan(from, to)
	return p, nil
}

// replay emits a piece's rows again, as building it would have: each row appended to
// its table and its identity to its parent's references.
func (r *recorder) replay(p *pieceRows, ls *nbdb.LogicalSwitch, lr *nbdb.LogicalRouter) {
	s, ids := r.set, p.ids
	if len(p.switchPorts) > 0 {
		s.SwitchPorts = append(s.SwitchPorts, p.switchPorts...)
		ls.Ports = append(ls.Ports, ids[:len(p.switchPorts)]...)
		ids = ids[len(p.switchPorts):]
	}
	if len(p.routerPorts) > 0 {
		s.RouterPorts = append(s.RouterPorts, p.routerPorts...)
		lr.Ports = append(lr.Ports, ids[:len(p.routerPorts)]...)
		ids = ids[len(p.routerPorts):]
	}
	if len(p.routes) > 0 {
		s.Routes = append(s.Routes, p.routes...)
		lr.StaticRoutes = append(lr.StaticRoutes, ids...)
	}
	if len(p.warnings) > 0 {
		*r.warnings = append(*r.warnings, p.warnings...)
	}
}

// uuidRow is a row of a modelled table.
type uuidRow interface {
	model.Model
	GetUUID() string
}

// internPieceRows replaces each of a rebuilt piece's rows that equals its old piece's
// row of the same identity by that row, in the piece and in the set (inSet holds the
// piece's rows from its first).
func internPieceRows[P uuidRow](t rows.Table, rs, old, inSet []P) {
	for i, r := range rs {
		for _, o := range old {
			if o.GetUUID() == r.GetUUID() {
				if sameRow(t, o, r) {
					rs[i], inSet[i] = o, o
				}
				break
			}
		}
	}
}

// intern replaces every row of the recorder's set outside pieces that equals the row of
// the same identity in prev (the last compile's rows outside pieces) by that row, and
// returns those rows by identity, for the next compile.
func (r *recorder) intern(prev map[string]model.Model) map[string]model.Model {
	s := r.set
	next := make(map[string]model.Model, len(prev))
	spans := func(of func(pieceTables) int) [][2]int {
		out := make([][2]int, len(r.spans))
		for i, sp := range r.spans {
			out[i] = [2]int{of(sp.from), of(sp.to)}
		}
		return out
	}
	internRows(switchTable, s.Switches, nil, prev, next)
	internRows(switchPortTable, s.SwitchPorts, spans(func(t pieceTables) int { return t.switchPorts }), prev, next)
	internRows(routerTable, s.Routers, nil, prev, next)
	internRows(routerPortTable, s.RouterPorts, spans(func(t pieceTables) int { return t.routerPorts }), prev, next)
	internRows(routeTable, s.Routes, spans(func(t pieceTables) int { return t.routes }), prev, next)
	internRows(policyTable, s.Policies, nil, prev, next)
	internRows(natTable, s.NATs, nil, prev, next)
	internRows(gatewayChassisTable, s.GatewayChassis, nil, prev, next)
	internRows(aclTable, s.ACLs, nil, prev, next)
	internRows(portGroupTable, s.PortGroups, nil, prev, next)
	internRows(meterTable, s.Meters, nil, prev, next)
	internRows(meterBandTable, s.MeterBands, nil, prev, next)
	return next
}

// internRows interns rs but the ranges in skip (ascending), and records them in next.
func internRows[P interface {
	uuidRow
	comparable
}](t rows.Table, rs []P, skip [][2]int, prev, next map[string]model.Model) {
	i := 0
	for _, sk := range append(skip, [2]int{len(rs), len(rs)}) {
		for ; i < sk[0]; i++ {
			id := rs[i].GetUUID()
			// A replay holds the last compile's rows themselves.
			if p, ok := prev[id].(P); ok && p != rs[i] && sameRow(t, p, rs[i]) {
				rs[i] = p
			}
			next[id] = rs[i]
		}
		i = sk[1]
	}
}

// sameRow reports whether a and b, rows of t with one identity, hold the same values in
// every column ovnk writes: the reconciler would find nothing to change from one to
// the other.
func sameRow(t rows.Table, a, b model.Model) bool {
	if !t.Same(a, b) {
		return false
	}
	for i := range t.Refs() {
		x, y := *t.RefField(a, i), *t.RefField(b, i)
		if !slices.Equal(x, y) && !rows.SameSet(x, y) {
			return false
		}
	}
	return true
}

// The registry's entries of the tables the compiler emits, by the rows.Set field each
// holds.
var (
	switchTable         = tableNamed("Logical_Switch")
	switchPortTable     = tableNamed("Logical_Switch_Port")
	routerTable         = tableNamed("Logical_Router")
	routerPortTable     = tableNamed("Logical_Router_Port")
	routeTable          = tableNamed("Logical_Router_Static_Route")
	policyTable         = tableNamed("Logical_Router_Policy")
	natTable            = tableNamed("NAT")
	gatewayChassisTable = tableNamed("Gateway_Chassis")
	aclTable            = tableNamed("ACL")
	portGroupTable      = tableNamed("Port_Group")
	meterTable          = tableNamed("Meter")
	meterBandTable      = tableNamed("Meter_Band")
)

func tableNamed(name string) rows.Table {
	for _, t := range rows.Tables {
		if t.Name() == name {
			return t
		}
	}
	panic("topology: no table " + name + " in the rows registry")
}

// networkRouters are the result's routers, by name, for the connects to add ports and
// policies to the networks' routers. Those rows are handed out already (and may be the
// last compile's), so edit copies a router on its first change in a compile and puts
// the copy in its place in the result.
type networkRouters struct {
	set    *rows.Set
	index  map[string]int  // position in set.Routers, by name
	edited map[string]bool // the routers copied by this compile
}

func newNetworkRouters(set *rows.Set) *networkRouters {
	r := &networkRouters{set: set, index: make(map[string]int, len(set.Routers)), edited: map[string]bool{}}
	for i, lr := range set.Routers {
		r.index[lr.Name] = i
	}
	return r
}

// has reports whether the result has a router of that name.
func (r *networkRouters) has(name string) bool {
	_, ok := r.index[name]
	return ok
}

// edit returns the result's router of that name to change, a copy of its own.
func (r *networkRouters) edit(name string) *nbdb.LogicalRouter {
	i := r.index[name]
	lr := r.set.Routers[i]
	if r.edited[name] {
		return lr
	}
	c := *lr
	// Clipped, so that appending never writes into the original's arrays, which
	// another copy (or a later compile's) would share.
	c.Ports, c.Policies = slices.Clip(c.Ports), slices.Clip(c.Policies)
	c.StaticRoutes, c.Nat = slices.Clip(c.StaticRoutes), slices.Clip(c.Nat)
	r.set.Routers[i] = &c
	r.edited[name] = true
	return &c
}

// intern replaces each edited router equal to the last compile's edited router of the
// same identity (prev) by that one, and returns the edited routers by identity.
func (r *networkRouters) intern(prev map[string]*nbdb.LogicalRouter) map[string]*nbdb.LogicalRouter {
	next := make(map[string]*nbdb.LogicalRouter, len(r.edited))
	for name := range r.edited {
		i := r.index[name]
		lr := r.set.Routers[i]
		if p := prev[lr.UUID]; p != nil && sameRow(routerTable, p, lr) {
			r.set.Routers[i] = p
		}
		next[lr.UUID] = r.set.Routers[i]
	}
	return next
}
