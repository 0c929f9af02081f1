package cluster

import "testing"

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
