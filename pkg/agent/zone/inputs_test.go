package zone

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

func meta(ns, name, version string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: version}
}

func inputs() cluster.Inputs {
	return cluster.Inputs{
		Nodes: []corev1.Node{{ObjectMeta: meta("", "n1", "1")}, {ObjectMeta: meta("", "n2", "2")}},
		Pods:  []corev1.Pod{{ObjectMeta: meta("blue", "a", "3")}, {ObjectMeta: meta("blue", "b", "4")}},
		CUDNs: []*ovnkv1.ClusterUserDefinedNetwork{{ObjectMeta: meta("", "green", "5")}},
	}
}

func footprint(legacy ...string) l2upgrade.Footprint {
	fp := l2upgrade.Footprint{Legacy: map[string]bool{}, TransitRouter: map[string]bool{}, Upgrade: map[string]bool{}}
	for _, n := range legacy {
		fp.Legacy[n] = true
	}
	return fp
}

// TestInputsKeyNamesWhatACompileReads: the key changes with any object's version and
// with the footprint, and not with the order the informers list objects in.
func TestInputsKeyNamesWhatACompileReads(t *testing.T) {
	base := inputsKey(inputs(), footprint("green"))
	reordered := inputs()
	reordered.Pods[0], reordered.Pods[1] = reordered.Pods[1], reordered.Pods[0]
	reordered.Nodes[0], reordered.Nodes[1] = reordered.Nodes[1], reordered.Nodes[0]
	if got := inputsKey(reordered, footprint("green")); got != base {
		t.Error("listing the same objects in another order changed the key")
	}

	changes := map[string]func(in *cluster.Inputs, fp *l2upgrade.Footprint){
		"a pod's new version":             func(in *cluster.Inputs, _ *l2upgrade.Footprint) { in.Pods[0].ResourceVersion = "9" },
		"a pod deleted":                   func(in *cluster.Inputs, _ *l2upgrade.Footprint) { in.Pods = in.Pods[1:] },
		"a node recreated under its name": func(in *cluster.Inputs, _ *l2upgrade.Footprint) { in.Nodes[0].UID = "other" },
		"a network added": func(in *cluster.Inputs, _ *l2upgrade.Footprint) {
			in.UDNs = append(in.UDNs, &ovnkv1.UserDefinedNetwork{ObjectMeta: meta("blue", "blue", "6")})
		},
		"a pod moved from one list to another": func(in *cluster.Inputs, _ *l2upgrade.Footprint) {
			in.Namespaces = []corev1.Namespace{{ObjectMeta: in.Pods[0].ObjectMeta}}
			in.Pods = in.Pods[1:]
		},
		"the footprint": func(_ *cluster.Inputs, fp *l2upgrade.Footprint) { fp.TransitRouter["green"] = true },
	}
	for what, change := range changes {
		in, fp := inputs(), footprint("green")
		change(&in, &fp)
		if inputsKey(in, fp) == base {
			t.Errorf("%s left the key as it was", what)
		}
	}
}
