package cni

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/poll"
)

// The Interface external_ids of a pod's port, as upstream's CNI writes them:
// ovn-controller binds the port to the logical switch port iface-id of the pod
// iface-id-ver, and marks it ovn-installed once its flows are in.
const (
	ifaceIDKey      = "iface-id"
	ifaceIDVerKey   = "iface-id-ver"
	attachedMACKey  = "attached_mac"
	ipAddressesKey  = "ip_addresses"
	sandboxKey      = "sandbox"
	ovnInstalledKey = "ovn-installed"
)

// PortOwner is the owner tag (external_ids ovnk.io/owner) of the pods' ports, on their
// Port and Interface rows. It is not the agent's (vswitch.OwnerValue): the agent's OVS
// client modifies, deletes and lists as its own only the agent's ports, so no resync of
// the agent's ports can ever unplug a pod, and the plugin's client touches pod ports
// only.
const PortOwner = "ovnk-cni"

// ovsConnectTimeout bounds connecting to the OVS database: a node whose OVS does not
// answer in that time is broken, and the runtime will call again.
const ovsConnectTimeout = 10 * time.Second

// connectOVS connects to the node's Open vSwitch database as the owner of pod ports.
func connectOVS(ctx context.Context, address string) (*vswitch.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, ovsConnectTimeout)
	defer cancel()
	return vswitch.ConnectAs(ctx, address, PortOwner)
}

// portIDs are the Interface external_ids of the port of one pod interface.
func portIDs(plan podnet.Plan, ifc podnet.Interface, containerID string) map[string]string {
	addrs := make([]string, 0, len(ifc.IPs))
	for _, a := range ifc.IPs {
		addrs = append(addrs, a.String())
	}
	return map[string]string{
		ifaceIDKey:       ifc.IfaceID,
		ifaceIDVerKey:    plan.UID,
		attachedMACKey:   ifc.MAC,
		ipAddressesKey:   strings.Join(addrs, ","),
		sandboxKey:       containerID,
		vswitch.OwnerKey: PortOwner,
	}
}

// plugPort makes the host end a port of bridge with the pod's external_ids and waits
// until ovs-vswitchd has added it (an OpenFlow port number); a device vswitchd cannot
// open is an error at once.
func plugPort(ctx context.Context, ovs *vswitch.Client, bridge, hostName string, ids map[string]string) error {
	if _, err := ovs.EnsurePort(ctx, bridge, vswitch.Port{Name: hostName, ExternalIDs: ids}); err != nil {
		return fmt.Errorf("plug %s into %s: %w", hostName, bridge, err)
	}
	if _, err := ovs.WaitPort(ctx, hostName); err != nil {
		return fmt.Errorf("plug %s into %s: %w", hostName, bridge, err)
	}
	return nil
}

// sandboxPorts returns the names of the pod ports (PortOwner's) on bridge whose
// Interface is tagged with the container id (external_ids:sandbox); none when the
// bridge does not exist.
func sandboxPorts(ctx context.Context, ovs *vswitch.Client, bridge, containerID string) ([]string, error) {
	owned, err := ovs.OwnedPorts(ctx, bridge)
	if err != nil {
		return nil, fmt.Errorf("list the ports of %s: %w", bridge, err)
	}
	var out []string
	for _, name := range owned {
		st, ok, err := ovs.Port(ctx, name)
		if err != nil {
			return nil, err
		}
		if ok && st.ExternalIDs[sandboxKey] == containerID {
			out = append(out, name)
		}
	}
	return out, nil
}

// unplugPorts deletes the sandbox's ports from bridge and returns their names.
func unplugPorts(ctx context.Context, ovs *vswitch.Client, bridge, containerID string) ([]string, error) {
	names, err := sandboxPorts(ctx, ovs, bridge, containerID)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, name := range names {
		if _, err := ovs.DeletePort(ctx, bridge, name); err != nil {
			errs = append(errs, fmt.Errorf("unplug %s of container %s from %s: %w", name, containerID, bridge, err))
		}
	}
	return names, errors.Join(errs...)
}

// waitInstalled waits until ovn-controller has marked every port ovn-installed: then
// the pod's flows are in, and a pod that runs has its network. The error names the
// ports still waiting and their logical switch ports.
func waitInstalled(ctx context.Context, ovs *vswitch.Client, ports []string, timeout time.Duration) error {
	return poll.Until(ctx, timeout, "ovn-controller to install "+strings.Join(ports, ", "), func(ctx context.Context) error {
		var waiting []string
		for _, name := range ports {
			st, ok, err := ovs.Port(ctx, name)
			if err != nil {
				return err
			}
			if !ok {
				return poll.Stop(fmt.Errorf("port %s is gone", name))
			}
			if st.ExternalIDs[ovnInstalledKey] != "true" {
				waiting = append(waiting, fmt.Sprintf("%s (logical switch port %s)", name, st.ExternalIDs[ifaceIDKey]))
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("not marked %s=true yet: %s", ovnInstalledKey, strings.Join(waiting, ", "))
		}
		return nil
	})
}
