package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// The sandbox's networks. Every node is a network namespace whose eth1 is a veth into
// the underlay namespace, where a Linux bridge joins them all, as the switch of a rack
// would (kind's 172.18.0.0/16). The underlay also routes: to the outside namespace, a
// stand-in for the internet on TEST-NET-1 (RFC 5737), whose who-am-i server tells what
// source address a connection from the cluster arrives with.
const (
	underlayBridge = "br-underlay"
	// UnderlayGateway is the underlay's own address on the bridge: every node's
	// default route.
	UnderlayGateway = "172.18.0.1"
	underlayPrefix  = 16
	// outsideGateway and outsideAddr are the two ends of the underlay's veth to the
	// outside world.
	outsideGateway = "192.0.2.1"
	outsideAddr    = "192.0.2.10"
	outsidePrefix  = 24
	// whoAmIAddr is where the outside's who-am-i server listens.
	whoAmIAddr = outsideAddr + ":8080"

	// nodeUplink is the node's underlay veth, a port of its gateway bridge.
	nodeUplink = "eth1"
	// GatewayBridge is the node's external bridge: the netdev bridge holding the node's
	// address and its uplink (userspace tunnelling needs the tunnel endpoint on an OVS
	// bridge), as the agent's --gateway-bridge names it.
	GatewayBridge = "br-ex"
)

// nodeAddress is node i's underlay address (i from 0): 172.18.0.2/16 and up, as on kind.
func nodeAddress(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 18, 0, byte(i + 2)}), underlayPrefix)
}

// nodeMAC is node i's gateway bridge MAC: fixed, as the first packet to a tunnel peer is
// lost while OVS resolves a MAC it has not seen (docs/testing.md), and derived from the
// address the way Docker derives its (02:42 and the IPv4 address).
func nodeMAC(i int) string {
	a := nodeAddress(i).Addr().As4()
	return fmt.Sprintf("02:42:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3])
}

// Namespace names of a sandbox, from the prefix of its directory.
func underlayNetns(prefix string) string { return prefix + "underlay" }
func outsideNetns(prefix string) string  { return prefix + "outside" }
func nodeNetns(prefix string, i int) string {
	return prefix + "n" + strconv.Itoa(i+1)
}

// createNetworks makes the underlay and outside namespaces and every node's namespace
// with its uplink in the underlay's bridge. Namespaces of this sandbox left by a
// directory removed by hand are deleted first: their names are this directory's.
func (s *Sandbox) createNetworks(ctx context.Context) error {
	if err := deleteNetworks(ctx, s.Dir); err != nil {
		return err
	}
	ul, out := s.Underlay, s.Outside
	steps := [][]string{
		{"ip", "-n", ul, "link", "add", underlayBridge, "type", "bridge"},
		{"ip", "-n", ul, "addr", "add", UnderlayGateway + "/" + strconv.Itoa(underlayPrefix), "dev", underlayBridge},
		{"ip", "-n", ul, "link", "set", underlayBridge, "up"},
		// The underlay's end is named after where it leads.
		{"ip", "link", "add", "outside", "netns", ul, "type", "veth", "peer", "name", "eth0", "netns", out},
		{"ip", "-n", ul, "addr", "add", outsideGateway + "/" + strconv.Itoa(outsidePrefix), "dev", "outside"},
		{"ip", "-n", ul, "link", "set", "outside", "up"},
		{"ip", "-n", out, "addr", "add", outsideAddr + "/" + strconv.Itoa(outsidePrefix), "dev", "eth0"},
		{"ip", "-n", out, "link", "set", "eth0", "up"},
		{"ip", "-n", out, "route", "add", "default", "via", outsideGateway},
	}
	for _, ns := range []string{ul, out} {
		if err := addNetns(ctx, ns); err != nil {
			return err
		}
	}
	for _, argv := range steps {
		if _, err := run(ctx, nil, argv...); err != nil {
			return err
		}
	}
	if err := writeSysctl(ul, "net.ipv4.ip_forward", "1"); err != nil {
		return err
	}
	for i, n := range s.Nodes {
		// The veth's ends are made in their namespaces, never in the host's, where the
		// names could clash with anything.
		port := "n" + strconv.Itoa(i+1)
		if err := addNetns(ctx, n.Netns); err != nil {
			return err
		}
		for _, argv := range [][]string{
			{"ip", "link", "add", nodeUplink, "netns", n.Netns, "type", "veth", "peer", "name", port, "netns", ul},
			{"ip", "-n", ul, "link", "set", port, "master", underlayBridge, "up"},
			// arp off: the kernel must not answer ARP for the node's address (held by the
			// bridge) with the veth's MAC, or Geneve packets may miss the bridge.
			{"ip", "-n", n.Netns, "link", "set", nodeUplink, "arp", "off", "up"},
		} {
			if _, err := run(ctx, nil, argv...); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}

// deleteNetworks deletes every namespace of the sandbox in dir: nodes, underlay,
// outside world and pods.
func deleteNetworks(ctx context.Context, dir string) error {
	names, err := netnsesWithPrefix(netnsPrefix(dir))
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, deleteNetns(ctx, name))
	}
	return errors.Join(errs...)
}

// installHost does, in a node whose Open_vSwitch database and vswitchd run, what the
// node's installer would: the gateway bridge (netdev, with its fixed MAC) holding the
// uplink, the node's address on it and the default route to the underlay. The OVN
// settings (ovn-remote, ovn-encap-*, bridge mappings, br-int) are the agent's.
func (s *Sandbox) installHost(ctx context.Context, n Node, vsctl func(ctx context.Context, args ...string) (string, error)) error {
	_, err := vsctl(ctx, "--may-exist", "add-br", GatewayBridge,
		"--", "set", "Bridge", GatewayBridge, "datapath_type=netdev", "other_config:hwaddr="+n.MAC,
		"--", "--may-exist", "add-port", GatewayBridge, nodeUplink)
	if err != nil {
		return fmt.Errorf("node %s: gateway bridge: %w", n.Name, err)
	}
	for _, args := range [][]string{
		{"link", "set", GatewayBridge, "address", n.MAC},
		{"addr", "add", n.Address, "dev", GatewayBridge},
		{"link", "set", GatewayBridge, "up"},
		{"route", "add", "default", "via", UnderlayGateway},
	} {
		if _, err := run(ctx, nil, append([]string{"ip", "-n", n.Netns}, args...)...); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}
