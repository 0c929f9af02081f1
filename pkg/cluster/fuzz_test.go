package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The fuzz tests check every codec: no input makes Parse panic, its errors name the
// object and the annotation, and whatever it accepts formats to a canonical string that
// parses back to the same value. Without -fuzz, `go test` runs them over the seed
// corpora in testdata/fuzz/<FuzzName>/.

var fuzzRef = ObjectRef{Kind: "Node", Name: "fuzz"}

func fuzzCodec[T any](f *testing.F, c Codec[T]) {
	seeds, err := os.ReadDir(filepath.Join("testdata", "fuzz", f.Name()))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed corpus for %s in testdata/fuzz (%v)", f.Name(), err)
	}
	f.Fuzz(func(t *testing.T, value string) {
		v, err := c.Parse(fuzzRef, value)
		if err != nil {
			var oe *ObjectError
			if !errors.As(err, &oe) || oe.Object != fuzzRef || oe.Annotation != c.Key {
				t.Fatalf("Parse(%q) error %q does not name the object and annotation", value, err)
			}
			return
		}
		s, err := c.Format(v)
		if err != nil {
			t.Fatalf("Parse(%q) accepted %#v, which Format refuses: %v", value, v, err)
		}
		back, err := c.Parse(fuzzRef, s)
		if err != nil {
			t.Fatalf("Parse(%q) = %#v formats to %q, which Parse refuses: %v", value, v, s, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("Parse(%q) = %#v formats to %q, which parses to %#v", value, v, s, back)
		}
		if again, err := c.Format(back); err != nil || again != s {
			t.Fatalf("Format is not canonical: %q, then %q (%v)", s, again, err)
		}
	})
}

func FuzzNodeID(f *testing.F)                  { fuzzCodec(f, NodeIDCodec) }
func FuzzNodeChassisID(f *testing.F)           { fuzzCodec(f, NodeChassisIDCodec) }
func FuzzNodeSubnets(f *testing.F)             { fuzzCodec(f, NodeSubnetsCodec) }
func FuzzTransitSwitchPortIfAddr(f *testing.F) { fuzzCodec(f, TransitSwitchPortIfAddrCodec) }
func FuzzPrimaryIfAddr(f *testing.F)           { fuzzCodec(f, PrimaryIfAddrCodec) }
func FuzzHostCIDRs(f *testing.F)               { fuzzCodec(f, HostCIDRsCodec) }
func FuzzL3GatewayConfig(f *testing.F)         { fuzzCodec(f, L3GatewayConfigCodec) }
func FuzzNetworkID(f *testing.F)               { fuzzCodec(f, NetworkIDCodec) }
func FuzzTunnelKeys(f *testing.F)              { fuzzCodec(f, TunnelKeysCodec) }
func FuzzPodNetworks(f *testing.F)             { fuzzCodec(f, PodNetworksCodec) }
