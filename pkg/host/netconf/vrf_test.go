package netconf_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/netconf"
)

// withoutLink drops a link's own line: a real VRF device has a random MAC.
func withoutLink(dump, name string) string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if !strings.HasPrefix(l, "link "+name+" ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestVRF asks for a user-defined network's port in a VRF, as upstream does. A
// kernel without VRF devices (this machine's, and the Fake by default) refuses it
// with ErrVRFUnsupported before writing anything, and the caller falls back to ip
// rules selecting the same table. Where VRF devices exist (here: only the Fake
// with SetVRF(true)) the port joins the VRF, and leaves it again when asked for
// rules instead, or when removed.
func TestVRF(t *testing.T) {
	for _, kind := range []string{"fake", "fake with VRF", "kernel"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tg := newTarget(t, strings.Fields(kind)[0])
			if kind == "fake with VRF" {
				tg.fake.SetVRF(true)
				tg.vrf = true
			}
			seedWorld(t, tg)
			inVRF := mp1Dual
			inVRF.VRF, inVRF.Rules = "udn-blue", nil

			changed, err := tg.host.SyncManagementPort(ctx, inVRF)
			if !tg.vrf {
				t.Logf("no VRF devices: %v", err)
				if !errors.Is(err, netconf.ErrVRFUnsupported) || changed || tg.writes() != 0 {
					t.Fatalf("sync in a VRF: changed=%v, %d writes, error %v; want ErrVRFUnsupported and nothing written", changed, tg.writes(), err)
				}
				if !strings.Contains(err.Error(), "management port ovn-k8s-mp1: create VRF udn-blue on table 1007") {
					t.Errorf("error %q does not name the port, VRF and table", err)
				}
				if diff := diffLines(world(), tg.dump(t)); diff != "" {
					t.Fatalf("state after the refusal (-want +got):\n%s", diff)
				}
				if _, err := tg.host.SyncManagementPort(ctx, mp1Dual); err != nil {
					t.Fatalf("fall back to rules: %v", err)
				}
				if diff := diffLines(world(mp1DualDump...), tg.dump(t)); diff != "" {
					t.Fatalf("state with rules (-want +got):\n%s", diff)
				}
				return
			}

			if err != nil || !changed {
				t.Fatalf("sync in a VRF: changed=%v, %v", changed, err)
			}
			vrfDump := world(
				`link ovn-k8s-mp1 mac 0a:58:0a:64:00:02 mtu 1400 up master udn-blue alias "ovnk.io/owner=ovnk-agent table=1007 vrf=udn-blue"`,
				`addr ovn-k8s-mp1 10.100.0.2/24`,
				`addr ovn-k8s-mp1 fd00:100::2/64`,
				`route 1007 10.96.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
				`route 1007 10.100.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
				`route 1007 fd00:10:96::/112 via fd00:100::1 dev ovn-k8s-mp1 proto 85`,
				`route 1007 10.100.0.0/24 dev ovn-k8s-mp1 proto 85`,
				`route 1007 fd00:100::/64 dev ovn-k8s-mp1 proto 85`,
			)
			if diff := diffLines(vrfDump, withoutLink(tg.dump(t), "udn-blue")); diff != "" {
				t.Fatalf("state in the VRF (-want +got):\n%s", diff)
			}
			if changed, err := tg.host.SyncManagementPort(ctx, inVRF); changed || err != nil {
				t.Fatalf("repeated sync in a VRF: changed=%v, %v", changed, err)
			}
			// From the VRF to rules: the port leaves, the VRF device goes.
			if _, err := tg.host.SyncManagementPort(ctx, mp1Dual); err != nil {
				t.Fatal(err)
			}
			if diff := diffLines(world(mp1DualDump...), tg.dump(t)); diff != "" {
				t.Fatalf("state with rules instead (-want +got):\n%s", diff)
			}
			if _, err := tg.host.SyncManagementPort(ctx, inVRF); err != nil {
				t.Fatal(err)
			}
			if _, err := tg.host.RemoveManagementPort(ctx, inVRF.Name); err != nil {
				t.Fatal(err)
			}
			if diff := diffLines(world(`link ovn-k8s-mp1 mac 0a:58:0a:64:00:02 mtu 1400 up`), tg.dump(t)); diff != "" {
				t.Fatalf("state after removal (-want +got):\n%s", diff)
			}
		})
	}
}
