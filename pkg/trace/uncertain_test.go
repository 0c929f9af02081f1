package trace_test

import (
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// unevaluated lists the rows a path's unevaluated hops name.
func unevaluated(p *trace.Path) []string {
	var out []string
	for _, h := range p.Hops {
		if h.Unevaluated {
			out = append(out, h.Row.UUID)
		}
	}
	return out
}

func acl(uuid string, dir nbdb.ACLDirection, tier, prio int, match string, action nbdb.ACLAction) *nbdb.ACL {
	return &nbdb.ACL{UUID: uuid, Direction: dir, Tier: tier, Priority: prio, Match: match, Action: action}
}

// An ACL whose match the simulator cannot evaluate never passes unnoticed: when it
// ranks at or above what decided (or nothing did) and would have done otherwise, its
// hop names it and the verdict is uncertain; when it could not have changed anything,
// the path says nothing of it.
func TestUnevaluatedACLs(t *testing.T) {
	from := nbdb.ACLDirectionFromLport
	unsupported := acl("ACL:vlan", from, 0, 1000, "vlan.present && ip4.dst == 10.0.0.99", nbdb.ACLActionDrop)
	register := acl("ACL:reg0", from, 0, 1000, "reg0[7] == 1 && ip4.dst == 10.0.0.99", nbdb.ACLActionDrop)
	cases := []struct {
		name      string
		acls      []*nbdb.ACL
		verdict   trace.VerdictKind
		uncertain []string // the rows that make it so
	}{
		{"a field OVN has and the simulator does not", []*nbdb.ACL{unsupported}, trace.Delivered, []string{"ACL:vlan"}},
		{"a register, which northd's stages set", []*nbdb.ACL{register}, trace.Delivered, []string{"ACL:reg0"}},
		{"below the ACL that decides", []*nbdb.ACL{unsupported,
			acl("ACL:allow", from, 0, 2000, "ip4.dst == 10.0.0.99", nbdb.ACLActionAllow)}, trace.Delivered, nil},
		{"above the ACL that decides", []*nbdb.ACL{unsupported,
			acl("ACL:allow", from, 0, 900, "ip4.dst == 10.0.0.99", nbdb.ACLActionAllow)}, trace.Delivered, []string{"ACL:vlan"}},
		{"at its priority, where OVN's choice is not defined", []*nbdb.ACL{unsupported,
			acl("ACL:allow", from, 0, 1000, "ip4.dst == 10.0.0.99", nbdb.ACLActionAllow)}, trace.Delivered, []string{"ACL:vlan"}},
		{"acting as the ACL that decides does", []*nbdb.ACL{unsupported,
			acl("ACL:drop", from, 0, 900, "ip4.dst == 10.0.0.99", nbdb.ACLActionReject)}, trace.Dropped, nil},
		{"allowing what no ACL stops anyway", []*nbdb.ACL{
			acl("ACL:vlan-allow", from, 0, 1000, "vlan.present", nbdb.ACLActionAllowRelated)}, trace.Delivered, nil},
		{"in an earlier tier", []*nbdb.ACL{acl("ACL:vlan", from, 0, 1, "vlan.present", nbdb.ACLActionDrop),
			acl("ACL:allow", from, 1, 5000, "ip4.dst == 10.0.0.99", nbdb.ACLActionAllow)}, trace.Delivered, []string{"ACL:vlan"}},
		{"in a tier a pass skips", []*nbdb.ACL{acl("ACL:pass", from, 0, 1000, "ip4", nbdb.ACLActionPass),
			acl("ACL:vlan", from, 0, 500, "vlan.present", nbdb.ACLActionDrop)}, trace.Delivered, nil},
		{"above a pass", []*nbdb.ACL{acl("ACL:pass", from, 0, 1000, "ip4", nbdb.ACLActionPass),
			acl("ACL:vlan", from, 0, 1500, "vlan.present", nbdb.ACLActionDrop)}, trace.Delivered, []string{"ACL:vlan"}},
	}
	for _, tc := range cases {
		res := run(t, aclZone(t, tc.acls...), "a", "10.0.0.99")
		p := res.Forward
		v := p.Verdict
		got := unevaluated(p)
		if v.Kind != tc.verdict || v.Uncertain != (len(tc.uncertain) > 0) || strings.Join(got, ",") != strings.Join(tc.uncertain, ",") || len(p.Warnings) != 0 {
			t.Errorf("%s: verdict %s uncertain %v, unevaluated %v, warnings %q; want %s, unevaluated %v:\n%s",
				tc.name, v.Kind, v.Uncertain, got, p.Warnings, tc.verdict, tc.uncertain, text(t, res))
			continue
		}
		out, _, _ := strings.Cut(text(t, res), "\n\nreply: ")
		if wantWord := strings.ToUpper(string(tc.verdict)) + " (UNCERTAIN):"; v.Uncertain != strings.Contains(out, wantWord) ||
			v.Uncertain != strings.Contains(out, "uncertain: hop 1 names a row the simulator could not evaluate") {
			t.Errorf("%s: the text does not say the verdict is uncertain (or says it wrongly):\n%s", tc.name, out)
		}
		for _, h := range p.Hops {
			if h.Unevaluated && (h.Row == nil || h.Row.Table != "ACL" || !strings.Contains(h.Note, "not evaluated")) {
				t.Errorf("%s: unevaluated hop %+v does not name its ACL and why", tc.name, h)
			}
		}
	}
}

// A match OVN itself refuses makes a row that never applies, in OVN either: the trace
// skips it as OVN does, and warns, but the verdict is certain.
func TestRefusedMatchNeverApplies(t *testing.T) {
	for _, m := range []string{"ip4.dst == 10.0.0.300", "ip4.dst == $nowhere", "vlan.nonsense == 1", "ip4.dst == 10.0.0.99 // no newline"} {
		res := run(t, aclZone(t, acl("ACL:bad", nbdb.ACLDirectionFromLport, 0, 1000, m, nbdb.ACLActionDrop)), "a", "10.0.0.99")
		p := res.Forward
		if p.Verdict.Kind != trace.Delivered || p.Verdict.Uncertain || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "ACL ACL:bad never applies") {
			t.Errorf("%q: verdict %+v, warnings %q; want delivered, certain, one warning:\n%s", m, p.Verdict, p.Warnings, text(t, res))
		}
	}
}

// compiledWith is compiled, with rows added to (or changed in) each zone by edit.
func compiledWith(t *testing.T, st *cluster.State, edit func(node string, s *rows.Set)) *trace.Cluster {
	t.Helper()
	zones := trace.Zones{}
	for _, n := range st.Nodes {
		res, err := topology.Compile(st, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		edit(n.Name, res.Rows)
		zones[n.Name] = trace.ZoneFromRows(n.Name, res.Rows, trace.Extra{})
	}
	return trace.ClusterOf(st, zones)
}

func routerNamed(t *testing.T, s *rows.Set, name string) *nbdb.LogicalRouter {
	t.Helper()
	for _, lr := range s.Routers {
		if lr.Name == name {
			return lr
		}
	}
	t.Fatalf("no router %s", name)
	return nil
}

// addPolicy puts a policy on the cluster router of every zone.
func addPolicy(t *testing.T, p *nbdb.LogicalRouterPolicy) func(string, *rows.Set) {
	return func(_ string, s *rows.Set) {
		lr := routerNamed(t, s, "ovn_cluster_router")
		c := *p
		s.Policies = append(s.Policies, &c)
		lr.Policies = append(lr.Policies, c.UUID)
	}
}

// Router policies the simulator cannot evaluate: one above the policy that decides,
// acting otherwise, makes the trace uncertain; one below it, or one that would only
// allow where no policy matched, does not.
func TestUnevaluatedPolicies(t *testing.T) {
	cases := []struct {
		name      string
		policy    nbdb.LogicalRouterPolicy
		dst       string
		uncertain bool
	}{
		{"above the pod-to-pod allow", nbdb.LogicalRouterPolicy{Priority: 200, Match: "reg0 == 5", Action: nbdb.LogicalRouterPolicyActionDrop}, "10.244.1.7", true},
		{"below the pod-to-pod allow", nbdb.LogicalRouterPolicy{Priority: 50, Match: "ct_mark.blocked", Action: nbdb.LogicalRouterPolicyActionDrop}, "10.244.1.7", false},
		{"an allow where none matches", nbdb.LogicalRouterPolicy{Priority: 300, Match: "tcp.flags == 2", Action: nbdb.LogicalRouterPolicyActionAllow}, "8.8.8.8", false},
		{"a drop where none matches", nbdb.LogicalRouterPolicy{Priority: 300, Match: "tcp.flags == 2", Action: nbdb.LogicalRouterPolicyActionDrop}, "8.8.8.8", true},
		{"marking where none matches", nbdb.LogicalRouterPolicy{Priority: 300, Match: "xreg1 != 0", Action: nbdb.LogicalRouterPolicyActionAllow,
			Options: map[string]string{"pkt_mark": "1008"}}, "8.8.8.8", true},
	}
	for _, tc := range cases {
		tc.policy.UUID = "LRP:doubt"
		c := compiledWith(t, topologytest.Layer3(), addPolicy(t, &tc.policy))
		res := mustTrace(t, c, podRequest(t, c, "default/client", "default", tc.dst))
		v := res.Forward.Verdict
		got := unevaluated(res.Forward)
		if v.Kind == trace.Dropped || v.Uncertain != tc.uncertain || (len(got) > 0) != tc.uncertain || len(res.Forward.Warnings) != 0 {
			t.Errorf("%s: verdict %+v, unevaluated %v, warnings %q; want uncertain %v:\n%s", tc.name, v, got, res.Forward.Warnings, tc.uncertain, text(t, res))
		}
		for _, h := range res.Forward.Hops {
			if h.Unevaluated && (h.Stage != trace.StagePolicy || h.Row.Table != "Logical_Router_Policy") {
				t.Errorf("%s: unevaluated hop %+v", tc.name, h)
			}
		}
	}
}

// A NAT row the simulator cannot evaluate that outranks the SNAT that applies, and
// would translate to another address, makes the trace uncertain.
func TestUnevaluatedSNAT(t *testing.T) {
	c := compiledWith(t, topologytest.Layer3(), func(node string, s *rows.Set) {
		gr := routerNamed(t, s, "GR_"+node)
		n := &nbdb.NAT{UUID: "NAT:doubt", Type: nbdb.NATTypeSNAT, LogicalIP: "10.244.0.0/16", ExternalIP: "192.0.2.99", Match: "ct_label.label == 7", Priority: 5}
		s.NATs = append(s.NATs, n)
		gr.Nat = append(gr.Nat, n.UUID)
	})
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "8.8.8.8"))
	v := res.Forward.Verdict
	if v.Kind != trace.LeftCluster || !v.Uncertain || strings.Join(unevaluated(res.Forward), ",") != "NAT:doubt" {
		t.Fatalf("verdict %+v, unevaluated %v; want left the cluster, uncertain by NAT:doubt:\n%s", v, unevaluated(res.Forward), text(t, res))
	}
	for _, h := range res.Forward.Hops {
		if h.Unevaluated && (h.Stage != trace.StageSNAT || !strings.Contains(h.Note, "ct_label")) {
			t.Errorf("unevaluated hop %+v", h)
		}
	}
}

// is_chassis_resident() asks where a port is bound, and the answer depends on the zone
// evaluating it: a policy dropping traffic to a pod while the pod's port is resident
// lets the packet through the sending node's cluster router (the port is not there)
// and drops it at the pod's own node; a gateway router's ports are bound to its
// chassis; a "cr-" port to its distributed gateway port's gateway chassis; patch ports
// of distributed routers and switches nowhere.
func TestChassisResidentPolicies(t *testing.T) {
	cases := []struct {
		name, router, match, pod, dst string
		dropIn                        string // the zone whose router drops the packet; "" for none
	}{
		{"a pod's port, bound on its node", "ovn_cluster_router", `is_chassis_resident("kube-system_dns") && ip4.dst == 10.244.1.7`,
			"default/client", "10.244.1.7", "node2"},
		{"another node's pod, bound elsewhere", "ovn_cluster_router", `is_chassis_resident("default_client") && ip4.dst == 10.244.1.7`,
			"default/client", "10.244.1.7", "node1"},
		{"a gateway router's port", "GR_node1", `is_chassis_resident("rtoe-GR_node1")`, "default/client", "8.8.8.8", "node1"},
		{"a gateway router's port, negated", "GR_node1", `!is_chassis_resident("rtoe-GR_node1")`, "default/client", "8.8.8.8", ""},
		{"a distributed router's port, bound nowhere", "ovn_cluster_router", `is_chassis_resident("rtos-node1")`, "default/client", "8.8.8.8", ""},
		{"a switch's patch port, bound nowhere", "ovn_cluster_router", `is_chassis_resident("stor-node1")`, "default/client", "8.8.8.8", ""},
		{"a chassis-redirect port", "cluster_udn_blue_ovn_cluster_router", `is_chassis_resident("cr-rtos-cluster_udn_blue_node1")`,
			"blue/web", "8.8.8.8", "node1"},
		{"a port no zone has", "GR_node1", `is_chassis_resident("nowhere")`, "default/client", "8.8.8.8", ""},
	}
	for _, tc := range cases {
		c := compiledWith(t, topologytest.Layer3(), func(node string, s *rows.Set) {
			for _, lr := range s.Routers {
				if lr.Name == tc.router {
					p := &nbdb.LogicalRouterPolicy{UUID: "LRP:resident", Priority: 2000, Match: tc.match, Action: nbdb.LogicalRouterPolicyActionDrop}
					s.Policies = append(s.Policies, p)
					lr.Policies = append(lr.Policies, p.UUID)
				}
			}
		})
		res := mustTrace(t, c, podRequest(t, c, tc.pod, "", tc.dst))
		v := res.Forward.Verdict
		dropped := v.Kind == trace.Dropped && v.Row != nil && v.Row.UUID == "LRP:resident"
		if dropped != (tc.dropIn != "") || dropped && v.Zone != tc.dropIn || v.Uncertain || len(res.Forward.Warnings) > 0 {
			t.Errorf("%s: verdict %+v, warnings %q; want dropped by the policy in zone %q:\n%s", tc.name, v, res.Forward.Warnings, tc.dropIn, text(t, res))
		}
	}
}
