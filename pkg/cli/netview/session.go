// A Session is a network command's session with the API server: the clients, the reads
// the network and connect commands share, and one-line errors for the requests that
// fail.

package netview

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// RequestTimeout bounds one command's API calls: an unreachable server must end in an
// error, not a hang.
const RequestTimeout = 30 * time.Second

// Session is one command's connection to the API server.
type Session struct {
	*cmdutil.Connection
	// served names what ovnk's CRDs serve that the command needs ("networks"), for
	// the error saying that they are not installed.
	served string
}

// Open connects to the cluster f names for a command that needs the CRDs serving
// served ("networks", "networks and connects").
func Open(f *cmdutil.Factory, served string) (*Session, error) {
	conn, err := f.Connect()
	if err != nil {
		return nil, err
	}
	return &Session{Connection: conn, served: served}, nil
}

// Failed turns the error of a request into one line that says what was being done
// (doing) and, for the usual causes, what to do; nil stays nil.
func (s *Session) Failed(err error, doing string) error {
	if err == nil {
		return nil
	}
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && IsResourceMissing(err) {
		return fmt.Errorf("%s: the cluster does not serve %s %s; install ovnk's CRDs with `kubectl ovnk install`", doing, ovnkv1.GroupName, s.served)
	}
	if explained := s.Explain(err); explained != err {
		return explained
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: the API server at %s did not answer within %s", doing, s.Host(), RequestTimeout)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// IsResourceMissing tells a 404 for the whole resource (the CRD is not installed) from
// a 404 for one object.
func IsResourceMissing(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name == ""
}

// Networks lists the ClusterUserDefinedNetworks and the UserDefinedNetworks of ns, or
// of every namespace when ns is "", the ClusterUserDefinedNetworks first, each kind in
// the server's order.
func (s *Session) Networks(ctx context.Context, ns string) ([]Network, error) {
	l, err := s.ListNetworks(ctx, ns)
	return l.Networks, err
}

// Nodes lists the nodes.
func (s *Session) Nodes(ctx context.Context) ([]corev1.Node, error) {
	var nodes corev1.NodeList
	if err := s.Client.List(ctx, &nodes); err != nil {
		return nil, s.Failed(err, "list nodes")
	}
	return nodes.Items, nil
}

// Connects lists the ClusterNetworkConnects.
func (s *Session) Connects(ctx context.Context) ([]ovnkv1.ClusterNetworkConnect, error) {
	var cncs ovnkv1.ClusterNetworkConnectList
	if err := s.Client.List(ctx, &cncs); err != nil {
		return nil, s.Failed(err, "list ClusterNetworkConnects")
	}
	return cncs.Items, nil
}

// NamespaceLabels maps every namespace to its labels.
func (s *Session) NamespaceLabels(ctx context.Context) (map[string]map[string]string, error) {
	var list corev1.NamespaceList
	if err := s.Client.List(ctx, &list); err != nil {
		return nil, s.Failed(err, "list namespaces")
	}
	out := make(map[string]map[string]string, len(list.Items))
	for _, ns := range list.Items {
		out[ns.Name] = ns.Labels
	}
	return out, nil
}
