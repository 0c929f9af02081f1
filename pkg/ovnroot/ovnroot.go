// Package ovnroot finds the OVN and OVS release ovnk is built and tested for: OVN 25.03
// and OVS 3.5 from Debian trixie, unpacked by scripts/ovn-root.sh into a cached root
// outside the repository. The root's bin/ holds a launcher per program that runs it
// through trixie's own loader and libraries, so the host's libc and the host's OVN
// packages (if any) play no part. Tests, the sandbox and scripts all run OVN this way.
package ovnroot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Env names the environment variable that points at the root; scripts/deps.sh prints
// it for the Makefile. Without it the root is looked for where scripts/ovn-root.sh
// puts it by default.
const Env = "OVNK_OVN_ROOT"

// recipe is the first line of a complete root's stamp; it must equal RECIPE in
// scripts/ovn-root.sh, which writes the stamp last (a test holds them together).
const recipe = "recipe 2"

// Programs are the programs a root has launchers for: PROGRAMS in scripts/ovn-root.sh
// (a test holds them together).
var Programs = []string{"ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl",
	"ovn-northd", "ovn-controller", "ovn-nbctl", "ovn-sbctl", "ovn-trace", "ovn-appctl"}

// Files of the root that the script writes and this package reads.
const (
	stampFile    = ".ovnk-root"     // the recipe, then the package versions; written last
	programsFile = ".ovnk-programs" // "NAME TARGET" a line: what each launcher runs
)

// ProvisionCommand is what a user runs to create the root.
const ProvisionCommand = "scripts/ovn-root.sh (or `make deps`)"

// Schema names a database schema shipped by the root.
type Schema string

// The schemas of the release: the Northbound (NB 7.11.0 in 25.03, the one our models come
// from), the Southbound northd and ovn-trace need, and OVS's Open_vSwitch.
const (
	NBSchema      Schema = "usr/share/ovn/ovn-nb.ovsschema"
	SBSchema      Schema = "usr/share/ovn/ovn-sb.ovsschema"
	VSwitchSchema Schema = "usr/share/openvswitch/vswitch.ovsschema"
)

// Root is a complete, provisioned root.
type Root struct{ Dir string }

// DefaultDir is where scripts/ovn-root.sh puts the root unless told otherwise:
// $OVNK_CACHE_DIR, else $XDG_CACHE_HOME/ovnk, else ~/.cache/ovnk, then ovn-trixie.
func DefaultDir() (string, error) {
	cache := os.Getenv("OVNK_CACHE_DIR")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no place for the OVN root (%w): set %s or OVNK_CACHE_DIR", err, Env)
		}
		cache = filepath.Join(dir, "ovnk")
	}
	return filepath.Join(cache, "ovn-trixie"), nil
}

// Find returns the root named by $OVNK_OVN_ROOT, or the one at DefaultDir. It fails,
// naming the directory and the command that provisions it, unless the root is complete:
// an interrupted or outdated root is never used.
func Find() (Root, error) {
	dir := os.Getenv(Env)
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return Root{}, err
		}
	}
	return Open(dir)
}

// Open checks that dir holds a complete root: the stamp of the current recipe, the
// schemas, and what every launcher runs.
func Open(dir string) (Root, error) {
	stamp, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil {
		return Root{}, fmt.Errorf("no OVN 25.03 root at %s: run %s", dir, ProvisionCommand)
	}
	if first, _, _ := strings.Cut(string(stamp), "\n"); first != recipe {
		return Root{}, fmt.Errorf("the OVN root at %s was made by an older recipe (%q): run %s to rebuild it", dir, first, ProvisionCommand)
	}
	incomplete := func(err error) error {
		return fmt.Errorf("the OVN root at %s is incomplete (%w): run %s to rebuild it", dir, err, ProvisionCommand)
	}
	r := Root{Dir: dir}
	for _, s := range []Schema{NBSchema, SBSchema, VSwitchSchema} {
		if _, err := os.Stat(r.Schema(s)); err != nil {
			return Root{}, incomplete(err)
		}
	}
	targets, err := os.ReadFile(filepath.Join(dir, programsFile))
	if err != nil {
		return Root{}, incomplete(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(targets)), "\n") {
		_, target, ok := strings.Cut(line, " ")
		if !ok {
			return Root{}, incomplete(fmt.Errorf("%s: bad line %q", programsFile, line))
		}
		if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
			return Root{}, incomplete(err)
		}
	}
	return r, nil
}

// Program returns the launcher of a program of the release, such as "ovn-trace".
func (r Root) Program(name string) (string, error) {
	p := filepath.Join(r.Dir, "bin", name)
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("the OVN root at %s has no %s: run %s to rebuild it", r.Dir, name, ProvisionCommand)
	}
	return p, nil
}

// Schema returns the path of one of the release's schemas.
func (r Root) Schema(s Schema) string { return filepath.Join(r.Dir, string(s)) }

// versionRe finds the release number in the first line of `--version`: "ovn-northd
// 25.03.0" or "ovs-vswitchd (Open vSwitch) 3.5.0".
var versionRe = regexp.MustCompile(`\s(\d+\.\d+\.\d+)\s*$`)

// Versions asks the programs themselves which releases they are, as "ovn 25.03.0, ovs
// 3.5.0", so what a test log says is what ran.
func (r Root) Versions(ctx context.Context) (string, error) {
	ovn, err := r.version(ctx, "ovn-northd")
	if err != nil {
		return "", err
	}
	ovs, err := r.version(ctx, "ovs-vswitchd")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("ovn %s, ovs %s", ovn, ovs), nil
}

func (r Root) version(ctx context.Context, program string) (string, error) {
	p, err := r.Program(program)
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", p, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	m := versionRe.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return "", fmt.Errorf("%s --version printed no release number: %q", p, first)
	}
	return m[1], nil
}
