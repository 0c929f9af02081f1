package tracecmd

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/trace"
)

// TestReadNetworkNames names attachments by the networks the cluster holds, and when
// they cannot be listed falls back to the attachments' names with a warning that says
// why — only when some port is on a user-defined network.
func TestReadNetworkNames(t *testing.T) {
	green := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "green"}}
	green.Spec.NamespaceSelector.MatchLabels = map[string]string{"team": "green"}
	objects := []client.Object{
		green,
		&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "green"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "green-a", Labels: map[string]string{"team": "green"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
	}
	cudns := schema.GroupResource{Group: ovnkv1.GroupName, Resource: "clusteruserdefinednetworks"}
	namespaces := schema.GroupResource{Resource: "namespaces"}
	failing := func(err error, fails func(client.ObjectList) bool) interceptor.Funcs {
		return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if fails(list) {
				return err
			}
			return c.List(ctx, list, opts...)
		}}
	}
	isCUDNs := func(l client.ObjectList) bool { _, ok := l.(*ovnkv1.ClusterUserDefinedNetworkList); return ok }
	isNamespaces := func(l client.ObjectList) bool { _, ok := l.(*corev1.NamespaceList); return ok }
	udnPorts := []trace.PodPort{{NAD: "default"}, {NAD: "green-a/green"}}
	for _, tc := range []struct {
		name  string
		funcs interceptor.Funcs
		// names maps attachments to what they are called.
		names   map[string]string
		warning string
	}{
		{"networks read", interceptor.Funcs{},
			map[string]string{"default": "default", "green-a/green": "green", "other/green": "other/green", "green-a/gone": "green-a/gone"}, ""},
		{"networks forbidden", failing(apierrors.NewForbidden(cudns, "", errors.New("RBAC says no")), isCUDNs),
			map[string]string{"default": "default", "green-a/green": "green-a/green"},
			"cannot read the user-defined networks: you may not list clusteruserdefinednetworks.k8s.ovn.org (ask for list on clusteruserdefinednetworks.k8s.ovn.org); pods' networks are named by their network attachments (NAMESPACE/NAME), not as `kubectl ovnk network list` names them"},
		{"namespaces forbidden", failing(apierrors.NewForbidden(namespaces, "", errors.New("RBAC says no")), isNamespaces),
			map[string]string{"green-a/green": "green-a/green"},
			"cannot read the user-defined networks: you may not list namespaces (ask for list on namespaces); pods' networks are named by their network attachments (NAMESPACE/NAME), not as `kubectl ovnk network list` names them"},
		{"no network CRDs", failing(&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: ovnkv1.GroupName, Kind: "ClusterUserDefinedNetwork"}}, isCUDNs),
			map[string]string{"green-a/green": "green-a/green"},
			"cannot read the user-defined networks: the cluster does not serve k8s.ovn.org networks; pods' networks are named by their network attachments (NAMESPACE/NAME), not as `kubectl ovnk network list` names them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(cmdutil.Scheme).WithObjects(objects...).WithInterceptorFuncs(tc.funcs).Build()
			names := readNetworkNames(context.Background(), c)
			for nad, want := range tc.names {
				if got := names.userName(nad); got != want {
					t.Errorf("attachment %s is called %q, want %q", nad, got, want)
				}
			}
			if got := names.warning(udnPorts); got != tc.warning {
				t.Errorf("warning %q, want %q", got, tc.warning)
			}
			if got := names.warning(udnPorts[:1]); got != "" {
				t.Errorf("warning %q with only default-network ports, want none", got)
			}
		})
	}
}
