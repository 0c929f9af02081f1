package cluster

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestBuildNamesBadNodeAnnotation: each malformed node annotation is an error that
// names the node, the annotation, its value and what was expected, and (without a last
// good version) leaves the node out.
func TestBuildNamesBadNodeAnnotation(t *testing.T) {
	for _, tc := range []struct {
		annotation, value string
		want              []string
	}{
		{AnnotationL3GatewayConfig, "garbage", []string{`"garbage"`, "want a JSON object"}},
		{AnnotationNodePrimaryIfAddr, `{"ipv4":"not-an-ip"}`, []string{`"ipv4"`, `"not-an-ip" is not a CIDR`}},
		{AnnotationNodeSubnets, `{"default":"10.244.1.0/33"}`, []string{`"10.244.1.0/33"`, "CIDR"}},
		{AnnotationHostCIDRs, `"172.18.0.2/16"`, []string{`"\"172.18.0.2/16\""`, "want array of strings"}},
		{AnnotationNodeTransitSwitchPortIfAddr, `{"ipv4":"fd97::2/64"}`, []string{`"fd97::2/64" is an IPv6 address`}},
		{AnnotationNodeID, "two", []string{`"two"`}},
		{AnnotationNodeChassisID, "a b", []string{`"a b" contains a space`}},
	} {
		t.Run(tc.annotation, func(t *testing.T) {
			in := clusterInputs()
			in.Nodes[1].Annotations[tc.annotation] = tc.value
			st, errs := Build(in)
			if st.Node("worker2") != nil {
				t.Fatalf("worker2 is in the state despite %s=%s", tc.annotation, tc.value)
			}
			err := NodeProblems(errs, "worker2")
			if err == nil {
				t.Fatalf("no problem reported for worker2 among %v", errs)
			}
			for _, want := range append([]string{"node/worker2: annotation " + tc.annotation + ": "}, tc.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if errors.Is(err, ErrNotReady) || errors.Is(err, ErrLastGoodKept) {
				t.Errorf("error %q is marked not ready or kept", err)
			}
			if LastGoodAnnotations(&in.Nodes[1], nil) != nil {
				t.Error("the malformed node, with no last good version, is a good version itself")
			}
		})
	}
}

// TestBuildKeepsLastGoodNode: a node whose annotation turns malformed is built with
// that annotation's last good value, and only that one; the error says so.
func TestBuildKeepsLastGoodNode(t *testing.T) {
	good := clusterInputs()
	want, errs := Build(good)
	if len(errs) > 0 {
		t.Fatalf("good inputs: %v", errs)
	}
	lastGood := good.Nodes[1].DeepCopy()
	if got := LastGoodAnnotations(lastGood, nil); !reflect.DeepEqual(got, lastGood.Annotations) {
		t.Fatalf("a good node's last good annotations are %v, want its own", got)
	}

	in := clusterInputs()
	in.Nodes[1].Annotations[AnnotationL3GatewayConfig] = "garbage"
	in.Nodes[1].Annotations[AnnotationNodePrimaryIfAddr] = `{"ipv4":"not-an-ip"}`
	in.LastGoodNodes = map[string]*corev1.Node{"worker2": lastGood}
	st, errs := Build(in)
	if got := st.Node("worker2"); got == nil || !reflect.DeepEqual(got, want.Node("worker2")) {
		t.Fatalf("worker2 = %+v, want its last good version %+v", got, want.Node("worker2"))
	}
	if len(errs) != 2 {
		t.Fatalf("errors = %q, want one per malformed annotation", errs)
	}
	for i, annotation := range []string{AnnotationNodePrimaryIfAddr, AnnotationL3GatewayConfig} {
		var oe *ObjectError
		if !errors.As(errs[i], &oe) || oe.Annotation != annotation || !errors.Is(errs[i], ErrLastGoodKept) {
			t.Errorf("error %d = %q, want one about %s marked ErrLastGoodKept", i, errs[i], annotation)
		}
	}

	// A newer good value of another annotation is used, not the last good one.
	in.Nodes[1].Annotations[AnnotationHostCIDRs] = `["172.18.0.3/16","172.18.0.99/16"]`
	st, _ = Build(in)
	if got := st.Node("worker2"); got == nil || len(got.HostCIDRs) != 2 {
		t.Errorf("worker2's host CIDRs = %v, want the current two", got)
	}

	// Another Node of the same name (recreated) has no last good version.
	in.Nodes[1].UID = "other"
	if st, _ := Build(in); st.Node("worker2") != nil {
		t.Error("a recreated node was built from its predecessor's annotations")
	}
}

// TestBuildLastGoodDoesNotHideMissing: an annotation that is missing, rather than
// malformed, is not taken from the last good version: the node waits as it would.
func TestBuildLastGoodDoesNotHideMissing(t *testing.T) {
	in := clusterInputs()
	lastGood := in.Nodes[1].DeepCopy()
	in.Nodes[1].Annotations = maps.Clone(in.Nodes[1].Annotations)
	delete(in.Nodes[1].Annotations, AnnotationNodeID)
	in.LastGoodNodes = map[string]*corev1.Node{"worker2": lastGood}
	st, errs := Build(in)
	if st.Node("worker2") != nil {
		t.Fatal("worker2 without a node id is in the state")
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrNotReady) || NodeProblems(errs, "worker2") != nil {
		t.Errorf("errors = %q, want worker2 not ready and no problem", errs)
	}
}
