package netconf_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestTrafficThroughTable sends real packets through a management port that
// SyncManagementPort configured with policy routing, the half of upstream's VRF
// setup this kernel can run: the remote subnet is routed only in table 1007, and
// only a rule selects it. A node namespace holds the port (one end of a veth); a
// peer namespace holds the other end and host addresses in the remote subnet.
func TestTrafficThroughTable(t *testing.T) {
	testenv.NeedBinaries(t, "ip", "ping")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	node, peer := testenv.NewNetns(t), testenv.NewNetns(t)
	if _, err := node.IP(ctx, "link", "add", "ovn-k8s-mp1", "netns", node.Name, "type", "veth",
		"peer", "name", "eth0", "netns", peer.Name); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"addr", "add", "10.100.0.1/24", "dev", "eth0"},
		{"addr", "add", "fd00:100::1/64", "dev", "eth0", "nodad"},
		{"link", "set", "eth0", "up"},
		// Host addresses in the remote subnets, on the peer's loopback.
		{"addr", "add", "172.30.0.5/32", "dev", "lo"},
		{"addr", "add", "fd00:30::5/128", "dev", "lo"},
	} {
		if _, err := peer.IP(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}

	h, err := netconf.Open(node.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	port := netconf.ManagementPort{
		Name: "ovn-k8s-mp1", MAC: mac("0a:58:0a:64:00:02"), MTU: 1400,
		Addresses: pfxs("10.100.0.2/24", "fd00:100::2/64"),
		Table:     1007,
		Routes:    []netconf.Route{via("172.30.0.0/16", "10.100.0.1"), via("fd00:30::/64", "fd00:100::1")},
		Rules:     []netconf.Rule{to(2000, "172.30.0.0/16", 1007), to(2000, "fd00:30::/64", 1007)},
	}
	if changed, err := h.SyncManagementPort(ctx, port); err != nil || !changed {
		t.Fatalf("sync: changed=%v, %v", changed, err)
	}

	for _, dst := range []string{"172.30.0.5", "fd00:30::5"} {
		// The kernel picks table 1007 for the destination: the rule does it.
		out, err := node.IP(ctx, "route", "get", dst)
		if err != nil || !strings.Contains(out, "table 1007") || !strings.Contains(out, "dev ovn-k8s-mp1") {
			t.Fatalf("route get %s = %q, %v; want table 1007 through ovn-k8s-mp1", dst, out, err)
		}
		// The veth's carrier and the peer's neighbour entries come up on their own
		// time; keep pinging until three in a row are answered.
		err = testenv.Eventually(ctx, 20*time.Second, "ping "+dst+" through table 1007", func(ctx context.Context) error {
			out, err := node.Exec(ctx, "ping", "-c", "3", "-i", "0.2", "-W", "1", "-q", dst)
			if err != nil {
				return err
			}
			if !strings.Contains(out, " 0% packet loss") {
				return fmt.Errorf("not every ping answered: %s", out)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v\nroutes:\n%s", err, node.Routes(ctx))
		}
	}

	// Without the port's configuration nothing routes there: main has no route.
	if changed, err := h.RemoveManagementPort(ctx, port.Name); err != nil || !changed {
		t.Fatalf("remove: changed=%v, %v", changed, err)
	}
	for _, dst := range []string{"172.30.0.5", "fd00:30::5"} {
		if out, err := node.IP(ctx, "route", "get", dst); err == nil {
			t.Errorf("route get %s after removal = %q; want no route", dst, out)
		}
	}
}
