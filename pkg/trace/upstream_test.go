package trace_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// Upstream OVN-Kubernetes' external IDs (docs/acls.md of OVN-Kubernetes; as its
// default network controller writes them), on the rows our compiler writes with the
// same names, matches and priorities.
const upstreamController = "default-network-controller"

// upstreamIDs are the external IDs upstream gives a row of its feature ownerType
// named name; id completes the k8s.ovn.org/id after the owner type.
func upstreamIDs(ownerType, name, id string, extra map[string]string) map[string]string {
	ids := map[string]string{
		rows.OwnerControllerKey: upstreamController,
		rows.OwnerTypeKey:       ownerType,
		"k8s.ovn.org/name":      name,
		rows.IDKey:              upstreamController + ":" + ownerType + ":" + id,
	}
	for k, v := range extra {
		ids[k] = v
	}
	return ids
}

// multicastMatch is upstream's match for all multicast traffic (its MulticastCluster
// ACLs): IGMP-snooped IPv4 groups, MLD, and IPv6 dynamic groups by subfield.
const multicastMatch = "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))"

// upstreamZones is the Layer3 fixture's zones with node1's ACLs carrying upstream's
// external IDs only, and with upstream's default multicast deny on a cluster port
// group of node1's default-network pods: rows a cluster run by upstream has.
func upstreamZones(t *testing.T) *trace.Cluster {
	return compiledWith(t, topologytest.Layer3(), func(node string, s *rows.Set) {
		if node != "node1" {
			return
		}
		for _, a := range s.ACLs {
			name, dir := a.ExternalIDs["k8s.ovn.org/name"], a.ExternalIDs["direction"]
			switch a.ExternalIDs[rows.OwnerTypeKey] {
			case "UDNIsolation":
				a.ExternalIDs = upstreamIDs("UDNIsolation", name, name+":"+dir, map[string]string{"direction": dir})
			case "NetpolNode":
				ip := a.ExternalIDs["ip"]
				a.ExternalIDs = upstreamIDs("NetpolNode", node, node+":"+ip, map[string]string{"ip": ip})
			default:
				t.Fatalf("ACL %s has owner type %q: the fixture changed", a.UUID, a.ExternalIDs[rows.OwnerTypeKey])
			}
		}
		pg := &nbdb.PortGroup{UUID: "PG:clusterPortGroup", Name: "clusterPortGroup"}
		for _, p := range s.SwitchPorts {
			if p.Name == "default_client" || p.Name == "blue_web" {
				pg.Ports = append(pg.Ports, p.UUID)
			}
		}
		for _, dir := range []nbdb.ACLDirection{nbdb.ACLDirectionFromLport, nbdb.ACLDirectionToLport} {
			gress := map[nbdb.ACLDirection]string{nbdb.ACLDirectionFromLport: "Egress", nbdb.ACLDirectionToLport: "Ingress"}[dir]
			a := &nbdb.ACL{UUID: "ACL:mcast-deny-" + gress, Direction: dir, Priority: 1011, Tier: 2, Match: multicastMatch, Action: nbdb.ACLActionDrop,
				ExternalIDs: upstreamIDs("MulticastCluster", "", "DefaultDeny:"+gress, map[string]string{"direction": gress, "type": "DefaultDeny"})}
			s.ACLs = append(s.ACLs, a)
			pg.ACLs = append(pg.ACLs, a.UUID)
		}
		if len(pg.Ports) != 2 {
			t.Fatalf("cluster port group holds %d ports, want default_client and blue_web", len(pg.Ports))
		}
		s.PortGroups = append(s.PortGroups, pg)
	})
}

// TestUpstreamIsolationACLs traces through a zone holding upstream's UDN isolation
// ACLs, ARP and ND matches among them (AllowHostARPPrimaryUDN: `arp && arp.tpa == …`),
// and its multicast deny written with subfields: every row is read (no warning, no
// unevaluated hop), the verdicts are the isolation's, and each deciding ACL names its
// owner from upstream's keys.
func TestUpstreamIsolationACLs(t *testing.T) {
	c := upstreamZones(t)
	cases := []struct {
		name    string
		req     trace.Request
		verdict trace.VerdictKind
		rule    string // the UDNIsolation ACL that decides, and its direction
	}{
		{"a default-network pod to a primary-UDN pod's default port", podRequest(t, c, "default/client", "default", "10.244.0.5"), trace.Dropped, "DenyPrimaryUDN:Ingress"},
		{"a pod on another node to it", podRequest(t, c, "kube-system/dns", "default", "10.244.0.5"), trace.Dropped, "DenyPrimaryUDN:Ingress"},
		{"the locked port itself", podRequest(t, c, "blue/web", "default", "10.244.1.7"), trace.Dropped, "DenyPrimaryUDN:Egress"},
		{"the node's probe", trace.Request{Node: "node1", Port: "k8s-node1", Src: netip.MustParseAddr("10.244.0.2"), Dst: netip.MustParseAddr("10.244.0.5"),
			Proto: trace.TCP, DstPort: 8080, Reply: true}, trace.Delivered, "AllowHostPrimaryUDN:Ingress"},
	}
	for _, tc := range cases {
		res := mustTrace(t, c, tc.req)
		out := text(t, res)
		for _, p := range []*trace.Path{res.Forward, res.Reply} {
			if p != nil && (len(p.Warnings) > 0 || p.Verdict.Uncertain || len(unevaluated(p)) > 0) {
				t.Errorf("%s: warnings %q, uncertain %v, unevaluated %v:\n%s", tc.name, p.Warnings, p.Verdict.Uncertain, unevaluated(p), out)
			}
		}
		if res.Forward.Verdict.Kind != tc.verdict {
			t.Errorf("%s: verdict %s, want %s:\n%s", tc.name, res.Forward.Verdict.Kind, tc.verdict, out)
			continue
		}
		var decided *trace.Row
		for _, h := range res.Forward.Hops {
			if h.Stage == trace.StageACL && h.Row != nil && h.Row.Owner != nil && h.Row.Owner.Kind == "UDNIsolation" {
				decided = h.Row
			}
		}
		rule, _, _ := strings.Cut(tc.rule, ":")
		want := trace.Owner{Kind: "UDNIsolation", Name: rule, Controller: upstreamController, ID: upstreamController + ":UDNIsolation:" + tc.rule}
		if decided == nil || *decided.Owner != want {
			t.Errorf("%s: the isolation ACL on the path is %+v, want one owned by %+v:\n%s", tc.name, decided, want, out)
			continue
		}
		if !strings.Contains(out, fmt.Sprintf("(UDNIsolation %s)", rule)) {
			t.Errorf("%s: the text does not name the ACL's owner:\n%s", tc.name, out)
		}
	}
}

// TestUpstreamOwners: each row on a hop names its owner from upstream's external IDs,
// whatever feature wrote it, as well as from ours; namespaced objects are named
// namespace/name; a row with none of those keys has no owner. (Any table's row is read
// alike: an ACL carries them here.)
func TestUpstreamOwners(t *testing.T) {
	cases := []struct {
		ids  map[string]string
		want trace.Owner
	}{
		{upstreamIDs("NetworkPolicy", "blue:deny-all", "blue:deny-all:egress:0:-1:0", map[string]string{"direction": "egress"}),
			trace.Owner{Kind: "NetworkPolicy", Name: "blue/deny-all", Controller: upstreamController, ID: upstreamController + ":NetworkPolicy:blue:deny-all:egress:0:-1:0"}},
		{upstreamIDs("EgressFirewall", "blue", "blue:9998", nil),
			trace.Owner{Kind: "EgressFirewall", Name: "blue/default", Controller: upstreamController, ID: upstreamController + ":EgressFirewall:blue:9998"}},
		{upstreamIDs("AdminNetworkPolicy", "cluster-control", "cluster-control:Egress:5", nil),
			trace.Owner{Kind: "AdminNetworkPolicy", Name: "cluster-control", Controller: upstreamController, ID: upstreamController + ":AdminNetworkPolicy:cluster-control:Egress:5"}},
		{upstreamIDs("EgressIP", "eip1", "102:EIP-No-Reroute-Pod-To-Pod:ip4", map[string]string{"network": "cluster_udn_blue"}),
			trace.Owner{Kind: "EgressIP", Name: "eip1", Network: "blue", Controller: upstreamController, ID: upstreamController + ":EgressIP:102:EIP-No-Reroute-Pod-To-Pod:ip4"}},
		{map[string]string{rows.OwnerControllerKey: "ovnk", rows.OwnerTypeKey: "NetpolNode", "k8s.ovn.org/name": "node1", rows.NetworkKey: "default", rows.NodeKey: "node1", rows.IDKey: "ACL:NetpolNode:node1"},
			trace.Owner{Kind: "NetpolNode", Name: "node1", Network: "default", Node: "node1", Controller: "ovnk", ID: "ACL:NetpolNode:node1"}},
		{map[string]string{rows.OwnerControllerKey: "ovnk", rows.OwnerTypeKey: "ClusterUserDefinedNetwork", rows.NetworkKey: "cluster_udn_blue", rows.IDKey: "ACL:x"},
			trace.Owner{Kind: "Network", Name: "blue", Controller: "ovnk", ID: "ACL:x"}},
		// Upstream's interconnect routes name only the remote node.
		{map[string]string{"ic-node": "node2"}, trace.Owner{Kind: "Node", Name: "node2", Node: "node2"}},
		{map[string]string{"ic-node": "node2", "ic-host-ip": "true", rows.NetworkKey: "cluster_udn_blue"},
			trace.Owner{Kind: "Network", Name: "blue", Node: "node2"}},
		{map[string]string{"unrelated": "x"}, trace.Owner{}},
	}
	for _, tc := range cases {
		a := acl("ACL:owned", nbdb.ACLDirectionFromLport, 0, 1000, "ip4.dst == 10.0.0.99", nbdb.ACLActionDrop)
		a.ExternalIDs = tc.ids
		res := run(t, aclZone(t, a), "a", "10.0.0.99")
		v := res.Forward.Verdict
		if v.Row == nil {
			t.Fatalf("the ACL did not decide:\n%s", text(t, res))
		}
		if got := v.Row.Owner; tc.want == (trace.Owner{}) && got != nil || tc.want != (trace.Owner{}) && (got == nil || *got != tc.want) {
			t.Errorf("owner of a row with %v: %+v, want %+v", tc.ids, got, tc.want)
		}
	}
}
