//go:build !linux

package main

import (
	"net"
	"net/netip"
)

// pktinfo does nothing off Linux: answers leave from the address the route prefers.
type pktinfo struct{}

func enablePktinfo(*net.UDPConn) (pktinfo, error)       { return pktinfo{}, nil }
func (pktinfo) destination([]byte) (netip.Addr, uint32) { return netip.Addr{}, 0 }
func (pktinfo) source(netip.Addr, uint32) []byte        { return nil }
