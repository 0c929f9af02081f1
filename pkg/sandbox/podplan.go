package sandbox

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology"
)

// Interface names inside a pod, as OVN-Kubernetes' CNI and Multus give them: the
// default network is eth0 (for a pod of a primary user-defined network it is
// infrastructure-locked: probes only, no default route), the primary user-defined
// network ovn-udn1, secondary networks net1, net2, … in network-name order.
const (
	defaultIfName    = "eth0"
	primaryUDNIfName = "ovn-udn1"
	secondaryIfName  = "net"
)

// uidTag is the part of a pod's UID its namespace and host interfaces are named by:
// 12 hex digits, so a host interface name (15 bytes at most) fits it with a suffix.
func uidTag(uid string) string {
	s := strings.ReplaceAll(uid, "-", "")
	if len(s) > 12 {
		s = s[:12]
	}
	return s
}

// podNetnsPrefix starts the names of the pod namespaces of the sandbox whose namespace
// prefix is prefix; the pod's UID tag follows.
func podNetnsPrefix(prefix string) string { return prefix + "p" }

// podNetns names the namespace of the pod with this UID.
func podNetns(prefix, uid string) string { return podNetnsPrefix(prefix) + uidTag(uid) }

// planPod turns a pod of the cluster state into its wiring: one interface per network
// the pod is on, with the network's MTU, the annotation's MAC, addresses and routes, and
// default routes through the gateways of its primary interface.
func planPod(st *cluster.State, p *cluster.Pod, prefix string) (podPlan, error) {
	plan := podPlan{Ref: p.Namespace + "/" + p.Name, UID: p.UID, Netns: podNetns(prefix, p.UID)}
	if p.UID == "" {
		return plan, fmt.Errorf("pod %s has no UID", plan.Ref)
	}
	type entry struct {
		net   *cluster.Network
		iface cluster.PodInterface
	}
	var def, primary *entry
	var secondaries []*entry
	for name, iface := range p.Networks {
		i := slices.IndexFunc(st.Networks, func(n *cluster.Network) bool { return n.Name == name })
		if i < 0 {
			return plan, fmt.Errorf("pod %s is on network %s, which the cluster state does not hold", plan.Ref, name)
		}
		e := &entry{st.Networks[i], iface}
		switch {
		case e.net.IsDefault():
			def = e
		case iface.Role == cluster.PodRolePrimary:
			primary = e
		default:
			secondaries = append(secondaries, e)
		}
	}
	slices.SortFunc(secondaries, func(a, b *entry) int { return strings.Compare(a.net.Name, b.net.Name) })
	add := func(e *entry, name string) error {
		ifc := podIface{
			Name:    name,
			Host:    uidTag(p.UID) + "_" + strconv.Itoa(len(plan.Ifaces)),
			IfaceID: topology.PodPortName(e.net, p),
			MAC:     e.iface.MAC,
			MTU:     e.net.MTU,
			IPs:     e.iface.IPs,
		}
		if ifc.MTU == 0 {
			ifc.MTU = cluster.DefaultMTU
		}
		if len(ifc.IPs) == 0 {
			return fmt.Errorf("pod %s has no addresses on network %s", plan.Ref, e.net.Name)
		}
		// The default network's entry has an empty role on a cluster without
		// user-defined networks: it is then the primary one.
		if e.iface.Role == cluster.PodRolePrimary || e.iface.Role == "" && e.net.IsDefault() {
			for _, gw := range e.iface.Gateways {
				ifc.Routes = append(ifc.Routes, podRoute{Dst: netip.PrefixFrom(unspecified(gw), 0), Via: gw})
			}
		}
		for _, r := range e.iface.Routes {
			ifc.Routes = append(ifc.Routes, podRoute{Dst: r.Dest, Via: r.NextHop})
		}
		plan.Ifaces = append(plan.Ifaces, ifc)
		return nil
	}
	if def != nil {
		if err := add(def, defaultIfName); err != nil {
			return plan, err
		}
	}
	if primary != nil {
		if err := add(primary, primaryUDNIfName); err != nil {
			return plan, err
		}
	}
	for i, e := range secondaries {
		if err := add(e, secondaryIfName+strconv.Itoa(i+1)); err != nil {
			return plan, err
		}
	}
	return plan, nil
}

func unspecified(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}

// podIPs are the addresses the pod's status reports: those of its first interface, the
// default network's, as kubelet reports what the cluster network's CNI gave it.
func (plan podPlan) podIPs() []string {
	if len(plan.Ifaces) == 0 {
		return nil
	}
	out := make([]string, 0, len(plan.Ifaces[0].IPs))
	for _, p := range plan.Ifaces[0].IPs {
		out = append(out, p.Addr().String())
	}
	return out
}

// runningStatus returns the pod with the status kubelet would write once its sandbox
// runs: phase Running, its addresses, every container running and ready. It returns nil
// when the pod says so already, so a pod is written once.
func runningStatus(p *corev1.Pod, plan podPlan, hostIP string, now time.Time) *corev1.Pod {
	ips := plan.podIPs()
	if p.Status.Phase == corev1.PodRunning && podReady(p) && slices.Equal(statusIPs(p), ips) {
		return nil
	}
	out := p.DeepCopy()
	st := &out.Status
	started := metav1.NewTime(now)
	st.Phase = corev1.PodRunning
	st.HostIP = hostIP
	st.HostIPs = []corev1.HostIP{{IP: hostIP}}
	st.PodIPs = nil
	for _, ip := range ips {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
	}
	st.PodIP = ""
	if len(ips) > 0 {
		st.PodIP = ips[0]
	}
	if st.StartTime == nil {
		st.StartTime = &started
	}
	st.Conditions = nil
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: started})
	}
	st.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name:    c.Name,
			Image:   c.Image,
			Ready:   true,
			Started: ptr.To(true),
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func statusIPs(p *corev1.Pod) []string {
	out := make([]string, 0, len(p.Status.PodIPs))
	for _, ip := range p.Status.PodIPs {
		out = append(out, ip.IP)
	}
	return out
}
