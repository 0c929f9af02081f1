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

// ReservedRanges are the cluster's own ranges, where no network's subnets and no connect
// subnet may go, as the leader has them: cluster.ConfiguredRanges of the agent's
// configuration, which `kubectl ovnk install` writes into a ConfigMap of the agent's
// namespace. When that cannot be read (the agent was installed otherwise, or elsewhere,
// or the user may not read it), they are ovnk's defaults with the default network's
// subnets the nodes publish standing in for its cluster subnets, and fallback says why,
// to be shown as a warning: the leader checks against its own configuration, which may
// differ.
func (s *Session) ReservedRanges(ctx context.Context, agentNamespace string) (reserved []cluster.ReservedRange, fallback string, err error) {
	key := client.ObjectKey{Namespace: agentNamespace, Name: manifests.DefaultConfigMapName}
	source := "ConfigMap " + key.String()
	var cm corev1.ConfigMap
	var why string
	switch getErr := s.Client.Get(ctx, key, &cm); {
	case apierrors.IsNotFound(getErr):
		why = "it does not exist (set --agent-namespace to the namespace the agent was installed in)"
	case apierrors.IsForbidden(getErr):
		why = "you may not read it"
	case getErr != nil:
		return nil, "", s.Failed(getErr, "get "+source)
	default:
		ranges, loadErr := configuredRanges(&cm, source, agentNamespace)
		if loadErr == nil {
			return ranges.Reserved(), "", nil
		}
		why = loadErr.Error()
	}
	nodes, err := s.Nodes(ctx)
	if err != nil {
		return nil, "", err
	}
	ranges := cluster.ClusterRanges{
		ClusterSubnets:    nodeDefaultSubnets(nodes),
		JoinSubnets:       cluster.DefaultJoinSubnets(),
		TransitSubnets:    cluster.DefaultTransitSubnets(),
		MasqueradeSubnets: cluster.DefaultMasqueradeSubnets(),
		ServiceSubnets:    cluster.DefaultServiceSubnets(),
	}
	fallback = fmt.Sprintf("cannot read the agent's configuration from %s: %s; so the cluster's ranges are checked at ovnk's defaults and at the default network's subnets the nodes publish, and the leader checks the configured ones once the object is created",
		source, why)
	return ranges.Reserved(), fallback, nil
}

// configuredRanges are the ranges of the agent's configuration in cm.
func configuredRanges(cm *corev1.ConfigMap, source, agentNamespace string) (cluster.ClusterRanges, error) {
	text, ok := cm.Data[manifests.AgentConfigKey]
	if !ok {
		return cluster.ClusterRanges{}, fmt.Errorf("it has no key %s", manifests.AgentConfigKey)
	}
	cfg, err := cmdutil.LoadAgentConfig(text, source, agentNamespace)
	if err != nil {
		return cluster.ClusterRanges{}, fmt.Errorf("it does not load as the agent would load it: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	ranges, err := cluster.ConfiguredRanges(cfg.ClusterConfig(), cfg.DefaultNetwork())
	if err != nil {
		return cluster.ClusterRanges{}, fmt.Errorf("its default network is not valid: %w", err)
	}
	return ranges, nil
}

// nodeDefaultSubnets are the default network's subnets the nodes publish
// (k8s.ovn.org/node-subnets): each node's share of the cluster subnets, which no object
// holds.
func nodeDefaultSubnets(nodes []corev1.Node) []netip.Prefix {
	var out []netip.Prefix
	for _, n := range nodes {
		subnets, _, err := cluster.NodeSubnetsCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err == nil {
			out = append(out, subnets[cluster.DefaultNetworkName]...)
		}
	}
	return out
}
