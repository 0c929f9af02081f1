package cluster

import "testing"

var testCUDNRef = ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "blue"}

func TestNetworkIDCodec(t *testing.T) {
	runCodecCases(t, NetworkIDCodec, testCUDNRef, []codecCase[int]{
		{name: "id", value: "5", want: 5},
		{name: "negative", value: "-3", wantErr: []string{`"-3" is negative`}},
		{name: "float", value: "5.0", wantErr: []string{`"5.0" is not a decimal integer`}},
	})
	runFormatCases(t, NetworkIDCodec, []formatCase[int]{
		{name: "id", value: 5, want: "5"},
		{name: "negative", value: -1, wantErr: "id -1 is negative"},
	})
}

func TestTunnelKeysCodec(t *testing.T) {
	runCodecCases(t, TunnelKeysCodec, testCUDNRef, []codecCase[[]int]{
		{name: "Layer2 primary", value: "[16711688,16715780]", want: []int{16711688, 16715780}},
		{name: "spaces", value: " [ 16711688 ] ", want: []int{16711688}},
		{name: "empty", value: "[]", want: nil},
		{name: "zero", value: "[0]", wantErr: []string{"tunnel key 0 is outside 1-16777215"}},
		{name: "too big", value: "[16777216]", wantErr: []string{"tunnel key 16777216 is outside"}},
		{name: "negative", value: "[-5]", wantErr: []string{"tunnel key -5 is outside"}},
		{name: "twice", value: "[7,8,7]", wantErr: []string{"tunnel key 7 appears twice"}},
		{name: "fraction", value: "[1.5]", wantErr: []string{`"[1.5]" is a JSON number 1.5, want integer`}},
		{name: "string", value: `["5"]`, wantErr: []string{"is a JSON string, want integer"}},
		{name: "not an array", value: `5`, wantErr: []string{`the value of "5" is a JSON number, want array of integers`}},
		{name: "null", value: `null`, wantErr: []string{"value null is not a JSON array"}},
		{name: "malformed", value: `[5,`, wantErr: []string{`malformed JSON "[5,"`}},
	})
	runFormatCases(t, TunnelKeysCodec, []formatCase[[]int]{
		{name: "keys", value: []int{16711688, 16715780}, want: "[16711688,16715780]"},
		{name: "none", value: nil, want: "[]"},
		{name: "zero", value: []int{0}, wantErr: "tunnel key 0"},
	})
}
