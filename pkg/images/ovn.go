package images

import (
	"fmt"

	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/pkg/ovnroot"
)

// OVNImage is the image of pods laid out as upstream OVN-Kubernetes' ovnkube-node, for
// clusters shaped like upstream's: OVN's databases and northd, and their clients, as
// upstream's one image (ovn-daemonset) carries them.
const OVNImage = "ovnk.local/ovn-daemonset:dev"

// OVNEntryPath is the OVN image's entry script, where upstream's image has its own:
// upstream's DaemonSets run `/root/ovnkube.sh COMMAND` in every container.
const OVNEntryPath = "/root/ovnkube.sh"

// OVNPrograms are the OVS and OVN programs of the OVN image, each at its path in the
// OVN root (servers in /usr/sbin, the rest in /usr/bin, both on PATH).
var OVNPrograms = []string{
	"/usr/sbin/ovsdb-server", "/usr/bin/ovsdb-tool", "/usr/bin/ovsdb-client",
	"/usr/bin/ovn-northd", "/usr/bin/ovn-nbctl", "/usr/bin/ovn-sbctl", "/usr/bin/ovn-appctl",
}

// ovnEntry starts one daemon in the foreground under the commands upstream's
// ovnkube-node DaemonSet gives its containers: local-nb-ovsdb and local-sb-ovsdb (a
// standalone database, created from the image's schema on first start, serving on its
// socket in /var/run/ovn) and run-ovn-northd (joining the two). The databases live in
// /etc/ovn, where upstream mounts the node's directory for them.
const ovnEntry = `#!/bin/sh
set -e
run=/var/run/ovn
case "$1" in
local-nb-ovsdb) db=ovnnb_db schema=ovn-nb ;;
local-sb-ovsdb) db=ovnsb_db schema=ovn-sb ;;
run-ovn-northd)
	exec ovn-northd --ovnnb-db="unix:$run/ovnnb_db.sock" --ovnsb-db="unix:$run/ovnsb_db.sock" \
		--pidfile="$run/ovn-northd.pid" --unixctl="$run/ovn-northd.ctl" -vconsole:info -vfile:off ;;
*)
	echo "usage: $0 local-nb-ovsdb | local-sb-ovsdb | run-ovn-northd" >&2
	exit 2 ;;
esac
mkdir -p "$run" /etc/ovn
[ -e "/etc/ovn/$db.db" ] || ovsdb-tool create "/etc/ovn/$db.db" "/usr/share/ovn/$schema.ovsschema"
exec ovsdb-server "/etc/ovn/$db.db" --remote="punix:$run/$db.sock" \
	--unixctl="$run/$db.ctl" --pidfile="$run/$db.pid" -vconsole:info -vfile:off
`

// OVN is the OVN image: OVNPrograms with the OVN root's loader and libraries, the
// release's NB and SB schemas, busybox for the entry script and a shell, and the entry
// script at OVNEntryPath. It has no entrypoint: the DaemonSet names the command, as
// upstream's does.
func OVN(in Inputs) (ociarchive.Image, error) {
	img, err := ovnImage(in)
	if err != nil {
		return ociarchive.Image{}, fmt.Errorf("image %s: %w", OVNImage, err)
	}
	return img, nil
}

func ovnImage(in Inputs) (ociarchive.Image, error) {
	c, err := openOVNRoot(in.OVNRoot, "the OVN programs")
	if err != nil {
		return ociarchive.Image{}, err
	}
	for _, p := range OVNPrograms {
		if err := c.addTreeProgram(p); err != nil {
			return ociarchive.Image{}, err
		}
	}
	return c.shellImage(OVNImage, in.Busybox,
		ociarchive.FromDisk("/"+string(ovnroot.NBSchema), in.OVNRoot.Schema(ovnroot.NBSchema), 0o644),
		ociarchive.FromDisk("/"+string(ovnroot.SBSchema), in.OVNRoot.Schema(ovnroot.SBSchema), 0o644),
		ociarchive.FromBytes(OVNEntryPath, []byte(ovnEntry), 0o755),
		ociarchive.Dir("/etc/ovn", 0),
		ociarchive.Dir("/run/ovn", 0),
		ociarchive.Link("/var/run", "../run"),
	)
}
