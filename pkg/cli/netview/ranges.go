package netview

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// RangeSources are what ReservedRanges reads besides the agent's ConfigMap, for when
// that cannot be read.
type RangeSources struct {
	// AgentNamespace is where the agent's ConfigMap is (--agent-namespace).
	AgentNamespace string
	// Nodes are the cluster's nodes, when the command has read them already (connect's
	// snapshot); nil lists them, and only when the ConfigMap cannot be read.
	Nodes []corev1.Node
	// ServiceSubnets, when set, replace ovnk's default service subnets
	// (connect's deprecated --service-cidr).
	ServiceSubnets []netip.Prefix
}

// ReservedRanges are the cluster's own ranges, where no network's subnets and no connect
// subnet may go, as the leader has them: the ranges of the agent's configuration
// (AgentConfigRanges), which `kubectl ovnk install` writes into a ConfigMap of the
// agent's namespace. When that cannot be read (the agent was installed otherwise, or
// elsewhere, or the user may not read it), they are ovnk's defaults, with the default
// network's subnets the nodes publish standing in for its cluster subnets, and fallback
// says why, to be shown as a warning: the leader checks against its own configuration,
// which may differ.
func (s *Session) ReservedRanges(ctx context.Context, src RangeSources) (reserved []cluster.ReservedRange, fallback string, err error) {
	key := client.ObjectKey{Namespace: src.AgentNamespace, Name: manifests.DefaultConfigMapName}
	source := "ConfigMap " + key.String()
	var cm corev1.ConfigMap
	var why string
	switch getErr := s.Client.Get(ctx, key, &cm); {
	case apierrors.IsNotFound(getErr):
		why = "it does not exist: set --agent-namespace, or the plugin config key agent-namespace, to the namespace the agent was installed in"
	case apierrors.IsForbidden(getErr):
		why = fmt.Sprintf("you may not read it: ask for get on configmap %s in namespace %s", manifests.DefaultConfigMapName, src.AgentNamespace)
	case getErr != nil:
		return nil, "", s.Failed(getErr, "get "+source)
	default:
		text, ok := cm.Data[manifests.AgentConfigKey]
		if !ok {
			why = fmt.Sprintf("it has no key %s", manifests.AgentConfigKey)
			break
		}
		ranges, loadErr := AgentConfigRanges(text, source, src.AgentNamespace)
		if loadErr == nil {
			return ranges.Reserved(), "", nil
		}
		why = strings.ReplaceAll(loadErr.Error(), "\n", "; ")
	}

	nodes, nodesNote := src.Nodes, "and at the default network's subnets the nodes publish"
	if nodes == nil {
		var list corev1.NodeList
		switch listErr := s.Client.List(ctx, &list); {
		case apierrors.IsForbidden(listErr):
			// create worked without listing nodes before it checked the cluster's
			// ranges: a user who may not list them still gets the other checks.
			nodesNote = "but not at the nodes' subnets, as you may not list nodes either (ask for list on nodes)"
		case listErr != nil:
			return nil, "", s.Failed(listErr, "list nodes")
		default:
			nodes = list.Items
		}
	}
	ranges, families, err := defaultRanges(nodeDefaultSubnets(nodes), src.AgentNamespace)
	if err != nil {
		return nil, "", err
	}
	services := ""
	if len(src.ServiceSubnets) > 0 {
		ranges.ServiceSubnets = src.ServiceSubnets
		services = fmt.Sprintf(" (with --service-cidr %s as the service subnets)", joinPrefixes(src.ServiceSubnets))
	}
	fallback = fmt.Sprintf("cannot read the agent's configuration from %s: %s; so the cluster's ranges are checked at ovnk's defaults for %s%s %s, and the leader checks the configured ones once the object is created",
		source, why, families, services, nodesNote)
	return ranges.Reserved(), fallback, nil
}

// AgentConfigRanges are the cluster's own ranges of the agent's configuration, text,
// loaded as an agent of the DaemonSet loads it (cmdutil.LoadAgentConfig): the ranges
// its leader reserves (agentconfig.Config.Ranges). Errors name source.
func AgentConfigRanges(text, source, agentNamespace string) (cluster.ClusterRanges, error) {
	cfg, err := cmdutil.LoadAgentConfig(text, source, agentNamespace)
	if err != nil {
		return cluster.ClusterRanges{}, fmt.Errorf("it does not load as the agent would load it: %w", err)
	}
	ranges, err := cfg.Ranges()
	if err != nil {
		return cluster.ClusterRanges{}, fmt.Errorf("its default network is not valid: %w", err)
	}
	return ranges, nil
}

// Stand-in cluster subnets of each family for defaultRanges: they only choose the
// families, as the agent keeps the ranges of its cluster subnets' families only.
const (
	standInClusterSubnetIPv4 = "10.244.0.0/16/24"
	standInClusterSubnetIPv6 = "fd00:10:244::/48/64"
)

// defaultRanges are the ranges of ovnk's defaults, derived as the agent derives them
// from a configuration that sets only cluster subnets, of the families of the nodes'
// subnets (both when no node publishes any), with those subnets in place of the
// cluster subnets, which no object holds. families names the families, for messages.
func defaultRanges(nodeSubnets []cluster.NodeSubnet, agentNamespace string) (ranges cluster.ClusterRanges, families string, err error) {
	var v4, v6 bool
	for _, n := range nodeSubnets {
		v4, v6 = v4 || n.Prefix.Addr().Is4(), v6 || !n.Prefix.Addr().Is4()
	}
	if !v4 && !v6 {
		v4, v6 = true, true
	}
	var standIns, names []string
	if v4 {
		standIns, names = append(standIns, standInClusterSubnetIPv4), append(names, "IPv4")
	}
	if v6 {
		standIns, names = append(standIns, standInClusterSubnetIPv6), append(names, "IPv6")
	}
	text := "[default]\ncluster-subnets = " + strings.Join(standIns, ",") + "\n"
	if !v4 {
		// ovnk's default service subnets are IPv4 only, and the agent wants one of the
		// cluster's families: a stand-in lets the rest load, and none is reserved.
		text += "service-subnets = fd00:10:96::/112\nhost-service-ips = fd00:10:96::1\n"
	}
	ranges, err = AgentConfigRanges(text, "ovnk's defaults", agentNamespace)
	if err != nil {
		// ovnk's own defaults always load: this is a bug of ovnk, not the user's.
		return cluster.ClusterRanges{}, "", fmt.Errorf("ovnk's default agent configuration for %s: %w", strings.Join(names, " and "), err)
	}
	ranges.ClusterSubnets, ranges.NodeSubnets = nil, nodeSubnets
	if !v4 {
		ranges.ServiceSubnets = nil
	}
	return ranges, strings.Join(names, " and "), nil
}

// nodeDefaultSubnets are the default network's subnets the nodes publish
// (k8s.ovn.org/node-subnets): each node's share of the cluster subnets, which no object
// holds.
func nodeDefaultSubnets(nodes []corev1.Node) []cluster.NodeSubnet {
	var out []cluster.NodeSubnet
	for _, n := range nodes {
		subnets, _, err := cluster.NodeSubnetsCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err != nil {
			continue // a node whose annotation does not parse has no subnets the leader reads
		}
		for _, p := range subnets[cluster.DefaultNetworkName] {
			out = append(out, cluster.NodeSubnet{Node: n.Name, Prefix: p})
		}
	}
	return out
}

func joinPrefixes(ps []netip.Prefix) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}
