package netconf

import (
	"net"
	"net/netip"
	"sync/atomic"
)

// Dump line formats, for the tests' dump of a real namespace.
var (
	DumpLink  = dumpLink
	DumpRoute = dumpRoute
	DumpRule  = dumpRule
)

// CountWrites makes h count the writes that reached its kernel and succeeded, and
// returns the count so far; the tests use it to show a repeated Sync writes nothing.
func CountWrites(h *Host) func() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &countingKernel{kernel: h.k}
	h.k = c
	return func() int { return int(c.n.Load()) }
}

type countingKernel struct {
	kernel
	n atomic.Int64
}

func (c *countingKernel) count(err error) error {
	if err == nil {
		c.n.Add(1)
	}
	return err
}

func (c *countingKernel) setMAC(l link, mac net.HardwareAddr) error {
	return c.count(c.kernel.setMAC(l, mac))
}
func (c *countingKernel) setMTU(l link, mtu int) error    { return c.count(c.kernel.setMTU(l, mtu)) }
func (c *countingKernel) setUp(l link) error              { return c.count(c.kernel.setUp(l)) }
func (c *countingKernel) setAlias(l link, a string) error { return c.count(c.kernel.setAlias(l, a)) }
func (c *countingKernel) setMaster(l link, m int) error   { return c.count(c.kernel.setMaster(l, m)) }
func (c *countingKernel) addVRF(name string, t int) error { return c.count(c.kernel.addVRF(name, t)) }
func (c *countingKernel) deleteLink(l link) error         { return c.count(c.kernel.deleteLink(l)) }
func (c *countingKernel) addAddr(l link, p netip.Prefix, noPrefixRoute bool) error {
	return c.count(c.kernel.addAddr(l, p, noPrefixRoute))
}
func (c *countingKernel) delAddr(l link, p netip.Prefix) error {
	return c.count(c.kernel.delAddr(l, p))
}
func (c *countingKernel) addRoute(r route) error     { return c.count(c.kernel.addRoute(r)) }
func (c *countingKernel) replaceRoute(r route) error { return c.count(c.kernel.replaceRoute(r)) }
func (c *countingKernel) delRoute(r route) error     { return c.count(c.kernel.delRoute(r)) }
func (c *countingKernel) addRule(r rule) error       { return c.count(c.kernel.addRule(r)) }
func (c *countingKernel) delRule(r rule) error       { return c.count(c.kernel.delRule(r)) }
