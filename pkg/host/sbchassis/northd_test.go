package sbchassis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// bindTimeout bounds how long northd may take to bind or unbind a remote port.
const bindTimeout = 10 * time.Second

// addRemotePort adds to the transit switch ts a remote port, as OVN-Kubernetes gives
// each other node, asking for chassis (a chassis name or hostname).
func (z *zone) addRemotePort(t *testing.T, port, mac, ip, chassis string) {
	t.Helper()
	z.nbctl(t, "lsp-add", "ts", port,
		"--", "lsp-set-type", port, "remote",
		"--", "lsp-set-addresses", port, mac+" "+ip,
		"--", "lsp-set-options", port, "requested-chassis="+chassis)
}

// chassisUUID returns the UUID of the chassis named name.
func (z *zone) chassisUUID(t *testing.T, name string) string {
	t.Helper()
	u := z.sbctl(t, "--bare", "--columns=_uuid", "find", "Chassis", "name="+name)
	if u == "" {
		t.Fatalf("no chassis %q in the SB:\n%s", name, z.dump(t))
	}
	return u
}

// awaitBinding waits until northd has set the Port_Binding of port to chassis ("" for
// none).
func (z *zone) awaitBinding(t *testing.T, port, chassis string) {
	t.Helper()
	var got string
	err := testenv.Eventually(z.ctx, bindTimeout, fmt.Sprintf("port %s bound to chassis %q", port, chassis), func(ctx context.Context) error {
		out, err := z.northd.SBCtl(ctx, "--bare", "--columns=chassis", "find", "Port_Binding", "logical_port="+port)
		if err != nil {
			return err
		}
		if got = trim(out); got != chassis {
			return fmt.Errorf("port %s bound to %q", port, got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, z.sbctl(t, "show"))
	}
}

// TestNorthdBindsRemotePorts is why remote chassis exist: northd binds a remote
// transit switch port to the chassis its requested-chassis names once that chassis is
// in the SB as a remote one, and the binding goes when the chassis does.
func TestNorthdBindsRemotePorts(t *testing.T) {
	z := startZone(t)
	z.sbctl(t, "chassis-add", "local", "geneve", "10.0.0.1") // as ovn-controller would register it
	z.nbctl(t, "ls-add", "ts", "--", "set", "Logical_Switch", "ts", "other_config:interconn-ts=ts", "other_config:requested-tnl-key=16711683")

	nodes := []RemoteChassis{remote("node-b", "host-b", "10.0.0.2"), remote("node-c", "host-c", "10.0.0.3")}
	if _, err := z.syncOnce(t, nodes); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	z.addRemotePort(t, "tstor-node-b", "0a:58:64:58:00:02", "100.88.0.2/16", "node-b")
	z.addRemotePort(t, "tstor-node-c", "0a:58:64:58:00:03", "100.88.0.3/16", "host-c") // by hostname
	z.addRemotePort(t, "tstor-local", "0a:58:64:58:00:01", "100.88.0.1/16", "local")
	oldB := z.chassisUUID(t, "node-b")
	z.awaitBinding(t, "tstor-node-b", oldB)
	z.awaitBinding(t, "tstor-node-c", z.chassisUUID(t, "node-c"))
	if typ := z.sbctl(t, "--bare", "--columns=type", "find", "Port_Binding", "logical_port=tstor-node-b"); typ != "remote" {
		t.Errorf("Port_Binding tstor-node-b has type %q, want remote", typ)
	}
	// A chassis without is-remote is not a remote port's home, even when named.
	if err := z.northd.Sync(z.ctx); err != nil {
		t.Fatalf("northd sync: %v", err)
	}
	if got := z.sbctl(t, "--bare", "--columns=chassis", "find", "Port_Binding", "logical_port=tstor-local"); got != "" {
		t.Errorf("remote port naming the local chassis bound to %q, want unbound", got)
	}

	// The node goes: its chassis with it, and the binding.
	res, err := z.syncOnce(t, nodes[1:])
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	checkResult(t, res, "", "", "node-b")
	z.awaitBinding(t, "tstor-node-b", "")
	z.awaitBinding(t, "tstor-node-c", z.chassisUUID(t, "node-c"))

	// It comes back as a new row, and northd binds the port to that one.
	if _, err := z.syncOnce(t, nodes); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	newB := z.chassisUUID(t, "node-b")
	if newB == oldB {
		t.Errorf("re-added node-b kept row %s", oldB)
	}
	z.awaitBinding(t, "tstor-node-b", newB)

	// A port that names a chassis before it exists is bound once it does.
	z.addRemotePort(t, "tstor-node-d", "0a:58:64:58:00:04", "100.88.0.4/16", "node-d")
	if err := z.northd.Sync(z.ctx); err != nil {
		t.Fatalf("northd sync: %v", err)
	}
	z.awaitBinding(t, "tstor-node-d", "")
	if _, err := z.syncOnce(t, append(nodes, remote("node-d", "host-d", "10.0.0.4"))); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	z.awaitBinding(t, "tstor-node-d", z.chassisUUID(t, "node-d"))
}
