package netview

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestListNADs: a cluster without the NAD CRD has none, silently; a user who may not
// list them has none, with one warning naming the resource; another failure is an
// error.
func TestListNADs(t *testing.T) {
	gr := schema.GroupResource{Group: nadv1.GroupName, Resource: nadv1.Resource}
	for _, tc := range []struct {
		name    string
		listErr error
		warning string
		fails   bool
	}{
		{"no CRD", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: nadv1.GroupName, Kind: "NetworkAttachmentDefinition"}}, "", false},
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("no RBAC")), "cannot list network-attachment-definitions.k8s.cni.cncf.io", false},
		{"server error", apierrors.NewInternalError(errors.New("etcd down")), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(cmdutil.Scheme).WithInterceptorFuncs(interceptor.Funcs{
				List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
					return tc.listErr
				},
			}).Build()
			nads, warning, err := ListNADs(context.Background(), c)
			if (err != nil) != tc.fails || len(nads) != 0 || !strings.Contains(warning, tc.warning) || (tc.warning == "") != (warning == "") {
				t.Errorf("ListNADs = %v, %q, %v; want no NADs, warning %q, failure %t", nads, warning, err, tc.warning, tc.fails)
			}
		})
	}
}

// TestWithIDs: a network object without ids gets its NAD's, on a copy; one with its
// own keeps them, and a NAD it does not control is not read.
func TestWithIDs(t *testing.T) {
	udn := &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "red", UID: "uid-red"}}
	nad := func(owner, id string) *nadv1.NetworkAttachmentDefinition {
		return &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "red",
			OwnerReferences: []metav1.OwnerReference{{Kind: "UserDefinedNetwork", Name: "red", UID: types.UID("uid-" + owner), Controller: ptr.To(true)}},
			Annotations:     map[string]string{cluster.AnnotationNetworkID: id, cluster.AnnotationTunnelKeys: "[]"}}}
	}
	got, err := Network{UDN: udn}.WithIDs([]*nadv1.NetworkAttachmentDefinition{nad("red", "9")})
	if err != nil || got.UDN == udn || got.UDN.Annotations[cluster.AnnotationNetworkID] != "9" || udn.Annotations != nil {
		t.Errorf("WithIDs = %+v, %v; want a copy annotated with id 9, the original untouched", got.UDN.Annotations, err)
	}
	if got, _ := (Network{UDN: udn}).WithIDs([]*nadv1.NetworkAttachmentDefinition{nad("blue", "9")}); got.UDN != udn {
		t.Errorf("the ids of another network's NAD were read: %+v", got.UDN.Annotations)
	}
	own := udn.DeepCopy()
	own.Annotations = map[string]string{cluster.AnnotationNetworkID: "4"}
	if got, _ := (Network{UDN: own}).WithIDs([]*nadv1.NetworkAttachmentDefinition{nad("red", "9")}); got.UDN != own {
		t.Errorf("an object's own id was overridden: %+v", got.UDN.Annotations)
	}
	if _, err := (Network{UDN: udn}).WithIDs([]*nadv1.NetworkAttachmentDefinition{nad("red", "nine")}); err == nil || !strings.Contains(err.Error(), "nine") {
		t.Errorf("a malformed id on the NAD: %v; want an error naming it", err)
	}
}
