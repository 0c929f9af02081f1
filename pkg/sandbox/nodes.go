package sandbox

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// defaultSubnet is the default network's subnet and each node's prefix length in it.
var defaultSubnet = cluster.Subnet{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}

// clusterSubnets is defaultSubnet in the agent's --cluster-subnets form.
func clusterSubnets() string {
	return fmt.Sprintf("%s/%d", defaultSubnet.CIDR, defaultSubnet.HostSubnet)
}

// Inside a node's namespace, the API server and the agent's HTTP endpoint are on the
// node's own loopback, at the addresses a node of a real cluster would use; the
// forwarder joins them to the host's loopback.
const (
	nodeAPIServer  = "127.0.0.1:6443"
	nodeAgentHTTP  = "127.0.0.1:9476"
	nodeKubeconfig = "kubeconfig"
)

// newNodes lays out the nodes of the sandbox in dir: node i lives in <dir>/n<i> and in
// the namespace <prefix>n<i>. Everything but the agents' host ports follows from dir,
// so the sandbox's own daemons find the nodes from the directory alone.
func newNodes(dir string) []Node {
	prefix := netnsPrefix(dir)
	nodes := make([]Node, 0, nodeCount)
	for i, name := range NodeNames() {
		n := Node{
			Name:    name,
			Dir:     "n" + strconv.Itoa(i+1),
			Netns:   nodeNetns(prefix, i),
			Address: nodeAddress(i).String(),
			MAC:     nodeMAC(i),
		}
		path := func(file string) string { return filepath.Join(dir, n.Dir, file) }
		n.OVSEndpoint = "unix:" + path(ovsSocket)
		n.NBEndpoint = "unix:" + path(nbSocket)
		n.SBEndpoint = "unix:" + path(sbSocket)
		n.Kubeconfig = path(nodeKubeconfig)
		nodes = append(nodes, n)
	}
	return nodes
}

// Netnses lists the sandbox's network namespaces but the pods': the nodes', the
// underlay's and the outside world's.
func (s *Sandbox) Netnses() []string {
	out := []string{s.Underlay, s.Outside}
	for _, n := range s.Nodes {
		out = append(out, n.Netns)
	}
	return out
}
