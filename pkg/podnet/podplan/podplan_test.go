package podplan_test

import (
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/podnet/podplan"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// layer3WithGateways is topologytest.Layer3 with the gateways and a route the leader
// would have written into blue/web's annotation.
func layer3WithGateways() (*cluster.State, *cluster.Pod) {
	st := topologytest.Layer3()
	var web *cluster.Pod
	for _, p := range st.Pods {
		if p.Namespace == "blue" && p.Name == "web" {
			web = p
		}
	}
	def := web.Networks["default"]
	def.Gateways = []netip.Addr{netip.MustParseAddr("10.244.0.1"), netip.MustParseAddr("fd00:10:244:1::1")}
	def.Routes = []cluster.PodRoute{{Dest: netip.MustParsePrefix("100.64.0.0/16"), NextHop: netip.MustParseAddr("10.244.0.1")}}
	web.Networks["default"] = def
	blue := web.Networks["cluster_udn_blue"]
	blue.Gateways = []netip.Addr{netip.MustParseAddr("10.10.0.1"), netip.MustParseAddr("2014:100:200::1")}
	web.Networks["cluster_udn_blue"] = blue
	return st, web
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// A pod of a primary user-defined network: eth0 on the default network without a
// default route (infrastructure-locked), ovn-udn1 with the default routes.
func TestForPrimaryUDN(t *testing.T) {
	st, web := layer3WithGateways()
	plan, err := podplan.For(st, web)
	if err != nil {
		t.Fatal(err)
	}
	want := podnet.Plan{
		Namespace: "blue", Name: "web", UID: web.UID,
		Interfaces: []podnet.Interface{
			{
				Name: "eth0", Network: "default", IfaceID: "blue_web", MAC: "0a:58:0a:f4:00:05", MTU: 1400,
				IPs:    prefixes("10.244.0.5/24", "fd00:10:244:1::5/64"),
				Routes: []podnet.Route{{Dst: netip.MustParsePrefix("100.64.0.0/16"), Via: netip.MustParseAddr("10.244.0.1")}},
			},
			{
				Name: "ovn-udn1", Network: "cluster_udn_blue", IfaceID: "blue.blue_blue_web", MAC: "0a:58:0a:0a:00:05", MTU: 1400,
				IPs: prefixes("10.10.0.5/24", "2014:100:200::5/64"),
				Routes: []podnet.Route{
					{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.10.0.1")},
					{Dst: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2014:100:200::1")},
				},
			},
		},
	}
	if !reflect.DeepEqual(want, plan) {
		t.Errorf("plan:\n%+v\nwant\n%+v", plan, want)
	}
	if err := plan.Validate(); err != nil {
		t.Errorf("the plan does not validate: %v", err)
	}
}

// A cluster without user-defined networks: the default network's entry has no role,
// and its gateways are the pod's default routes. Secondary networks are net1, net2, …
// in network-name order, without default routes; a network MTU of 0 means 1400.
func TestForDefaultAndSecondaries(t *testing.T) {
	def := &cluster.Network{Name: "default", MTU: 1500}
	red := &cluster.Network{Name: "cluster_udn_red", Role: cluster.Secondary, Owner: cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "red"}}
	green := &cluster.Network{Name: "cluster_udn_green", Role: cluster.Secondary, MTU: 9000, Owner: cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "green"}}
	pod := &cluster.Pod{Namespace: "ns", Name: "p", UID: "u1", Networks: map[string]cluster.PodInterface{
		"default":           {IPs: prefixes("10.244.0.5/24"), MAC: "0a:58:0a:f4:00:05", Gateways: []netip.Addr{netip.MustParseAddr("10.244.0.1")}},
		"cluster_udn_red":   {IPs: prefixes("192.168.1.5/24"), MAC: "0a:58:c0:a8:01:05", Role: cluster.PodRoleSecondary, Gateways: []netip.Addr{netip.MustParseAddr("192.168.1.1")}},
		"cluster_udn_green": {IPs: prefixes("192.168.2.5/24"), MAC: "0a:58:c0:a8:02:05", Role: cluster.PodRoleSecondary},
	}}
	st := &cluster.State{Networks: []*cluster.Network{green, red, def}, Pods: []*cluster.Pod{pod}}
	plan, err := podplan.For(st, pod)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ifc := range plan.Interfaces {
		got = append(got, ifc.Name+" "+ifc.Network+" "+ifc.IfaceID+" "+strconv.Itoa(ifc.MTU)+" "+routes(ifc.Routes))
	}
	want := []string{
		"eth0 default ns_p 1500 0.0.0.0/0>10.244.0.1",
		"net1 cluster_udn_green ns.green_ns_p 9000 ",
		"net2 cluster_udn_red ns.red_ns_p 1400 ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("interfaces:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func routes(rs []podnet.Route) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Dst.String()+">"+r.Via.String())
	}
	return strings.Join(out, ",")
}

// What cannot be planned is an error that names the pod and the network.
func TestForErrors(t *testing.T) {
	def := &cluster.Network{Name: "default"}
	st := &cluster.State{Networks: []*cluster.Network{def}}
	tests := []struct {
		name string
		pod  *cluster.Pod
		want string
	}{
		{"no UID", &cluster.Pod{Namespace: "ns", Name: "p", Networks: map[string]cluster.PodInterface{"default": {IPs: prefixes("10.0.0.5/24")}}},
			"pod ns/p has no UID"},
		{"network gone", &cluster.Pod{Namespace: "ns", Name: "p", UID: "u", Networks: map[string]cluster.PodInterface{"cluster_udn_gone": {IPs: prefixes("10.0.0.5/24")}}},
			"pod ns/p is on network cluster_udn_gone, which the cluster state does not hold"},
		{"no addresses", &cluster.Pod{Namespace: "ns", Name: "p", UID: "u", Networks: map[string]cluster.PodInterface{"default": {MAC: "0a:58:0a:00:00:05"}}},
			"pod ns/p has no addresses on network default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := podplan.For(st, tt.pod); err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
