package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestZoneStatusCodec(t *testing.T) {
	runCodecCases(t, ZoneStatusCodec, testNodeRef, []codecCase[map[string]string]{
		{name: "report", value: `{"default":"","cluster_udn_blue":"no chassis id yet"}`,
			want: map[string]string{"default": "", "cluster_udn_blue": "no chassis id yet"}},
		{name: "unknown network names are kept", value: `{"ns1_red":""}`, want: map[string]string{"ns1_red": ""}},
		{name: "empty", value: `{}`, want: nil},
		{name: "empty name", value: `{"":"x"}`, wantErr: []string{"a network name is empty"}},
		{name: "number", value: `{"a":5}`, wantErr: []string{`network "a": "5" is not a JSON string`}},
		{name: "null reason", value: `{"a":null}`, wantErr: []string{`network "a": "null" is not a JSON string`}},
		{name: "array", value: `["default"]`, wantErr: []string{"is a JSON array, want object"}},
		{name: "null", value: `null`, wantErr: []string{"value null is not a JSON object"}},
		{name: "malformed", value: `{"a":`, wantErr: []string{"malformed JSON"}},
	})
	runFormatCases(t, ZoneStatusCodec, []formatCase[map[string]string]{
		{name: "sorted", value: map[string]string{"ns1_red": "why", "default": ""}, want: `{"default":"","ns1_red":"why"}`},
		{name: "none", value: nil, want: `{}`},
		{name: "empty name", value: map[string]string{"": ""}, wantErr: "a network name is empty"},
	})
}

func FuzzZoneStatus(f *testing.F) { fuzzCodec(f, ZoneStatusCodec) }

func TestZoneReportReadiness(t *testing.T) {
	node := func(annotations map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1", Annotations: annotations}}
	}
	for _, tc := range []struct {
		name       string
		node       *corev1.Node
		ready      bool
		wantReason string
	}{
		{name: "programmed", node: node(map[string]string{AnnotationZoneStatus: `{"ns1_red":""}`}), ready: true},
		{name: "not programmed: the zone's reason", node: node(map[string]string{AnnotationZoneStatus: `{"ns1_red":"no chassis id yet"}`}),
			wantReason: "no chassis id yet"},
		{name: "no report", node: node(nil), wantReason: "no zone report yet"},
		{name: "not reported on", node: node(map[string]string{AnnotationZoneStatus: `{}`}),
			wantReason: "the zone has not reported on the network yet"},
		{name: "unreadable: the leader's words, without the value", node: node(map[string]string{AnnotationZoneStatus: `{"ns1_red":5}`}),
			wantReason: "its ovnk.io/zone-status annotation is unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadZoneReport(tc.node).Readiness("ns1_red", "network")
			if got != (NodeReadiness{Node: "w1", Ready: tc.ready, Reason: tc.wantReason}) {
				t.Errorf("Readiness = %+v, want ready %t, reason %q", got, tc.ready, tc.wantReason)
			}
		})
	}
}
