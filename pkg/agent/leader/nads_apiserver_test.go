package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// getNAD reads the NAD ns/name from the API server.
func (e *kubeEnv) getNAD(ctx context.Context, ns, name string) (*nadv1.NetworkAttachmentDefinition, error) {
	nad := &nadv1.NetworkAttachmentDefinition{}
	return nad, e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, nad)
}

// nadOf checks that the NAD ns/name is network's, as upstream's cluster manager writes
// it: its name, controller reference, label, finalizer, configuration naming the
// network and the NAD, and the network's ids (keys in upstream's form, wantKeys). An
// error says what is not so yet.
func (e *kubeEnv) nadOf(ctx context.Context, network client.Object, ovnName, ns, wantKeys string) error {
	if err := e.get(ctx, network); err != nil {
		return err
	}
	nad, err := e.getNAD(ctx, ns, network.GetName())
	if err != nil {
		return err
	}
	id := network.GetAnnotations()[cluster.AnnotationNetworkID]
	if wantKeys == "" {
		wantKeys = network.GetAnnotations()[cluster.AnnotationTunnelKeys]
	}
	c := metav1.GetControllerOfNoCopy(nad)
	var config cluster.NADConfig
	if err := json.Unmarshal([]byte(nad.Spec.Config), &config); err != nil {
		return fmt.Errorf("NAD %s/%s: config %q: %w", ns, nad.Name, nad.Spec.Config, err)
	}
	switch {
	case c == nil || c.UID != network.GetUID() || c.APIVersion != "k8s.ovn.org/v1" || c.BlockOwnerDeletion == nil || !*c.BlockOwnerDeletion:
		return fmt.Errorf("NAD %s/%s has controller %+v, want %s blocking its deletion", ns, nad.Name, c, describe(network))
	case nad.Labels[cluster.LabelUserDefinedNetwork] != "" || !slices.Contains(nad.Finalizers, cluster.FinalizerUserDefinedNetwork):
		return fmt.Errorf("NAD %s/%s has labels %v and finalizers %v", ns, nad.Name, nad.Labels, nad.Finalizers)
	case config.Name != ovnName || config.NADName != ns+"/"+nad.Name || config.Type != cluster.NADPluginType:
		return fmt.Errorf("NAD %s/%s has config %s", ns, nad.Name, nad.Spec.Config)
	case id == "" || nad.Annotations[cluster.AnnotationNetworkID] != id || nad.Annotations[cluster.AnnotationTunnelKeys] != wantKeys ||
		nad.Annotations[cluster.AnnotationNetworkName] != ovnName:
		return fmt.Errorf("NAD %s/%s has annotations %v; want network-name %s, network-id %q and tunnel-keys %q", ns, nad.Name, nad.Annotations, ovnName, id, wantKeys)
	}
	return nil
}

// gone waits for the NAD ns/name to be gone.
func (e *kubeEnv) nadGone(ctx context.Context, ns, name string) error {
	nad, err := e.getNAD(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("NAD %s/%s is still there (finalizers %v, deleted at %v)", ns, name, nad.Finalizers, nad.DeletionTimestamp)
}

// TestLeaderNADs runs the leader against the real API server (the NAD CRD installed
// as pkg/manifests ships it, with no garbage collector): a UserDefinedNetwork and a
// ClusterUserDefinedNetwork over two namespaces get their NADs, named, labelled, owned
// and annotated as upstream's; a NAD of a network's name that is no network's is left
// alone and the network says why; a namespace the network leaves, and the network
// itself, take their NADs with them; and a leader started on a network whose NAD
// carries the ids upstream allocated adopts them.
func TestLeaderNADs(t *testing.T) {
	e := newKubeEnv(t)
	ctx := context.Background()
	sfx := suffix()
	ns1, ns2 := e.kube.Namespace(t), e.kube.Namespace(t)
	e.createNodes(t, "nads-n1-"+sfx)
	u := udn(ns1, "net", 0, l2(ovnkv1.NetworkRoleSecondary, "10.30.0.0/24"))
	u.CreationTimestamp, u.Generation, u.ResourceVersion = metav1.Time{}, 0, ""
	e.create(t, u)
	green, gold := "green-"+sfx, "gold-"+sfx
	e.createCUDN(t, green, l2(ovnkv1.NetworkRolePrimary, "10.40.0.0/16"), ns1, ns2)
	// A NAD of gold's name in ns2, which no network controls.
	foreign := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: gold},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"other","type":"bridge"}`}}
	e.create(t, foreign)
	e.createCUDN(t, gold, l2(ovnkv1.NetworkRoleSecondary, "10.50.0.0/24"), ns1, ns2)
	stop := e.startLeader(t)

	greenObj := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: green}}
	goldObj := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: gold}}
	eventually(t, "the NADs of the UDN and of green in both namespaces", func(ctx context.Context) error {
		if err := e.nadOf(ctx, u, cluster.UDNNetworkName(ns1, "net"), ns1, "[]"); err != nil {
			return err
		}
		for _, ns := range []string{ns1, ns2} {
			if err := e.nadOf(ctx, greenObj, cluster.CUDNNetworkName(green), ns, ""); err != nil {
				return err
			}
		}
		return e.nadOf(ctx, goldObj, cluster.CUDNNetworkName(gold), ns1, "[]")
	})
	eventually(t, "gold to say its NAD in "+ns2+" is not a network's", func(ctx context.Context) error {
		if err := e.get(ctx, goldObj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(goldObj.Status.Conditions, ovnkv1.ConditionNetworkCreated)
		want := fmt.Sprintf("NetworkAttachmentDefinition %s/%s exists and is not a network's", ns2, gold)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonForeignNAD || !strings.Contains(c.Message, want) {
			return fmt.Errorf("gold NetworkCreated %+v, want False %s saying %q", c, ReasonForeignNAD, want)
		}
		return nil
	})
	if got, err := e.getNAD(ctx, ns2, gold); err != nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign NAD was written: %+v, %v", got, err)
	}

	// green leaves ns2; the UDN is deleted.
	if err := e.get(ctx, greenObj); err != nil {
		t.Fatal(err)
	}
	greenObj.Spec.NamespaceSelector.MatchExpressions[0].Values = []string{ns1}
	if err := e.c.Update(ctx, greenObj); err != nil {
		t.Fatal(err)
	}
	e.remove(t, u)
	eventually(t, "the NADs of the namespace green left and of the UDN to go", func(ctx context.Context) error {
		if err := e.nadGone(ctx, ns2, green); err != nil {
			return err
		}
		return e.nadGone(ctx, ns1, "net")
	})
	if err := e.nadOf(ctx, greenObj, cluster.CUDNNetworkName(green), ns1, ""); err != nil {
		t.Errorf("green's NAD in %s: %v", ns1, err)
	}

	// A network that upstream gave ids, on its NAD only: the next leader adopts them.
	stop()
	teal := "teal-" + sfx
	e.createCUDN(t, teal, l2(ovnkv1.NetworkRolePrimary, "10.60.0.0/16"), ns2)
	tealObj := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: teal}}
	if err := e.get(ctx, tealObj); err != nil {
		t.Fatal(err)
	}
	const upstreamID = 4000
	upstreamKeys := fmt.Sprintf("[%d,%d]", alloc.BaseTransitSwitchTunnelKey+upstreamID, alloc.MaxTunnelKey-100)
	yes := true
	e.create(t, &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: teal,
			Labels:      map[string]string{cluster.LabelUserDefinedNetwork: ""},
			Annotations: map[string]string{cluster.AnnotationNetworkID: strconv.Itoa(upstreamID), cluster.AnnotationTunnelKeys: upstreamKeys},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "k8s.ovn.org/v1", Kind: "ClusterUserDefinedNetwork", Name: teal, UID: tealObj.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"cluster_udn_` + teal + `","type":"ovn-k8s-cni-overlay"}`},
	})
	e.startLeader(t)
	eventually(t, "teal to adopt its NAD's ids", func(ctx context.Context) error {
		if err := e.get(ctx, tealObj); err != nil {
			return err
		}
		if a := tealObj.Annotations; a[cluster.AnnotationNetworkID] != strconv.Itoa(upstreamID) || a[cluster.AnnotationTunnelKeys] != upstreamKeys {
			return fmt.Errorf("teal has annotations %v, want network id %d and tunnel keys %s", a, upstreamID, upstreamKeys)
		}
		return e.nadOf(ctx, tealObj, cluster.CUDNNetworkName(teal), ns2, "")
	})

	// The networks go, and their NADs with them.
	for _, obj := range []client.Object{greenObj, goldObj, tealObj} {
		e.remove(t, obj)
	}
	eventually(t, "the networks' NADs to go", func(ctx context.Context) error {
		for _, key := range [][2]string{{ns1, green}, {ns1, gold}, {ns2, teal}} {
			if err := e.nadGone(ctx, key[0], key[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := e.getNAD(ctx, ns2, gold); err != nil {
		t.Errorf("the foreign NAD went with gold: %v", err)
	}
}
