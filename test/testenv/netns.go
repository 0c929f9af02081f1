package testenv

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Network namespaces are driven through the `ip` binary of iproute2 rather than netlink.
// netlink would have to pin the goroutine to an OS thread and setns it for every call,
// and a mistake there leaks a test's namespace into unrelated goroutines; `ip -n NAME`
// does the switch in a child process instead. The commands are also exactly what a
// person reproducing a failure types, and their output is what failure messages show.

// netnsSeq numbers the namespaces of this test binary; with the pid it makes names unique
// across parallel tests and concurrently running test binaries.
var netnsSeq atomic.Uint64

// Netns is a named network namespace (see ip-netns(8)) that lives as long as its test.
type Netns struct {
	// Name is the namespace's name under /run/netns, for `ip -n Name` and `ip netns exec Name`.
	Name string

	mu    sync.Mutex
	links int // interfaces named so far, for the next ethN
}

// NewNetns creates a network namespace with its loopback up and deletes it in t.Cleanup,
// whether or not the test passed. Interfaces inside it are destroyed with it. It needs root
// and the ip binary, and otherwise ends the test through Missing.
func NewNetns(t testing.TB) *Netns {
	t.Helper()
	NeedRoot(t, "creating network namespaces")
	NeedBinaries(t, "ip")
	n := &Netns{Name: fmt.Sprintf("ovnk-%d-%d", os.Getpid(), netnsSeq.Add(1))}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := run(ctx, nil, "ip", "netns", "add", n.Name); err != nil {
		t.Fatalf("create network namespace %s: %v", n.Name, err)
	}
	t.Cleanup(func() {
		// Registered before anything is started inside the namespace, so it runs after
		// the FRR instances' cleanups (t.Cleanup is last-in, first-out).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := run(ctx, nil, "ip", "netns", "delete", n.Name); err != nil {
			t.Errorf("delete network namespace %s: %v", n.Name, err)
		}
	})
	// A fresh namespace has lo down, and then even 127.0.0.1 is unreachable in it.
	if _, err := n.IP(ctx, "link", "set", "lo", "up"); err != nil {
		t.Fatalf("%v", err)
	}
	// Interfaces created from now on skip IPv6 duplicate address detection: their
	// link-local addresses (which BGP uses as IPv6 next hops) work at once instead of
	// after a second or two, and no address in a private namespace can be duplicated.
	if err := n.Sysctl(ctx, "net.ipv6.conf.default.accept_dad", "0"); err != nil {
		t.Fatalf("%v", err)
	}
	return n
}

// Sysctl sets a kernel parameter of the namespace's network stack, such as
// net.ipv4.ip_forward. It writes /proc/sys from a shell inside the namespace rather than
// calling sysctl(8), which minimal images lack.
func (n *Netns) Sysctl(ctx context.Context, key, value string) error {
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	if _, err := n.Exec(ctx, "sh", "-c", `printf '%s\n' "$1" > "$2"`, "sh", value, path); err != nil {
		return fmt.Errorf("set %s=%s: %w", key, value, err)
	}
	return nil
}

// IP runs `ip -n NAME args...` and returns its standard output. The error names the
// namespace and carries the command's standard error.
func (n *Netns) IP(ctx context.Context, args ...string) (string, error) {
	out, err := run(ctx, nil, append([]string{"ip", "-n", n.Name}, args...)...)
	if err != nil {
		return out, fmt.Errorf("in network namespace %s: %w", n.Name, err)
	}
	return out, nil
}

// Exec runs argv inside the namespace (`ip netns exec NAME argv...`) and returns its
// standard output.
func (n *Netns) Exec(ctx context.Context, argv ...string) (string, error) {
	out, err := run(ctx, nil, append([]string{"ip", "netns", "exec", n.Name}, argv...)...)
	if err != nil {
		return out, fmt.Errorf("in network namespace %s: %w", n.Name, err)
	}
	return out, nil
}

// Routes returns `ip route show table all` of the namespace, for failure messages; an
// error is returned as text in place of the routes.
func (n *Netns) Routes(ctx context.Context) string {
	out, err := n.IP(ctx, "route", "show", "table", "all")
	if err != nil {
		return fmt.Sprintf("(routes unavailable: %v)", err)
	}
	return strings.TrimSpace(out)
}

// nextLinkName returns eth0, eth1, … so that interfaces look like a host's and names
// never collide inside one namespace (veth ends of different namespaces may share a name).
func (n *Netns) nextLinkName() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	name := fmt.Sprintf("eth%d", n.links)
	n.links++
	return name
}

// Veth describes one veth pair created by Connect: the end in A and the end in B.
type Veth struct {
	A, B         *Netns
	AName, BName string
	AAddr, BAddr netip.Prefix
}

// Connect joins two namespaces with a veth pair, gives each end its address (an
// interface address with its prefix length, e.g. 192.0.2.1/24; an invalid prefix leaves
// that end without an address) and sets both ends up. The pair goes away with either
// namespace, so there is no separate cleanup.
func Connect(t testing.TB, a *Netns, aAddr netip.Prefix, b *Netns, bAddr netip.Prefix) Veth {
	t.Helper()
	if a == b {
		t.Fatalf("connect network namespace %s to itself: a veth pair needs two namespaces", a.Name)
	}
	v := Veth{A: a, B: b, AName: a.nextLinkName(), BName: b.nextLinkName(), AAddr: aAddr, BAddr: bAddr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Both ends are created directly in their namespaces, so they never appear, even
	// briefly, in the namespace the test runs in (where names could collide).
	if _, err := run(ctx, nil, "ip", "link", "add", v.AName, "netns", a.Name, "type", "veth",
		"peer", "name", v.BName, "netns", b.Name); err != nil {
		t.Fatalf("create veth %s/%s–%s/%s: %v", a.Name, v.AName, b.Name, v.BName, err)
	}
	for _, end := range []struct {
		ns   *Netns
		name string
		addr netip.Prefix
	}{{a, v.AName, aAddr}, {b, v.BName, bAddr}} {
		if end.addr.IsValid() {
			if _, err := end.ns.IP(ctx, "addr", "add", end.addr.String(), "dev", end.name); err != nil {
				t.Fatalf("address veth %s: %v", end.name, err)
			}
		}
		if _, err := end.ns.IP(ctx, "link", "set", end.name, "up"); err != nil {
			t.Fatalf("set veth %s up: %v", end.name, err)
		}
	}
	return v
}
