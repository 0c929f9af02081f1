package nbctl_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/testenv"
)

// commands build, with ovn-nbctl itself, a small transit topology: a switch with a VIF,
// a router port and a remote port; a transit router peered with a gateway router; routes
// of both policies and families, ECMP, policies with nexthops and options, and NAT.
var commands = [][]string{
	{"ls-add", "sw", "--", "lsp-add", "sw", "p1", "--", "lsp-set-addresses", "p1", "0a:58:0a:00:01:05 10.0.1.5",
		"--", "lsp-add", "sw", "stor", "--", "lsp-set-type", "stor", "router", "--", "lsp-set-addresses", "stor", "router",
		"--", "lsp-set-options", "stor", "router-port=rtos",
		"--", "lsp-add", "sw", "rem", "--", "lsp-set-type", "rem", "remote", "--", "lsp-set-addresses", "rem", "0a:58:64:58:00:03 100.88.0.3/16",
		"--", "lsp-set-options", "rem", "requested-tnl-key=3", "requested-chassis=ch3"},
	{"lr-add", "lr", "--", "lrp-add", "lr", "rtos", "0a:58:cb:cb:00:01", "203.203.0.1/16", "2010:100:200::1/60",
		"--", "lrp-add", "lr", "trtor", "0a:58:64:58:00:08", "100.88.0.8/31", "fd97::8/127", "peer=rtotr",
		"--", "lrp-set-gateway-chassis", "rtos", "ch1", "1"},
	{"lr-add", "gr", "--", "lrp-add", "gr", "rtotr", "0a:58:64:41:00:04", "100.65.0.4/16", "100.88.0.9/31", "peer=trtor"},
	{"lr-nat-add", "lr", "snat", "169.254.0.12", "203.203.0.0/16"},
	{"lr-nat-add", "lr", "dnat_and_snat", "172.18.0.50", "10.10.0.5"},
	{"lr-route-add", "lr", "100.65.0.2", "100.88.0.6"},
	{"--policy=src-ip", "lr-route-add", "lr", "203.203.0.0/16", "100.88.0.14"},
	{"--ecmp", "lr-route-add", "lr", "10.0.0.0/8", "100.88.0.6"},
	{"--ecmp", "lr-route-add", "lr", "10.0.0.0/8", "100.88.0.10"},
	{"lr-route-add", "lr", "2010:100:200::/60", "fd97::9"},
	{"lr-route-add", "gr", "0.0.0.0/0", "172.18.0.1", "rtotr"},
	{"lr-policy-add", "lr", "1004", `inport == "rtos" && ip4.dst == 172.18.0.3`, "reroute", "203.203.0.2"},
	{"lr-policy-add", "lr", "102", "pkt.mark == 42", "allow"},
	{"lr-policy-add", "lr", "100", "ip4.src == 10.10.0.8", "reroute", "100.88.0.6,100.88.0.10", "pkt_mark=50000"},
	{"lr-policy-add", "lr", "99", "ip4.src == 10.10.0.7", "allow", "pkt_mark=1008"},
}

// TestPrintsLikeOVNNBCtl writes a topology with ovn-nbctl, reads it back through our
// client, and requires our printer to print exactly what ovn-nbctl prints.
func TestPrintsLikeOVNNBCtl(t *testing.T) {
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, args := range commands {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var snap *rows.Set
	err = testenv.Eventually(ctx, 10*time.Second, "all rows in the client cache", func(ctx context.Context) error {
		s, err := ovn.Snapshot(ctx, c)
		if err != nil {
			return err
		}
		if len(s.Routes) != 6 || len(s.Policies) != 4 || len(s.NATs) != 2 || len(s.GatewayChassis) != 1 {
			return fmt.Errorf("cache has %d routes, %d policies, %d NATs, %d gateway chassis", len(s.Routes), len(s.Policies), len(s.NATs), len(s.GatewayChassis))
		}
		snap = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := nbctl.New(snap)

	lists := []struct {
		args  []string
		print func(*bytes.Buffer) error
	}{
		{[]string{"lr-route-list", "lr"}, func(b *bytes.Buffer) error { return p.RouteList(b, "lr") }},
		{[]string{"lr-route-list", "gr"}, func(b *bytes.Buffer) error { return p.RouteList(b, "gr") }},
		{[]string{"lr-policy-list", "lr"}, func(b *bytes.Buffer) error { return p.PolicyList(b, "lr") }},
		{[]string{"lr-nat-list", "lr"}, func(b *bytes.Buffer) error { return p.NATList(b, "lr") }},
	}
	for _, l := range lists {
		want, err := nb.NBCtl(ctx, l.args...)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := l.print(&got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%s:\nours:\n%s\novn-nbctl:\n%s", strings.Join(l.args, " "), got.String(), want)
		}
	}

	want, err := nb.NBCtl(ctx, "show")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := p.Show(&got, ""); err != nil {
		t.Fatal(err)
	}
	if g, w := normaliseShow(withoutOurExtras(got.String())), normaliseShow(want); g != w {
		t.Errorf("show differs from ovn-nbctl show beyond our extra lines:\nours:\n%s\novn-nbctl:\n%s", got.String(), want)
	}
	for _, extra := range []string{"peer: rtotr", "requested-chassis: ch3", "requested-tnl-key: 3", `ipv6-lla: "fe80::858:cbff:fecb:1"`} {
		if !strings.Contains(got.String(), extra) {
			t.Errorf("show lacks %q:\n%s", extra, got.String())
		}
	}
	var missing bytes.Buffer
	if err := p.RouteList(&missing, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("route list of an unknown router: %v", err)
	}
}

// withoutOurExtras drops the lines we print beyond ovn-nbctl 23.03.
func withoutOurExtras(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "peer: ") || strings.HasPrefix(trimmed, "requested-") || strings.HasPrefix(trimmed, "ipv6-lla: ") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// normaliseShow sorts switches and routers, and the port and NAT blocks inside each:
// ovn-nbctl prints them in database order, we print them by name.
func normaliseShow(s string) string {
	var entities, blocks, cur []string
	var head string
	flushBlock := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	flushEntity := func() {
		flushBlock()
		if head != "" {
			sort.Strings(blocks)
			entities = append(entities, strings.Join(append([]string{head}, blocks...), "\n"))
		}
		head, blocks = "", nil
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case !strings.HasPrefix(line, " "):
			flushEntity()
			head = line
		case !strings.HasPrefix(line, "     "):
			flushBlock()
			cur = append(cur, line)
		default:
			cur = append(cur, line)
		}
	}
	flushEntity()
	sort.Strings(entities)
	return strings.Join(entities, "\n")
}
