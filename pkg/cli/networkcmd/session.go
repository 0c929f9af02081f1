package networkcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// requestTimeout bounds one command's API calls: an unreachable server must end in an
// error, not a hang.
const requestTimeout = 30 * time.Second

// session is one command's connection to the API server.
type session struct {
	*cmdutil.Connection
}

func connect(f *cmdutil.Factory) (*session, error) {
	conn, err := f.Connect()
	if err != nil {
		return nil, err
	}
	return &session{conn}, nil
}

// explain turns a failed request into one line that says what was being done and,
// for the usual causes, what to do.
func (s *session) explain(err error, doing string) error {
	if err == nil {
		return nil
	}
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && isResourceMissing(err) {
		return fmt.Errorf("%s: the cluster does not serve %s networks; install ovnk's CRDs with `kubectl ovnk install`", doing, ovnkv1.GroupName)
	}
	if explained := s.Explain(err); explained != err {
		return explained
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: the API server at %s did not answer within %s", doing, s.Host(), requestTimeout)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// isResourceMissing tells a 404 for the whole resource (the CRD is not installed) from
// a 404 for one object.
func isResourceMissing(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name == ""
}

// networks lists the ClusterUserDefinedNetworks and the UserDefinedNetworks of ns, or
// of every namespace when ns is "", sorted as sortNetworks does.
func (s *session) networks(ctx context.Context, ns string) ([]network, error) {
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := s.Client.List(ctx, &cudns); err != nil {
		return nil, s.explain(err, "list ClusterUserDefinedNetworks")
	}
	var udns ovnkv1.UserDefinedNetworkList
	if err := s.Client.List(ctx, &udns, client.InNamespace(ns)); err != nil {
		return nil, s.explain(err, "list UserDefinedNetworks")
	}
	nets := make([]network, 0, len(cudns.Items)+len(udns.Items))
	for i := range cudns.Items {
		nets = append(nets, network{cudn: &cudns.Items[i]})
	}
	for i := range udns.Items {
		nets = append(nets, network{udn: &udns.Items[i]})
	}
	sortNetworks(nets)
	return nets, nil
}

func (s *session) nodes(ctx context.Context) ([]corev1.Node, error) {
	var nodes corev1.NodeList
	if err := s.Client.List(ctx, &nodes); err != nil {
		return nil, s.explain(err, "list nodes")
	}
	return nodes.Items, nil
}

func (s *session) connects(ctx context.Context) ([]ovnkv1.ClusterNetworkConnect, error) {
	var cncs ovnkv1.ClusterNetworkConnectList
	if err := s.Client.List(ctx, &cncs); err != nil {
		return nil, s.explain(err, "list ClusterNetworkConnects")
	}
	return cncs.Items, nil
}

// namespaceLabels maps every namespace to its labels.
func (s *session) namespaceLabels(ctx context.Context) (map[string]map[string]string, error) {
	var list corev1.NamespaceList
	if err := s.Client.List(ctx, &list); err != nil {
		return nil, s.explain(err, "list namespaces")
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, ns := range list.Items {
		out[ns.Name] = ns.Labels
	}
	return out, nil
}

// namespace gets a namespace, with a one-line error when it does not exist.
func (s *session) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	var ns corev1.Namespace
	err := s.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("namespace %q not found: check the name (kubectl get namespaces lists them) or create it with `kubectl create namespace %s`", name, name)
	}
	if err != nil {
		return nil, s.explain(err, "get namespace "+name)
	}
	return &ns, nil
}
