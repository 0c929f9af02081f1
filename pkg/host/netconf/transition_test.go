package netconf_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/netconf"
)

// states are the node's desired management ports at different times: networks
// come and go, addresses change prefix length, gateways and tables change, a port
// moves from its own table to main and another port takes the freed table. Every
// port sets its MAC and MTU, as the agent does: left unset they are left alone,
// and then the result depends on history by design.
var states = [][]netconf.ManagementPort{
	{},
	{mp0Dual},
	{mp0Dual, mp1Dual},
	{
		{
			Name: "ovn-k8s-mp0", MAC: mac("0a:58:0a:f4:00:03"), MTU: 1500, Addresses: pfxs("10.244.0.3/24"),
			Routes: []netconf.Route{via("10.96.0.0/16", "10.244.0.254"), onLink("10.245.0.0/16")},
		},
		{
			Name: "ovn-k8s-mp1", MAC: mac("0a:58:0a:64:00:02"), MTU: 1400,
			Addresses: pfxs("10.100.0.2/24", "fd00:100::2/64"), Table: 1009,
			Routes: []netconf.Route{via("10.96.0.0/16", "10.100.0.254"), via("fd00:10:96::/112", "fd00:100::1")},
			Rules:  []netconf.Rule{to(2500, "10.96.0.0/16", 1009), to(2000, "fd00:10:96::/112", 1009)},
		},
		{
			Name: "ovn-k8s-mp2", MAC: mac("0a:58:0a:c8:00:02"), MTU: 1400, Addresses: pfxs("fd00:200::2/64"), Table: 1008,
			Routes: []netconf.Route{via("fd00:10:96::/112", "fd00:200::1")},
			Rules:  []netconf.Rule{to(2000, "fd00:10:96::/112", 1008)},
		},
	},
	{
		{
			Name: "ovn-k8s-mp1", MAC: mac("0a:58:0a:64:00:02"), MTU: 1400,
			Addresses: pfxs("10.100.0.2/16", "10.100.0.3/16", "fd00:100::2/64"), Table: 1007,
			Routes: []netconf.Route{
				via("10.96.0.0/16", "10.100.0.1"), onLink("172.16.0.0/16"), via("10.250.0.0/16", "172.16.0.1"),
				via("fd00:10:96::/112", "fd00:100::254"),
			},
			Rules: []netconf.Rule{to(2000, "10.96.0.0/16", 1007)},
		},
	},
	{
		{
			Name: "ovn-k8s-mp1", MAC: mac("0a:58:0a:64:00:03"), MTU: 1500, Addresses: pfxs("10.100.0.3/16"),
			// Not 10.96.0.0/16: in main that is mp0's, and two ports cannot both
			// hold a destination of one table, not even for a moment.
			Routes: []netconf.Route{via("10.98.0.0/16", "10.100.0.1")},
		},
		{
			Name: "ovn-k8s-mp2", MAC: mac("0a:58:0a:c8:00:02"), MTU: 1400,
			Addresses: pfxs("10.200.0.2/24", "fd00:200::2/64"), Table: 1007,
			Routes: []netconf.Route{via("10.96.0.0/16", "10.200.0.1"), via("fd00:10:96::/112", "fd00:200::1")},
			Rules:  []netconf.Rule{to(2000, "10.96.0.0/16", 1007), to(2000, "fd00:10:96::/112", 1007)},
		},
	},
	{{
		Name: "ovn-k8s-mp0", MAC: mac("0a:58:0a:f4:00:04"), MTU: 1400,
		Addresses: mp0Dual.Addresses, Routes: mp0Dual.Routes,
	}},
}

// apply makes the node's management ports exactly ports, as the agent's resync
// does: remove the ports no longer wanted (freeing their tables), sync the wanted
// ones in order, prune. It returns whether anything changed.
func apply(ctx context.Context, t *testing.T, h netconf.Interface, ports []netconf.ManagementPort) bool {
	t.Helper()
	changed := false
	have, err := h.ManagementPorts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range have {
		if slices.IndexFunc(ports, func(p netconf.ManagementPort) bool { return p.Name == name }) < 0 {
			c, err := h.RemoveManagementPort(ctx, name)
			if err != nil {
				t.Fatalf("remove %s: %v", name, err)
			}
			changed = changed || c
		}
	}
	for _, p := range ports {
		c, err := h.SyncManagementPort(ctx, p)
		if err != nil {
			t.Fatalf("sync %s: %v", p.Name, err)
		}
		changed = changed || c
	}
	// Nothing vanished behind our back, so there is nothing to prune.
	if c, err := h.PruneManagementPorts(ctx, ports); err != nil || c {
		t.Fatalf("prune after a clean apply: changed=%v, %v", c, err)
	}
	return changed
}

// stable drops the link lines of ports the state does not configure: after
// RemoveManagementPort they keep the MAC, MTU and up state a sync gave them,
// which a fresh namespace's never had (everything else must be equal).
func stable(dump string, ports []netconf.ManagementPort) string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == "link" && strings.HasPrefix(f[1], netconf.ManagementPortPrefix) &&
			slices.IndexFunc(ports, func(p netconf.ManagementPort) bool { return p.Name == f[1] }) < 0 {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func names(ports []netconf.ManagementPort) []string {
	var out []string
	for _, p := range ports {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// TestTransitions applies every state to a fresh world, then walks from state to
// state in random order on one world, and after each step requires the same state
// as the fresh apply. The Fake's fresh states must equal the kernel's.
func TestTransitions(t *testing.T) {
	ctx := context.Background()
	fresh := map[string][]string{}
	for _, kind := range kinds {
		for i, st := range states {
			tg := newTarget(t, kind)
			seedWorld(t, tg)
			if !apply(ctx, t, tg.host, st) && len(st) > 0 {
				t.Fatalf("%s: fresh apply of state %d changed nothing", kind, i)
			}
			fresh[kind] = append(fresh[kind], stable(tg.dump(t), st))
		}
	}
	for i := range states {
		if diff := diffLines(fresh["kernel"][i], fresh["fake"][i]); diff != "" {
			t.Errorf("state %d: the Fake differs from the kernel (-kernel +fake):\n%s", i, diff)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(strings.TrimSpace(os.Getenv("NETCONF_SEED")), 10, 64); err == nil {
		seed = s
	}
	t.Logf("random walk seed %d (set NETCONF_SEED to replay)", seed)
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			tg := newTarget(t, kind)
			seedWorld(t, tg)
			prev := 0
			path := []int{0}
			for range 30 {
				next := rng.IntN(len(states))
				path = append(path, next)
				before := tg.writes()
				changed := apply(ctx, t, tg.host, states[next])
				if want := next != prev; changed != want {
					t.Fatalf("path %v: changed=%v, want %v", path, changed, want)
				}
				if next == prev && tg.writes() != before {
					t.Fatalf("path %v: repeating a state wrote %d times", path, tg.writes()-before)
				}
				if diff := diffLines(fresh[kind][next], stable(tg.dump(t), states[next])); diff != "" {
					t.Fatalf("path %v: state differs from a fresh apply (-fresh +walked):\n%s", path, diff)
				}
				got, err := tg.host.ManagementPorts(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if want := names(states[next]); !slices.Equal(got, want) {
					t.Fatalf("path %v: management ports %v, want %v", path, got, want)
				}
				prev = next
			}
		})
	}
}
