package connectcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// session is one command's connection to the API server.
type session struct {
	client    client.Client
	clientset kubernetes.Interface
	host      string
}

func open(f *cmdutil.Factory) (*session, error) {
	rc, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	cs, err := f.Clientset()
	if err != nil {
		return nil, err
	}
	return &session{client: c, clientset: cs, host: rc.Host}, nil
}

// explain turns a failed request into one line that says what was being done and,
// for the usual causes, what to do.
func (s *session) explain(err error, doing string) error {
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && isResourceMissing(err) {
		return fmt.Errorf("%s: the cluster does not serve %s networks and connects; install ovnk's CRDs with `kubectl ovnk install`", doing, ovnkv1.GroupName)
	}
	if explained := cmdutil.ExplainConnectionError(s.host, err); explained != err {
		return explained
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: the API server at %s did not answer within %s", doing, s.host, requestTimeout)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// isResourceMissing tells a 404 for the whole resource (the CRD is not installed) from
// a 404 for one object.
func isResourceMissing(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name == ""
}

// snapshot is what the commands read of the cluster: every network, namespace, node
// and connect. Connects select networks by labels, of the networks and of their
// namespaces, so reading them means reading all of these.
type snapshot struct {
	networks []network // sorted by ref
	nsLabels map[string]map[string]string
	nodes    []corev1.Node // sorted by name
	connects []ovnkv1.ClusterNetworkConnect
}

func (s *session) snapshot(ctx context.Context) (*snapshot, error) {
	var cncs ovnkv1.ClusterNetworkConnectList
	if err := s.client.List(ctx, &cncs); err != nil {
		return nil, s.explain(err, "list ClusterNetworkConnects")
	}
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := s.client.List(ctx, &cudns); err != nil {
		return nil, s.explain(err, "list ClusterUserDefinedNetworks")
	}
	var udns ovnkv1.UserDefinedNetworkList
	if err := s.client.List(ctx, &udns); err != nil {
		return nil, s.explain(err, "list UserDefinedNetworks")
	}
	var namespaces corev1.NamespaceList
	if err := s.client.List(ctx, &namespaces); err != nil {
		return nil, s.explain(err, "list namespaces")
	}
	var nodes corev1.NodeList
	if err := s.client.List(ctx, &nodes); err != nil {
		return nil, s.explain(err, "list nodes")
	}
	snap := &snapshot{nsLabels: map[string]map[string]string{}, nodes: nodes.Items, connects: cncs.Items}
	for i := range cudns.Items {
		snap.networks = append(snap.networks, network{cudn: &cudns.Items[i]})
	}
	for i := range udns.Items {
		snap.networks = append(snap.networks, network{udn: &udns.Items[i]})
	}
	sortNetworks(snap.networks)
	for _, ns := range namespaces.Items {
		snap.nsLabels[ns.Name] = ns.Labels
	}
	slices.SortFunc(snap.nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(snap.connects, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	return snap, nil
}

// connect returns the connect called name, or nil.
func (snap *snapshot) connect(name string) *ovnkv1.ClusterNetworkConnect {
	for i := range snap.connects {
		if snap.connects[i].Name == name {
			return &snap.connects[i]
		}
	}
	return nil
}
