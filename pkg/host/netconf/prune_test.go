package netconf_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/netconf"
)

var mp2Own = netconf.ManagementPort{
	Name: "ovn-k8s-mp2", MAC: mac("0a:58:0a:c8:00:02"), MTU: 1400,
	Addresses: pfxs("10.200.0.2/24"), Table: 1008,
	Routes: []netconf.Route{via("10.96.0.0/16", "10.200.0.1")},
	Rules:  []netconf.Rule{to(2000, "10.96.0.0/16", 1008), to(2001, "10.200.0.0/16", 1008)},
}

// TestRemoveAndPrune removes a port whose network went away, and prunes the rules
// of a port whose link vanished first (OVS deleted it): rules name no device, so
// they outlive the link, and only a prune that knows the tables still wanted can
// tell them from the others.
func TestRemoveAndPrune(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tg := newTarget(t, kind)
			seedWorld(t, tg)
			for _, p := range []netconf.ManagementPort{mp0Dual, mp1Dual, mp2Own} {
				if _, err := tg.host.SyncManagementPort(ctx, p); err != nil {
					t.Fatal(err)
				}
			}

			tg.deleteLink(t, "ovn-k8s-mp2")
			orphans := []string{
				"-link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 down",
				"rule 2000 to 10.96.0.0/16 lookup 1008 proto 85",
				"rule 2001 to 10.200.0.0/16 lookup 1008 proto 85",
			}
			if diff := diffLines(world(concat(mp0DualDump, mp1DualDump, orphans)...), tg.dump(t)); diff != "" {
				t.Fatalf("after deleting the link (-want +got):\n%s", diff)
			}
			ports, err := tg.host.ManagementPorts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"ovn-k8s-mp0", "ovn-k8s-mp1"}; !slices.Equal(ports, want) {
				t.Fatalf("ManagementPorts = %v, want %v", ports, want)
			}
			if changed, err := tg.host.RemoveManagementPort(ctx, "ovn-k8s-mp2"); changed || err != nil {
				t.Fatalf("removing a vanished link: changed=%v, %v; want nothing to do", changed, err)
			}

			// The resync: mp0 stays, mp1's network went away, mp2 vanished.
			keep := []netconf.ManagementPort{mp0Dual}
			if changed, err := tg.host.PruneManagementPorts(ctx, keep); !changed || err != nil {
				t.Fatalf("prune: changed=%v, %v", changed, err)
			}
			removed := concat(mp0DualDump, []string{
				"-link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 down",
				// RemoveManagementPort leaves the link as it was set, without our record.
				"link ovn-k8s-mp1 mac 0a:58:0a:64:00:02 mtu 1400 up",
			})
			if diff := diffLines(world(removed...), tg.dump(t)); diff != "" {
				t.Fatalf("after prune (-want +got):\n%s", diff)
			}
			before := tg.writes()
			if changed, err := tg.host.PruneManagementPorts(ctx, keep); changed || err != nil {
				t.Fatalf("second prune: changed=%v, %v", changed, err)
			}
			if changed, err := tg.host.RemoveManagementPort(ctx, "ovn-k8s-mp1"); changed || err != nil {
				t.Fatalf("removing a removed port: changed=%v, %v", changed, err)
			}
			if n := tg.writes() - before; n != 0 {
				t.Fatalf("repeated prune and remove wrote %d times", n)
			}

			if changed, err := tg.host.RemoveManagementPort(ctx, "ovn-k8s-mp0"); !changed || err != nil {
				t.Fatalf("remove mp0: changed=%v, %v", changed, err)
			}
			want := world(
				"-link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 down",
				"link ovn-k8s-mp1 mac 0a:58:0a:64:00:02 mtu 1400 up",
				"link ovn-k8s-mp0 mac 0a:58:0a:f4:00:02 mtu 1400 up",
			)
			if diff := diffLines(want, tg.dump(t)); diff != "" {
				t.Fatalf("after removing everything (-want +got):\n%s", diff)
			}
			if ports, err := tg.host.ManagementPorts(ctx); err != nil || len(ports) != 0 {
				t.Fatalf("ManagementPorts = %v, %v; want none", ports, err)
			}
		})
	}
}
