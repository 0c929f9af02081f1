package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"
)

// frrDaemonDir is where Debian's frr package installs zebra and bgpd (they are not on PATH).
const frrDaemonDir = "/usr/lib/frr"

// frrVtyGroup is the group FRR's privilege setup insists the run-as user belongs to
// (Debian builds FRR with --enable-vty-group=frrvty).
const frrVtyGroup = "frrvty"

// BGPNeighbor is a BGP peer of an FRR instance: same AS as the router for iBGP, another
// for eBGP.
type BGPNeighbor struct {
	Address netip.Addr
	AS      uint32
}

// BGPConfig is what a test says about one BGP speaker; Render turns it into bgpd.conf.
type BGPConfig struct {
	// AS is the router's autonomous system number; it must be set.
	AS uint32
	// RouterID is optional; FRR picks the highest interface address when it is unset.
	RouterID netip.Addr
	// Neighbors are activated in the address family of their address.
	Neighbors []BGPNeighbor
	// Networks are announced with `network` statements. The import check is turned off,
	// so each is announced whether or not the namespace has a route to it: a test says
	// what to announce without having to build the route that backs it.
	Networks []netip.Prefix
}

// The configuration keeps FRR's "traditional" profile but makes sessions converge in
// seconds: eBGP without route-maps (ebgp-requires-policy would drop every route), a 1s
// connect retry (the default 120s would stall a pair whose first connect raced the peer's
// start), keepalive 3s/hold 9s, and no advertisement delay.
var bgpdTemplate = template.Must(template.New("bgpd.conf").Parse(`frr defaults traditional
hostname {{.Hostname}}
!
router bgp {{.AS}}
{{- if .RouterID.IsValid}}
 bgp router-id {{.RouterID}}
{{- end}}
 no bgp default ipv4-unicast
 no bgp ebgp-requires-policy
 no bgp network import-check
 timers bgp 3 9
{{- range .Neighbors}}
 neighbor {{.Address}} remote-as {{.AS}}
 neighbor {{.Address}} timers connect 1
 neighbor {{.Address}} advertisement-interval 0
{{- end}}
{{- range .Families}}
 !
 address-family {{.Name}} unicast
{{- range .Neighbors}}
  neighbor {{.}} activate
{{- end}}
{{- range .Networks}}
  network {{.}}
{{- end}}
 exit-address-family
{{- end}}
exit
!
`))

type bgpFamily struct {
	Name      string
	Neighbors []netip.Addr
	Networks  []netip.Prefix
}

// Render returns the bgpd configuration for a router named hostname. An address family
// block is written only when a neighbor or a network uses it.
func (c BGPConfig) Render(hostname string) (string, error) {
	if c.AS == 0 {
		return "", fmt.Errorf("bgp config for %s: AS number is not set", hostname)
	}
	v4 := bgpFamily{Name: "ipv4"}
	v6 := bgpFamily{Name: "ipv6"}
	pick := func(a netip.Addr) *bgpFamily {
		if a.Is4() {
			return &v4
		}
		return &v6
	}
	for _, n := range c.Neighbors {
		if !n.Address.IsValid() || n.AS == 0 {
			return "", fmt.Errorf("bgp config for %s: neighbor %v needs an address and an AS number", hostname, n)
		}
		f := pick(n.Address)
		f.Neighbors = append(f.Neighbors, n.Address)
	}
	for _, p := range c.Networks {
		if !p.IsValid() {
			return "", fmt.Errorf("bgp config for %s: invalid network %v", hostname, p)
		}
		f := pick(p.Addr())
		f.Networks = append(f.Networks, p.Masked())
	}
	var families []bgpFamily
	for _, f := range []bgpFamily{v4, v6} {
		if len(f.Neighbors)+len(f.Networks) > 0 {
			families = append(families, f)
		}
	}
	var buf bytes.Buffer
	err := bgpdTemplate.Execute(&buf, struct {
		BGPConfig
		Hostname string
		Families []bgpFamily
	}{c, hostname, families})
	if err != nil {
		return "", fmt.Errorf("render bgp config for %s: %w", hostname, err)
	}
	return buf.String(), nil
}

// FRR is a zebra and a bgpd running inside one network namespace. Everything they write
// (configuration, pid files, vty sockets, zebra's API socket, logs) is in Dir, so
// instances in different namespaces never talk to each other's daemons.
type FRR struct {
	Netns *Netns
	Dir   string

	zebra, bgpd *Process
}

// StartFRR renders cfg and starts FRR with it in ns; see StartFRRConfig.
func StartFRR(t testing.TB, ns *Netns, cfg BGPConfig) *FRR {
	t.Helper()
	conf, err := cfg.Render(ns.Name)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return StartFRRConfig(t, ns, conf)
}

// StartFRRConfig starts zebra and bgpd in ns with bgpdConf as bgpd's configuration (for
// tests that bring their own, such as a generated one), waits until both answer on their
// vty sockets and stops them in t.Cleanup. It needs root and Debian's frr package, and
// otherwise ends the test through Missing.
//
// The daemons run as root (-u root -g root) because the test's directory is private to
// root; FRR then requires root to be a member of the frrvty group, which is added once
// per test binary if it is missing. Their "could chown socket" warnings are harmless.
func StartFRRConfig(t testing.TB, ns *Netns, bgpdConf string) *FRR {
	t.Helper()
	NeedRoot(t, "running FRR in a network namespace")
	zebraPath, bgpdPath := filepath.Join(frrDaemonDir, "zebra"), filepath.Join(frrDaemonDir, "bgpd")
	for _, p := range []string{zebraPath, bgpdPath} {
		if _, err := os.Stat(p); err != nil {
			Missing(t, "FRR daemon %s is not installed (Debian package frr)", p)
		}
	}
	NeedBinaries(t, "vtysh", "ip")
	if err := ensureFRRVtyGroup(); err != nil {
		t.Fatalf("%v", err)
	}

	r := &FRR{Netns: ns, Dir: socketDir(t)}
	zebraConf := fmt.Sprintf("frr defaults traditional\nhostname %s\n!\n", ns.Name)
	for name, content := range map[string]string{"zebra.conf": zebraConf, "bgpd.conf": bgpdConf} {
		if err := os.WriteFile(filepath.Join(r.Dir, name), []byte(content), 0o600); err != nil {
			t.Fatalf("write %s for FRR in %s: %v", name, ns.Name, err)
		}
	}
	zserv := filepath.Join(r.Dir, "zserv.api")
	daemon := func(path, name string) []string {
		return []string{
			"ip", "netns", "exec", ns.Name, path,
			"-u", "root", "-g", "root",
			"-f", filepath.Join(r.Dir, name+".conf"),
			"-i", filepath.Join(r.Dir, name+".pid"),
			"--vty_socket", r.Dir,
			"-z", zserv,
			"-P", "0", // no TCP vty: vtysh reaches the daemon through the socket in Dir
			"--log", "stdout",
			// FRR sizes tables by the fd limit; a container's can be a million.
			"--limit-fds", "1024",
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	// zebra goes first: bgpd connects to its API socket, and routes that bgpd learns
	// reach the kernel through it.
	if r.zebra, err = r.start("zebra", daemon(zebraPath, "zebra")); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(r.zebra.Stop)
	if err := r.waitFor(ctx, r.zebra, "zebra.vty", "zserv.api"); err != nil {
		t.Fatalf("%v", err)
	}
	if r.bgpd, err = r.start("bgpd", daemon(bgpdPath, "bgpd")); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FRR in %s when the test failed:\n%s", ns.Name, r.Diagnostics(context.Background()))
		}
		r.bgpd.Stop()
	})
	if err := r.waitFor(ctx, r.bgpd, "bgpd.vty"); err != nil {
		t.Fatalf("%v", err)
	}
	return r
}

// socketDir returns t.TempDir(), or a shorter directory (removed in t.Cleanup) when unix
// socket paths in it could pass the kernel's 108-byte limit, as under a long $TMPDIR.
func socketDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) <= 80 {
		return dir
	}
	dir, err := os.MkdirTemp("/tmp", "ovnk-frr-")
	if err != nil {
		t.Fatalf("create a short directory for FRR's sockets: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func (r *FRR) start(name string, argv []string) (*Process, error) {
	p, err := startProcess(r.Dir, name, nil, argv...)
	if err != nil {
		return nil, fmt.Errorf("FRR in %s: %w", r.Netns.Name, err)
	}
	return p, nil
}

// waitFor waits until the daemon has created its sockets and answers vtysh; the error
// carries the end of its log.
func (r *FRR) waitFor(ctx context.Context, p *Process, sockets ...string) error {
	err := waitRunning(ctx, p, 20*time.Second, fmt.Sprintf("%s in %s to listen", p.Name, r.Netns.Name), func(ctx context.Context) error {
		for _, s := range sockets {
			if _, err := os.Stat(filepath.Join(r.Dir, s)); err != nil {
				return err
			}
		}
		_, err := r.vtysh(ctx, "-d", p.Name, "-c", "show version")
		return err
	})
	if err != nil {
		return fmt.Errorf("start FRR %s in %s: %w\n%s log:\n%s", p.Name, r.Netns.Name, err, p.Name, p.LogTail(30))
	}
	return nil
}

// Vtysh runs show commands (or any vtysh command) against this instance's daemons and
// returns their output, e.g. Vtysh(ctx, "show bgp summary").
func (r *FRR) Vtysh(ctx context.Context, commands ...string) (string, error) {
	var args []string
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	return r.vtysh(ctx, args...)
}

func (r *FRR) vtysh(ctx context.Context, args ...string) (string, error) {
	out, err := run(ctx, nil, append([]string{"vtysh", "--vty_socket", r.Dir}, args...)...)
	if err != nil {
		return out, fmt.Errorf("vtysh of FRR in %s: %w", r.Netns.Name, err)
	}
	return out, nil
}

// Diagnostics returns what to read when routing went wrong: the BGP summary and table,
// the namespace's kernel routes, and the end of bgpd's log.
func (r *FRR) Diagnostics(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var b strings.Builder
	out, err := r.Vtysh(ctx, "show bgp summary", "show bgp ipv4 unicast", "show bgp ipv6 unicast")
	if err != nil {
		fmt.Fprintf(&b, "(vtysh failed: %v)\n", err)
	}
	fmt.Fprintf(&b, "%s\n--- kernel routes in %s:\n%s\n", strings.TrimSpace(out), r.Netns.Name, r.Netns.Routes(ctx))
	if r.bgpd != nil {
		fmt.Fprintf(&b, "--- bgpd log:\n%s\n", r.bgpd.LogTail(20))
	}
	return b.String()
}

// KernelRoute is one route of `ip -j route show`, with the fields tests look at.
type KernelRoute struct {
	Dst      string `json:"dst"`
	Gateway  string `json:"gateway"`
	Dev      string `json:"dev"`
	Protocol string `json:"protocol"`
}

// WaitForBGPRoute polls the main routing table of the router's namespace (`ip -j route
// show proto bgp`) for up to 30s until a route to exactly prefix is there, i.e. bgpd
// learned it and zebra installed it, and returns that route. On timeout the error carries
// the namespace's routes and the BGP summary. It is a method of FRR rather than of Netns
// because only a BGP daemon puts `proto bgp` routes into a namespace, and it is the one
// whose state explains their absence.
func (r *FRR) WaitForBGPRoute(ctx context.Context, prefix netip.Prefix) (KernelRoute, error) {
	want := prefix.Masked()
	var found KernelRoute
	err := Eventually(ctx, 30*time.Second, fmt.Sprintf("BGP route %s in %s", want, r.Netns.Name), func(ctx context.Context) error {
		family := "-4"
		if want.Addr().Is6() {
			family = "-6"
		}
		out, err := r.Netns.IP(ctx, family, "-j", "route", "show", "proto", "bgp")
		if err != nil {
			return err
		}
		var routes []KernelRoute
		if err := json.Unmarshal([]byte(out), &routes); err != nil {
			return fmt.Errorf("decode routes of %s: %w: %q", r.Netns.Name, err, out)
		}
		var seen []string
		for _, rt := range routes {
			if dst, ok := parseRouteDst(rt.Dst); ok && dst == want {
				found = rt
				return nil
			}
			seen = append(seen, rt.Dst)
		}
		return fmt.Errorf("no bgp route to %s (bgp routes: %v)", want, seen)
	})
	if err != nil {
		return KernelRoute{}, fmt.Errorf("%w\n%s", err, r.Diagnostics(context.WithoutCancel(ctx)))
	}
	return found, nil
}

// parseRouteDst reads the dst of `ip -j route`: "default", a prefix, or a bare address
// for a host route.
func parseRouteDst(dst string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(dst); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(dst); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

var frrGroupOnce struct {
	sync.Once
	err error
}

// ensureFRRVtyGroup adds root to the frrvty group unless it is a member: FRR's privilege
// setup checks the run-as user's groups in /etc/group and exits with "user(root) is not
// part of vty group specified(frrvty)" otherwise. Only frrvty matters here because the
// daemons run with -g root, not the frr group. The change persists; it only grants root
// a group it could take anyway.
func ensureFRRVtyGroup() error {
	frrGroupOnce.Do(func() {
		g, err := user.LookupGroup(frrVtyGroup)
		if err != nil {
			frrGroupOnce.err = fmt.Errorf("look up group %s (created by the frr package): %w", frrVtyGroup, err)
			return
		}
		root, err := user.LookupId("0")
		if err != nil {
			frrGroupOnce.err = fmt.Errorf("look up user root: %w", err)
			return
		}
		gids, err := root.GroupIds()
		if err != nil {
			frrGroupOnce.err = fmt.Errorf("list groups of root: %w", err)
			return
		}
		if slices.Contains(gids, g.Gid) {
			return
		}
		usermod, err := exec.LookPath("usermod")
		if err != nil {
			frrGroupOnce.err = fmt.Errorf("root is not in group %s and usermod is missing to add it: %w", frrVtyGroup, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := run(ctx, nil, usermod, "-aG", frrVtyGroup, root.Username); err != nil {
			frrGroupOnce.err = fmt.Errorf("add root to group %s for FRR: %w", frrVtyGroup, err)
		}
	})
	return frrGroupOnce.err
}
