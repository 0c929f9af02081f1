package vswitch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/test/testenv"
)

// newBridgeLab is a lab with br-int on the userspace datapath.
func newBridgeLab(t *testing.T) *lab {
	t.Helper()
	l := newLab(t)
	if _, err := l.c.EnsureBridge(testCtx(t), vswitch.Bridge{Name: "br-int", DatapathType: "netdev", FailMode: "secure"}); err != nil {
		t.Fatal(err)
	}
	return l
}

// portRows renders what the server holds for one of our ports.
func (l *lab) portRows(t *testing.T, name string) string {
	t.Helper()
	return fmt.Sprintf("bridge=%s %s %s", l.vsctl(t, "port-to-br", name),
		l.record(t, "Port", name, "external_ids"),
		l.record(t, "Interface", name, "type", "options", "external_ids", "mac", "mtu_request"))
}

// TestEnsurePortTransitions moves one port through every configuration (internal with
// and without a requested MAC and MTU, patch) in a random order, twice, and after each
// step checks the rows on the server, the OpenFlow port number, the tap device in the
// namespace, and that repeating the step sends nothing. The external_ids key
// ovn-installed stands for what ovn-controller writes on the interface: it must survive
// every step.
func TestEnsurePortTransitions(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	peer := vswitch.Port{Name: "p0-peer", Type: "patch", Options: map[string]string{"peer": "p0"}}
	if _, err := l.c.EnsurePort(ctx, "br-int", peer); err != nil {
		t.Fatal(err)
	}
	const owner = "external_ids={ovnk.io/owner=ovnk-agent}"
	states := []struct {
		name string
		port vswitch.Port
		want string // portRows
		mtu  int    // of the tap device, 0 for none or vswitchd's choice
	}{{
		name: "internal with MAC and MTU",
		port: vswitch.Port{Name: "p0", Type: "internal", MAC: "0a:58:0a:f4:00:05", MTURequest: 1400,
			ExternalIDs: map[string]string{"iface-id": "ns_pod-a", "iface-id-ver": "v1"}},
		want: "bridge=br-int " + owner + " type=internal options={} " +
			"external_ids={iface-id=ns_pod-a, iface-id-ver=v1, ovn-installed=true} mac=0a:58:0a:f4:00:05 mtu_request=1400",
		mtu: 1400,
	}, {
		name: "internal with another MAC, MTU left to vswitchd",
		port: vswitch.Port{Name: "p0", Type: "internal", MAC: "0a:58:0a:f4:00:06",
			ExternalIDs: map[string]string{"iface-id": "ns_pod-b", "iface-id-ver": ""}},
		want: "bridge=br-int " + owner + " type=internal options={} " +
			"external_ids={iface-id=ns_pod-b, ovn-installed=true} mac=0a:58:0a:f4:00:06 mtu_request=[]",
	}, {
		name: "internal with MAC left to vswitchd",
		port: vswitch.Port{Name: "p0", Type: "internal", ExternalIDs: map[string]string{"iface-id": "", "iface-id-ver": ""}},
		want: "bridge=br-int " + owner + " type=internal options={} external_ids={ovn-installed=true} mac=[] mtu_request=[]",
	}, {
		name: "patch to p0-peer",
		port: vswitch.Port{Name: "p0", Type: "patch", Options: map[string]string{"peer": "p0-peer"},
			ExternalIDs: map[string]string{"iface-id": "ns_pod-c", "iface-id-ver": ""}},
		want: "bridge=br-int " + owner + " type=patch options={peer=p0-peer} " +
			"external_ids={iface-id=ns_pod-c, ovn-installed=true} mac=[] mtu_request=[]",
	}}

	if _, err := l.c.EnsurePort(ctx, "br-int", states[0].port); err != nil {
		t.Fatal(err)
	}
	l.vsctl(t, "set", "Interface", "p0", "external_ids:ovn-installed=true")

	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(strings.TrimSpace(os.Getenv("VSWITCH_SEED")), 10, 64); err == nil {
		seed = s
	}
	t.Logf("order seed %d (set VSWITCH_SEED to replay)", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	order := append([]int{0}, append(r.Perm(len(states)), r.Perm(len(states))...)...)
	for i := 1; i < len(order); i++ {
		prev, s := order[i-1], states[order[i]]
		what := fmt.Sprintf("step %d (%s)", i, s.name)
		before := l.c.Transactions()
		changed, err := l.c.EnsurePort(ctx, "br-int", s.port)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if want := order[i] != prev; changed != want {
			t.Errorf("%s after %q: changed = %v, want %v", what, states[prev].name, changed, want)
		}
		if sent, want := l.c.Transactions()-before, txns(order[i] != prev); sent != want {
			t.Errorf("%s: sent %d transactions, want %d", what, sent, want)
		}
		st, err := l.c.WaitPort(ctx, "p0")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if st.OFPort <= 0 || st.Error != "" || st.Bridge != "br-int" || st.Type != s.port.Type {
			t.Errorf("%s: WaitPort = %+v, want a port number, no error, on br-int, type %q", what, st, s.port.Type)
		}
		if got := l.portRows(t, "p0"); got != s.want {
			t.Errorf("%s: server has\n\t%s\nwant\n\t%s", what, got, s.want)
		}
		if s.port.Type == "internal" {
			l.checkTap(t, what, "p0", s.port.MAC, s.mtu)
		} else {
			l.waitNoLink(t, "p0")
		}
		noTransaction(t, l.c, what+" repeated", func() (bool, error) { return l.c.EnsurePort(ctx, "br-int", s.port) })
	}
}

// checkTap waits until the internal port's tap device is in the namespace and vswitchd
// reports the MAC it uses, then checks both against the requested MAC and MTU (either
// may be unset: then vswitchd's choice is only required to be reported).
func (l *lab) checkTap(t *testing.T, what, name, mac string, mtu int) {
	t.Helper()
	err := testenv.Eventually(testCtx(t), 10*time.Second, what+": tap "+name+" with the requested MAC",
		func(ctx context.Context) error {
			st, _, err := l.c.Port(ctx, name)
			if err != nil {
				return err
			}
			if st.MACInUse == "" || (mac != "" && st.MACInUse != mac) {
				return fmt.Errorf("mac_in_use is %q", st.MACInUse)
			}
			link, err := l.ns.IP(ctx, "-o", "link", "show", "dev", name)
			if err != nil {
				return err
			}
			if !strings.Contains(link, "link/ether "+st.MACInUse) {
				return fmt.Errorf("device is %s, not at mac_in_use %s", strings.TrimSpace(link), st.MACInUse)
			}
			if mtu != 0 && !strings.Contains(link, fmt.Sprintf(" mtu %d ", mtu)) {
				return fmt.Errorf("device is %s, not at MTU %d", strings.TrimSpace(link), mtu)
			}
			return nil
		})
	if err != nil {
		t.Error(err)
	}
}

// waitNoLink waits until the namespace has no device named dev.
func (l *lab) waitNoLink(t *testing.T, dev string) {
	t.Helper()
	err := testenv.Eventually(testCtx(t), 10*time.Second, "device "+dev+" gone from "+l.ns.Name, func(ctx context.Context) error {
		if out, err := l.ns.IP(ctx, "-o", "link", "show", "dev", dev); err == nil {
			return fmt.Errorf("still there: %s", strings.TrimSpace(out))
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestSystemPort plugs an existing device (a veth end in vswitchd's namespace) into the
// bridge, as the CNI plugs a pod's host-side veth.
func TestSystemPort(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	if _, err := l.ns.IP(ctx, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0-pod"); err != nil {
		t.Fatal(err)
	}
	changed, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "veth0", ExternalIDs: map[string]string{"iface-id": "ns_pod"}})
	if err != nil || !changed {
		t.Fatalf("EnsurePort(veth0) = %v, %v; want a change", changed, err)
	}
	st, err := l.c.WaitPort(ctx, "veth0")
	if err != nil {
		t.Fatal(err)
	}
	if st.OFPort <= 0 || st.Type != "" || st.ExternalIDs["iface-id"] != "ns_pod" {
		t.Errorf("WaitPort(veth0) = %+v, want a port number, type system, iface-id ns_pod", st)
	}
	if got := l.vsctl(t, "get", "Interface", "veth0", "ofport"); got != fmt.Sprint(st.OFPort) {
		t.Errorf("server says ofport %s, WaitPort %d", got, st.OFPort)
	}
}

// TestWaitPortReportsInterfaceError plugs a system port whose device does not exist:
// WaitPort must return vswitchd's complaint, naming the port, as soon as vswitchd has
// applied the change rather than at its deadline.
func TestWaitPortReportsInterfaceError(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "nodev0"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := l.c.WaitPort(ctx, "nodev0")
	elapsed := time.Since(start)
	var perr *vswitch.PortError
	if !errors.As(err, &perr) || perr.Port != "nodev0" || !strings.Contains(err.Error(), `"nodev0"`) {
		t.Fatalf("WaitPort(nodev0) = %v, want a *PortError naming nodev0", err)
	}
	t.Logf("after %s: %v", elapsed.Round(time.Millisecond), err)
	if elapsed > 5*time.Second {
		t.Errorf("WaitPort took %s to report the error", elapsed)
	}
	st, found, err := l.c.Port(ctx, "nodev0")
	if err != nil || !found || st.OFPort != -1 || st.Error != perr.Reason {
		t.Errorf("Port(nodev0) = %+v, %v, %v; want ofport -1 and the error %q", st, found, err, perr.Reason)
	}

	// vswitchd watches the kernel's links and retries by itself once the device appears
	// (here within milliseconds), with no change in the database: waiting again is enough.
	if _, err := l.ns.IP(ctx, "link", "add", "nodev0", "type", "veth", "peer", "name", "nodev0-peer"); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "nodev0 added once its device exists", func(ctx context.Context) error {
		_, err := l.c.WaitPort(ctx, "nodev0")
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// TestWaitPortIgnoresEarlierState changes a failing system port into an internal one:
// WaitPort must report the new configuration's outcome, not the error vswitchd recorded
// for the old one, which is still in the database until vswitchd has applied the change.
func TestWaitPortIgnoresEarlierState(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "nodev1"}); err != nil {
		t.Fatal(err)
	}
	var perr *vswitch.PortError
	if _, err := l.c.WaitPort(ctx, "nodev1"); !errors.As(err, &perr) {
		t.Fatalf("WaitPort(nodev1) as a system port without device = %v, want a *PortError", err)
	}
	for i := range 5 {
		typ := []string{"internal", ""}[i%2]
		if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "nodev1", Type: typ}); err != nil {
			t.Fatal(err)
		}
		st, err := l.c.WaitPort(ctx, "nodev1")
		switch {
		case typ == "internal" && (err != nil || st.OFPort <= 0):
			t.Errorf("round %d: WaitPort(nodev1) as an internal port = %+v, %v; want a port number", i, st, err)
		case typ == "" && !errors.As(err, &perr):
			t.Errorf("round %d: WaitPort(nodev1) as a system port without device = %+v, %v; want a *PortError", i, st, err)
		}
	}
}
