package cni

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/vishvananda/netlink"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/test/testenv"
)

const containerID = "3f2b8c0d9e1a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4"

// The pod of testPlan as it looks once wired.
var wiredPod = []string{
	"addr eth0 10.244.0.5/24",
	"addr eth0 fd00:10:244:1::5/64",
	"addr ovn-udn1 10.10.0.5/24",
	"addr ovn-udn1 2014:100:200::5/64",
	"link eth0 0a:58:0a:f4:00:05 mtu 1400 up",
	"link ovn-udn1 0a:58:0a:0a:00:05 mtu 1300 up",
	"route 100.64.0.0/16 via 10.244.0.1 dev eth0",
	"route default via 10.10.0.1 dev ovn-udn1",
	"route default via 2014:100:200::1 dev ovn-udn1",
}

// br-int's ports of the wired pod, with their external_ids.
var wiredPorts = []string{
	"3f2b8c0d9e1a4_1 attached_mac=0a:58:0a:0a:00:05 iface-id=blue.blue_blue_web iface-id-ver=" + podUID +
		" ip_addresses=10.10.0.5/24,2014:100:200::5/64 ovnk.io/owner=ovnk-cni sandbox=" + containerID,
	"3f2b8c0d9e1a4b5 attached_mac=0a:58:0a:f4:00:05 iface-id=blue_web iface-id-ver=" + podUID +
		" ip_addresses=10.244.0.5/24,fd00:10:244:1::5/64 ovnk.io/owner=ovnk-cni sandbox=" + containerID,
}

func diff(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// checkWired fails the test unless the pod, the node's veths and br-int's ports are
// those of testPlan.
func (l *lab) checkWired(t *testing.T, netnsPath string) {
	t.Helper()
	if d := diff(wiredPod, podState(t, netnsPath)); d != "" {
		t.Errorf("pod (-want +got):\n%s", d)
	}
	var ports []string
	for _, p := range l.ports(t, containerID) {
		ports = append(ports, strings.Replace(p, " ovn-installed=true", "", 1)) // ovn-controller's, where it runs
	}
	if d := diff(wiredPorts, ports); d != "" {
		t.Errorf("br-int ports (-want +got):\n%s", d)
	}
	h := handleAt(t, l.node.Name)
	for i, want := range []struct {
		name string
		mtu  int
	}{{"3f2b8c0d9e1a4b5", 1400}, {"3f2b8c0d9e1a4_1", 1300}} {
		link, err := h.LinkByName(want.name)
		if err != nil {
			t.Errorf("host end %d: %v", i, err)
			continue
		}
		a := link.Attrs()
		if a.MTU != want.mtu || a.Flags&net.FlagUp == 0 || a.RawFlags&0x80 == 0 { // IFF_NOARP
			t.Errorf("host end %s: mtu %d, flags %v (raw %#x); want mtu %d, up, NOARP", want.name, a.MTU, a.Flags, a.RawFlags, want.mtu)
		}
	}
	// vswitchd opened both: they have OpenFlow port numbers.
	out, err := l.ovs.VSCtl(l.ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=ofport,error", "find", "Interface", "external_ids:sandbox="+containerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if ofport, errText, _ := strings.Cut(line, ","); ofport == "" || ofport == "-1" || ofport == "0" || errText != "" {
			t.Errorf("vswitchd has not added a port: ofport %q, error %q", ofport, errText)
		}
	}
}

// TestAddCheckDel wires a pod with two interfaces into a real OVS and a real pod
// namespace, checks the namespace, the veths, the ports and the result; wires it again
// (the same state); checks it; and removes it, again and again, also after the pod's
// namespace is gone.
func TestAddCheckDel(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	p := l.plugin(t)
	conf := l.config(t, agent(t, servePlan(testPlan(podUID))), "")

	res, err := p.Add(l.ctx, args("ADD", containerID, ns), conf)
	if err != nil {
		t.Fatal(err)
	}
	l.checkWired(t, ns)
	var ifaces []string
	for _, i := range res.Interfaces {
		ifaces = append(ifaces, i.Name+"@"+i.Sandbox)
	}
	if want := []string{"3f2b8c0d9e1a4b5@", "eth0@" + ns, "3f2b8c0d9e1a4_1@", "ovn-udn1@" + ns}; !slices.Equal(ifaces, want) {
		t.Errorf("result interfaces %v, want %v", ifaces, want)
	}
	var ips []string
	for _, ip := range res.IPs {
		ips = append(ips, res.Interfaces[*ip.Interface].Name+" "+ip.Address.String()+" gw "+ip.Gateway.String())
	}
	wantIPs := []string{
		"eth0 10.244.0.5/24 gw <nil>", "eth0 fd00:10:244:1::5/64 gw <nil>",
		"ovn-udn1 10.10.0.5/24 gw 10.10.0.1", "ovn-udn1 2014:100:200::5/64 gw 2014:100:200::1",
	}
	if !slices.Equal(ips, wantIPs) {
		t.Errorf("result ips %q, want %q", ips, wantIPs)
	}

	// A second ADD of the same sandbox wires it anew: the same state.
	res, err = p.Add(l.ctx, args("ADD", containerID, ns), conf)
	if err != nil {
		t.Fatalf("second ADD: %v", err)
	}
	l.checkWired(t, ns)

	conf.PrevResult = res
	if err := p.Check(l.ctx, args("CHECK", containerID, ns), conf); err != nil {
		t.Errorf("CHECK of a wired pod: %v", err)
	}
	// An address gone from the pod: CHECK says which.
	h := handleAt(t, ns)
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrDel(eth0, &netlink.Addr{IPNet: netconf.IPNetOf(netip.MustParsePrefix("10.244.0.5/24"))}); err != nil {
		t.Fatal(err)
	}
	err = p.Check(l.ctx, args("CHECK", containerID, ns), conf)
	if err == nil || !strings.Contains(err.Error(), "check of pod blue/web") || !strings.Contains(err.Error(), "eth0") || !strings.Contains(err.Error(), "lacks address 10.244.0.5/24") {
		t.Errorf("CHECK of a pod without its address: %v", err)
	}

	if err := p.Del(l.ctx, args("DEL", containerID, ns), conf); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	l.nothingLeft(t, containerID, ns)
	if err := p.Del(l.ctx, args("DEL", containerID, ns), conf); err != nil {
		t.Errorf("second DEL: %v", err)
	}
	deleteNetns(t, ns)
	if err := p.Del(l.ctx, args("DEL", containerID, ns), conf); err != nil {
		t.Errorf("DEL after the namespace is gone: %v", err)
	}
}

// The runtime deletes a sandbox's namespace (a crash, a reboot) before DEL: the veths
// go with it, the ports stay behind until DEL removes them.
func TestDelAfterNetnsGone(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	p := l.plugin(t)
	conf := l.config(t, agent(t, servePlan(testPlan(podUID))), "")
	if _, err := p.Add(l.ctx, args("ADD", containerID, ns), conf); err != nil {
		t.Fatal(err)
	}
	deleteNetns(t, ns)
	if got := l.ports(t, containerID); len(got) != 2 {
		t.Fatalf("ports after the namespace went: %v, want both still there", got)
	}
	// DEL as containerd sends it then: no namespace.
	if err := p.Del(l.ctx, args("DEL", containerID, ""), conf); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	l.nothingLeft(t, containerID, "")
}

// A failure half-way through ADD leaves nothing behind: not a veth, not a port, not an
// interface in the pod.
func TestAddFailureLeavesNothing(t *testing.T) {
	l := newLab(t)
	tests := []struct {
		name   string
		change func(p *podnet.Plan)
		extra  string
		want   string
	}{
		{
			name: "a route the kernel refuses",
			change: func(p *podnet.Plan) {
				p.Interfaces[1].Routes = append(p.Interfaces[1].Routes, podnet.Route{Dst: netip.MustParsePrefix("198.51.100.0/24"), Via: netip.MustParseAddr("192.0.2.1")})
			},
			want: "add route to 198.51.100.0/24 via 192.0.2.1 dev ovn-udn1",
		},
		{
			name:  "the bridge is missing",
			extra: `,"bridge":"br-nope"`,
			want:  `plug 3f2b8c0d9e1a4b5 into br-nope`,
		},
		{
			name:   "an interface name the pod has",
			change: func(p *podnet.Plan) { p.Interfaces[1].Name = "lo" },
			want:   "create veth 3f2b8c0d9e1a4_1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := podNetns(t)
			plan := testPlan(podUID)
			if tt.change != nil {
				tt.change(&plan)
			}
			conf := l.config(t, agent(t, servePlan(plan)), tt.extra)
			_, err := l.plugin(t).Add(l.ctx, args("ADD", containerID, ns), conf)
			var e *types.Error
			if !errors.As(err, &e) || e.Code != CodeDataplane || !strings.Contains(e.Msg, "add of pod blue/web (container "+containerID+")") || !strings.Contains(e.Details, tt.want) {
				t.Fatalf("ADD: %v; want code %d naming the pod and %q", err, CodeDataplane, tt.want)
			}
			l.nothingLeft(t, containerID, ns)
		})
	}
}

// While the agent answers that the pod is not allocated yet, ADD asks again, and
// wires the pod once the answer is the plan.
func TestAddWaitsForTheAllocation(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	var calls atomic.Int32
	url := agent(t, func(*http.Request) (int, any) {
		if calls.Add(1) <= 3 {
			return http.StatusTooEarly, podnet.Error{Reason: podnet.ReasonNotAllocated, Message: "the leader has not allocated pod blue/web's addresses yet"}
		}
		return http.StatusOK, testPlan(podUID)
	})
	if _, err := l.plugin(t).Add(l.ctx, args("ADD", containerID, ns), l.config(t, url, "")); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 4 {
		t.Errorf("the agent was asked %d times, want 4 (three not allocated, then the plan)", calls.Load())
	}
	l.checkWired(t, ns)
}

// markInstalled stands in for ovn-controller: once the sandbox's ports are all on
// br-int it marks them ovn-installed, as ovn-controller does once their flows are in.
// marked is set before the mark is written. The goroutine ends with the test (or its
// 30 s), and the test waits for it.
func (l *lab) markInstalled(t *testing.T, ports int, marked *atomic.Bool) {
	ctx, cancel := context.WithCancel(l.ctx)
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		err := testenv.Eventually(ctx, 30*time.Second, "the sandbox's ports", func(ctx context.Context) error {
			out, err := l.ovs.VSCtl(ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name", "find", "Interface", "external_ids:sandbox="+containerID)
			if err != nil {
				return err
			}
			names := strings.Fields(out)
			if len(names) < ports {
				return errors.New("not all there yet")
			}
			marked.Store(true)
			for _, n := range names {
				if _, err := l.ovs.VSCtl(ctx, "set", "Interface", n, "external_ids:ovn-installed=true"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			t.Errorf("mark ovn-installed: %v", err)
		}
	}()
}

// ADD returns once ovn-controller has marked the ports ovn-installed, and not before;
// without the mark it gives up after the timeout, leaving nothing behind.
func TestAddWaitsForOVNInstalled(t *testing.T) {
	l := newLab(t)
	url := agent(t, servePlan(testPlan(podUID)))

	ns := podNetns(t)
	var marked atomic.Bool
	l.markInstalled(t, 2, &marked)
	if _, err := l.plugin(t).Add(l.ctx, args("ADD", containerID, ns), l.config(t, url, `,"ovnInstalledTimeout":"30s"`)); err != nil {
		t.Fatal(err)
	}
	if !marked.Load() {
		t.Error("ADD returned before the ports were marked ovn-installed")
	}
	l.checkWired(t, ns)

	ns = podNetns(t)
	_, err := l.plugin(t).Add(l.ctx, args("ADD", containerID, ns), l.config(t, url, `,"ovnInstalledTimeout":"1s"`))
	var e *types.Error
	if !errors.As(err, &e) || e.Code != CodeTryAgainLater || !strings.Contains(e.Msg, "pod blue/web: ovn-controller has not installed its ports") ||
		!strings.Contains(e.Details, "logical switch port blue_web") {
		t.Fatalf("ADD without ovn-controller: %v; want code %d naming the pod and its ports", err, CodeTryAgainLater)
	}
	l.nothingLeft(t, containerID, ns)
}

// With the OVS database down, DEL still removes the veths and fails, so the runtime
// calls it again; once OVS is back, DEL removes the ports.
func TestDelWithoutOVS(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	p := l.plugin(t)
	conf := l.config(t, agent(t, servePlan(testPlan(podUID))), "")
	if _, err := p.Add(l.ctx, args("ADD", containerID, ns), conf); err != nil {
		t.Fatal(err)
	}
	down := conf
	down.OVSAddress = "unix:" + t.TempDir() + "/db.sock"
	start := time.Now()
	err := p.Del(l.ctx, args("DEL", containerID, ns), down)
	var e *types.Error
	if !errors.As(err, &e) || e.Code != CodeDataplane || !strings.Contains(e.Error(), "del of pod blue/web") || !strings.Contains(e.Error(), down.OVSAddress[len("unix:"):]) {
		t.Errorf("DEL without OVS: %v; want code %d naming the pod and the database", err, CodeDataplane)
	}
	t.Logf("DEL without OVS took %s", time.Since(start))
	if got := l.hostEnds(t, containerID); len(got) > 0 {
		t.Errorf("veths left after DEL without OVS: %v", got)
	}
	if err := p.Del(l.ctx, args("DEL", containerID, ns), conf); err != nil {
		t.Fatalf("DEL with OVS back: %v", err)
	}
	l.nothingLeft(t, containerID, ns)
}
