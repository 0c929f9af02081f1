package netconf_test

import (
	"context"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestOVSInternalPort configures the management port the way it exists on a node:
// an OVS internal port on br-int, which the userspace datapath makes a tap device
// in vswitchd's namespace. vswitchd must accept the MAC and MTU set underneath it
// and keep them when it reconfigures (here: a port added to the bridge), so a
// later Sync still finds nothing to do.
func TestOVSInternalPort(t *testing.T) {
	testenv.NeedOVN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ns := testenv.NewNetns(t)
	ovs := testenv.StartOVSInNetns(t, ns, nil)
	if _, err := ovs.AddBridge(ctx, "br-int"); err != nil {
		t.Fatal(err)
	}
	addInternal := func(name string) {
		t.Helper()
		if _, err := ovs.VSCtl(ctx, "add-port", "br-int", name, "--", "set", "Interface", name, "type=internal"); err != nil {
			t.Fatal(err)
		}
		if err := testenv.Eventually(ctx, 20*time.Second, "tap "+name+" of vswitchd", func(ctx context.Context) error {
			_, err := ns.IP(ctx, "link", "show", name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	addInternal("ovn-k8s-mp0")

	h, err := netconf.Open(ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if changed, err := h.SyncManagementPort(ctx, mp0Dual); err != nil || !changed {
		t.Fatalf("sync: changed=%v, %v", changed, err)
	}
	addInternal("ovn-k8s-mp1") // vswitchd reconfigures the bridge
	if _, err := ovs.VSCtl(ctx, "--timeout=20", "wait-until", "Interface", "ovn-k8s-mp1", "ofport>0"); err != nil {
		t.Fatal(err)
	}
	if changed, err := h.SyncManagementPort(ctx, mp0Dual); err != nil || changed {
		t.Fatalf("sync after vswitchd reconfigured: changed=%v, %v (did vswitchd undo something?)\n%s", changed, err, ns.Routes(ctx))
	}
	out, err := ovs.VSCtl(ctx, "get", "Interface", "ovn-k8s-mp0", "mac_in_use", "mtu")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vswitchd's view of ovn-k8s-mp0 (mac_in_use, mtu): %q", out)
}
