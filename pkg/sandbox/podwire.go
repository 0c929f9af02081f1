package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The sandbox plugs pods into br-int as a CNI plugin would, and tags every port it
// plugs so that it finds exactly its own again: the agent's ports (ovnk.io/owner =
// ovnk-agent) and anyone else's are never touched.
const (
	ownerKey   = "ovnk.io/owner"
	podsOwner  = "ovnk-sandbox"
	podKey     = "ovnk.io/pod"
	integrBr   = "br-int"
	ifaceIDKey = "iface-id"
	// ifaceIDVerKey carries the pod's UID: OVN binds the port only to an interface of
	// this very pod, never to a leftover of an earlier pod of the same name.
	ifaceIDVerKey = "iface-id-ver"
)

// podIface is one network interface of a pod.
type podIface struct {
	Name    string // inside the pod: eth0, ovn-udn1, net1…
	Host    string // the veth's other end, in the node: a br-int port
	IfaceID string // the logical switch port, external_ids:iface-id
	MAC     string
	MTU     int
	IPs     []netip.Prefix
	Routes  []podRoute
}

// podRoute is a route in the pod through one of its interfaces; Via is invalid for a
// route with no next hop.
type podRoute struct {
	Dst netip.Prefix
	Via netip.Addr
}

// podPlan is everything a pod's wiring holds: its namespace and interfaces.
type podPlan struct {
	Ref    string // namespace/name, for messages and the ports' tag
	UID    string
	Netns  string
	Ifaces []podIface
}

// nodeHost wires pods into one node: veths between the node's namespace and the pods',
// ports on the node's br-int.
type nodeHost struct {
	name  string
	netns string
	// rundir is the node's OVS_RUNDIR, where vswitchd puts each bridge's OpenFlow socket.
	rundir string
	vsctl  func(ctx context.Context, args ...string) (string, error)
}

// ownedPort is a br-int port the sandbox plugged for a pod.
type ownedPort struct {
	Name, UID, Pod string
	ExternalIDs    map[string]string
}

// bridgeReady reports whether br-int is there and runs: the agent creates it. A row is
// not enough: ovn-controller, started before the agent has set
// ovn-bridge-datapath-type, creates br-int itself with the kernel datapath, which
// vswitchd cannot open here; only a bridge vswitchd runs has its OpenFlow socket.
func (h *nodeHost) bridgeReady(ctx context.Context) (bool, error) {
	out, err := h.vsctl(ctx, "list-br")
	if err != nil {
		return false, fmt.Errorf("node %s: %w", h.name, err)
	}
	if !slices.Contains(strings.Fields(out), integrBr) {
		return false, nil
	}
	_, err = os.Stat(filepath.Join(h.rundir, integrBr+".mgmt"))
	return err == nil, nil
}

// ports lists the ports the sandbox plugged into the node's OVS, by name.
func (h *nodeHost) ports(ctx context.Context) (map[string]ownedPort, error) {
	out, err := h.vsctl(ctx, "--format=json", "--columns=name,external_ids", "find", "Interface", fmt.Sprintf("external_ids:%q=%q", ownerKey, podsOwner))
	if err != nil {
		return nil, fmt.Errorf("node %s: list the pods' ports: %w", h.name, err)
	}
	var table struct {
		Data [][2]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		return nil, fmt.Errorf("node %s: ovs-vsctl find printed %q: %w", h.name, out, err)
	}
	ports := map[string]ownedPort{}
	for _, row := range table.Data {
		var name string
		if err := json.Unmarshal(row[0], &name); err != nil {
			return nil, fmt.Errorf("node %s: port name %s: %w", h.name, row[0], err)
		}
		ids, err := ovsdbMap(row[1])
		if err != nil {
			return nil, fmt.Errorf("node %s: external_ids of port %s: %w", h.name, name, err)
		}
		ports[name] = ownedPort{Name: name, UID: ids[ifaceIDVerKey], Pod: ids[podKey], ExternalIDs: ids}
	}
	return ports, nil
}

// ovsdbMap decodes an OVSDB map in JSON notation: ["map", [[key, value], …]].
func ovsdbMap(raw json.RawMessage) (map[string]string, error) {
	var m [2]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var pairs [][2]string
	if err := json.Unmarshal(m[1], &pairs); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, nil
}

// wire makes the pod's namespace hold what plan says, plugging its interfaces into
// br-int, and reports whether it changed anything: a second call with the same plan
// changes nothing. It does only what is missing, so it also completes a wiring that
// was interrupted, or one a restarted daemon finds.
func (h *nodeHost) wire(ctx context.Context, plan podPlan, ports map[string]ownedPort) (bool, error) {
	changed := false
	do := func(argv ...string) error {
		changed = true
		_, err := run(ctx, nil, argv...)
		return err
	}
	fail := func(err error) (bool, error) {
		return changed, fmt.Errorf("wire pod %s on node %s: %w", plan.Ref, h.name, err)
	}
	if !netnsExists(plan.Netns) {
		changed = true
		if err := addNetns(ctx, plan.Netns); err != nil {
			return fail(err)
		}
	}
	links, err := observeLinks(ctx, plan.Netns)
	if err != nil {
		return fail(err)
	}
	// A namespace whose making was interrupted may have its loopback down.
	if lo, ok := links["lo"]; ok && !slices.Contains(lo.Flags, "UP") {
		if err := do("ip", "-n", plan.Netns, "link", "set", "lo", "up"); err != nil {
			return fail(err)
		}
	}
	created := false
	for _, ifc := range plan.Ifaces {
		if _, ok := links[ifc.Name]; ok {
			continue
		}
		// A host end left by an interrupted wiring would hold the name.
		_, _ = run(ctx, nil, "ip", "-n", h.netns, "link", "del", ifc.Host)
		if err := do("ip", "link", "add", ifc.Host, "netns", h.netns, "type", "veth", "peer", "name", ifc.Name, "netns", plan.Netns); err != nil {
			return fail(err)
		}
		created = true
	}
	if created {
		if links, err = observeLinks(ctx, plan.Netns); err != nil {
			return fail(err)
		}
	}
	hostLinks, err := observeLinks(ctx, h.netns)
	if err != nil {
		return fail(err)
	}
	for _, ifc := range plan.Ifaces {
		if err := setLink(plan.Netns, ifc.Name, links[ifc.Name], ifc.MAC, ifc.MTU, false, do); err != nil {
			return fail(err)
		}
		if err := syncAddrs(plan.Netns, ifc, links[ifc.Name], do); err != nil {
			return fail(err)
		}
		// The host end is a br-int port only. On the userspace datapath the node's
		// kernel still sees its packets, and would answer a pod's ARP for the node's
		// addresses (a management port's) with the veth's MAC: no ARP there.
		if err := setLink(h.netns, ifc.Host, hostLinks[ifc.Host], "", ifc.MTU, true, do); err != nil {
			return fail(err)
		}
	}
	if err := syncRoutes(ctx, plan, do); err != nil {
		return fail(err)
	}
	for _, ifc := range plan.Ifaces {
		want := map[string]string{ifaceIDKey: ifc.IfaceID, ifaceIDVerKey: plan.UID, ownerKey: podsOwner, podKey: plan.Ref}
		if p, ok := ports[ifc.Host]; ok && holds(p.ExternalIDs, want) {
			continue
		}
		// --no-wait, as for unplugging: ovn-controller binds the port by its row.
		args := []string{"--no-wait", "--may-exist", "add-port", integrBr, ifc.Host, "--", "set", "Interface", ifc.Host}
		for _, k := range []string{ifaceIDKey, ifaceIDVerKey, ownerKey, podKey} {
			args = append(args, fmt.Sprintf("external_ids:%q=%q", k, want[k]))
		}
		changed = true
		if _, err := h.vsctl(ctx, args...); err != nil {
			return fail(err)
		}
	}
	return changed, nil
}

// unwire removes a pod's ports from br-int and deletes its namespace (its veths go with
// it; "" leaves namespaces alone); what is already gone is no error. It reports whether
// it removed anything.
func (h *nodeHost) unwire(ctx context.Context, netns string, ports []string) (bool, error) {
	changed := false
	if len(ports) > 0 {
		var args []string
		for _, p := range ports {
			args = append(args, "--", "--if-exists", "del-port", p)
		}
		// --no-wait: the database row is what counts (ovn-controller releases the
		// port by it); a stuck ovs-vswitchd must not hold up the other nodes' pods.
		if _, err := h.vsctl(ctx, append([]string{"--no-wait"}, args[1:]...)...); err != nil {
			return false, fmt.Errorf("node %s: unplug %s: %w", h.name, strings.Join(ports, ", "), err)
		}
		changed = true
	}
	if netns != "" && netnsExists(netns) {
		if err := deleteNetns(ctx, netns); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// holds reports whether have has every key of want with its value; others may be
// there too (ovn-controller adds ovn-installed once it has bound the port).
func holds(have, want map[string]string) bool {
	for k, v := range want {
		if w, ok := have[k]; !ok || w != v {
			return false
		}
	}
	return true
}
