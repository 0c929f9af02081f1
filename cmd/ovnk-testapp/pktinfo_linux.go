package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// A UDP socket bound to the wildcard address answers from whatever source address the
// kernel's route to the client prefers, which for a pod with two addresses (or a
// secondary address of a subnet) need not be the one the client asked: its connected
// socket then drops the answer. So the server asks the kernel for each datagram's
// destination (IPV6_PKTINFO, or IP_PKTINFO on an IPv4-only socket) and answers from
// it. On the usual dual-stack socket an IPv4 datagram's destination comes as an
// IPv4-mapped IPv6_PKTINFO, and the kernel takes one back for an IPv4 answer too.

// pktinfo is the socket's family, for the control messages.
type pktinfo struct{ family int }

// enablePktinfo asks the kernel for the destination of every datagram c receives.
func enablePktinfo(c *net.UDPConn) (pktinfo, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return pktinfo{}, err
	}
	var p pktinfo
	var serr error
	err = raw.Control(func(fd uintptr) {
		if p.family, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_DOMAIN); serr != nil {
			return
		}
		if p.family == syscall.AF_INET6 {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVPKTINFO, 1)
		} else {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_PKTINFO, 1)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return pktinfo{}, fmt.Errorf("ask for the datagrams' destination addresses: %w", err)
	}
	return p, nil
}

// destination is the address a datagram was sent to, from its control messages, and
// the interface it came in on; invalid when they do not say.
func (p pktinfo) destination(oob []byte) (netip.Addr, uint32) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.Addr{}, 0
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == syscall.IPPROTO_IPV6 && m.Header.Type == syscall.IPV6_PKTINFO && len(m.Data) >= syscall.SizeofInet6Pktinfo:
			return netip.AddrFrom16([16]byte(m.Data[:16])), binary.NativeEndian.Uint32(m.Data[16:20])
		case m.Header.Level == syscall.IPPROTO_IP && m.Header.Type == syscall.IP_PKTINFO && len(m.Data) >= syscall.SizeofInet4Pktinfo:
			// struct in_pktinfo: ifindex, ipi_spec_dst, ipi_addr. ipi_spec_dst is the
			// header's destination for a datagram to a local address, and a local
			// address of the interface for a broadcast: the one to answer from.
			return netip.AddrFrom4([4]byte(m.Data[4:8])), binary.NativeEndian.Uint32(m.Data[0:4])
		}
	}
	return netip.Addr{}, 0
}

// source is the control message that sends an answer from dst, the address the
// datagram was sent to; nil when dst is invalid or a multicast group (no source
// address). The interface is pinned only for a link-local address, which means
// nothing without one; otherwise the route decides.
func (p pktinfo) source(dst netip.Addr, ifindex uint32) []byte {
	if !dst.IsValid() || dst.Unmap().IsMulticast() {
		return nil
	}
	if !dst.Unmap().IsLinkLocalUnicast() {
		ifindex = 0
	}
	if p.family == syscall.AF_INET6 {
		data := make([]byte, syscall.SizeofInet6Pktinfo)
		a := dst.As16() // an IPv4 address as IPv4-mapped, which the kernel takes for an IPv4 answer
		copy(data, a[:])
		binary.NativeEndian.PutUint32(data[16:], ifindex)
		return cmsg(syscall.IPPROTO_IPV6, syscall.IPV6_PKTINFO, data)
	}
	if !dst.Unmap().Is4() {
		return nil
	}
	data := make([]byte, syscall.SizeofInet4Pktinfo)
	binary.NativeEndian.PutUint32(data[0:4], ifindex)
	a := dst.Unmap().As4()
	copy(data[4:8], a[:]) // ipi_spec_dst: the answer's source
	return cmsg(syscall.IPPROTO_IP, syscall.IP_PKTINFO, data)
}

// cmsg is one control message.
func cmsg(level, typ int, data []byte) []byte {
	b := make([]byte, syscall.CmsgSpace(len(data)))
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level = int32(level)
	h.Type = int32(typ)
	h.SetLen(syscall.CmsgLen(len(data)))
	copy(b[syscall.CmsgLen(0):], data)
	return b
}
