package cluster

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

var testNodeRef = ObjectRef{Kind: "Node", Name: "worker1"}

// codecCase is one Parse test: want is the value, or wantErr lists substrings of the
// error (which must also name the object and the annotation).
type codecCase[T any] struct {
	name    string
	value   string
	want    T
	wantErr []string
}

// runCodecCases checks Parse against each case, and that every value parsed formats to
// a canonical string that parses back to the same value.
func runCodecCases[T any](t *testing.T, c Codec[T], ref ObjectRef, cases []codecCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Parse(ref, tc.value)
			if len(tc.wantErr) > 0 {
				checkObjectError(t, err, ref, c.Key, tc.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.value, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) =\n%#v\nwant\n%#v", tc.value, got, tc.want)
			}
			checkRoundTrip(t, c, ref, got)
		})
	}
}

// checkRoundTrip formats v, parses the result back and formats again.
func checkRoundTrip[T any](t *testing.T, c Codec[T], ref ObjectRef, v T) {
	t.Helper()
	s, err := c.Format(v)
	if err != nil {
		t.Fatalf("Format(%#v): %v", v, err)
	}
	back, err := c.Parse(ref, s)
	if err != nil {
		t.Fatalf("Parse(Format(v)) of %q: %v", s, err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("round trip through %q changed\n%#v\nto\n%#v", s, v, back)
	}
	if again, _ := c.Format(back); again != s {
		t.Fatalf("Format is not canonical: %q, then %q", s, again)
	}
}

// checkObjectError checks that err is an *ObjectError about ref and annotation whose
// message contains every one of want.
func checkObjectError(t *testing.T, err error, ref ObjectRef, annotation string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	var oe *ObjectError
	if !errors.As(err, &oe) {
		t.Fatalf("error %q is a %T, want *ObjectError", err, err)
	}
	if oe.Object != ref || oe.Annotation != annotation {
		t.Errorf("error names %v, annotation %q; want %v, %q", oe.Object, oe.Annotation, ref, annotation)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// formatCase is one Format test: want is the exact output, or wantErr a substring.
type formatCase[T any] struct {
	name    string
	value   T
	want    string
	wantErr string
}

func runFormatCases[T any](t *testing.T, c Codec[T], cases []formatCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Format(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), c.Key) {
					t.Fatalf("Format(%#v) error = %v, want one naming %s and containing %q", tc.value, err, c.Key, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Format(%#v): %v", tc.value, err)
			}
			if got != tc.want {
				t.Fatalf("Format(%#v) =\n%s\nwant\n%s", tc.value, got, tc.want)
			}
		})
	}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func pfxs(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = pfx(s)
	}
	return out
}

func TestObjectErrorMessage(t *testing.T) {
	_, err := NodeSubnetsCodec.Parse(testNodeRef, `{"default":"10.244.1.0/33"}`)
	want := `node/worker1: annotation k8s.ovn.org/node-subnets: network "default": "10.244.1.0/33" is not a CIDR such as 10.244.1.0/24 or fd00:10:244:1::/64`
	if err == nil || err.Error() != want {
		t.Fatalf("error =\n%v\nwant\n%s", err, want)
	}
	pod := ObjectRef{Kind: "Pod", Namespace: "blue", Name: "web"}
	err = &ObjectError{Object: pod, Err: errors.New("boom")}
	if got := err.Error(); got != "pod/blue/web: boom" {
		t.Fatalf("error = %q", got)
	}
}

func TestMalformedJSONMessages(t *testing.T) {
	long := `{"default":"` + strings.Repeat("x", 300)
	cases := []struct {
		value string
		want  []string
	}{
		{`{"default":`, []string{`malformed JSON "{\"default\":"`, "unexpected end of JSON input"}},
		{`null`, []string{"value null is not a JSON object"}},
		{`["10.244.1.0/24"]`, []string{`the value of "[\"10.244.1.0/24\"]" is a JSON array, want object`}},
		{long, []string{"malformed JSON", `xxx"…`}},
	}
	for _, tc := range cases {
		_, err := NodeSubnetsCodec.Parse(testNodeRef, tc.value)
		checkObjectError(t, err, testNodeRef, AnnotationNodeSubnets, tc.want...)
		if err != nil && len(err.Error()) > 2*maxQuoted+200 {
			t.Errorf("error is %d bytes long; the value should be shortened", len(err.Error()))
		}
	}
}

func TestLookup(t *testing.T) {
	annotations := map[string]string{AnnotationNodeID: "7", AnnotationNetworkID: "x"}
	if id, ok, err := NodeIDCodec.Lookup(testNodeRef, annotations); id != 7 || !ok || err != nil {
		t.Errorf("Lookup(node-id) = %d, %v, %v; want 7, true, nil", id, ok, err)
	}
	if _, ok, err := NodeChassisIDCodec.Lookup(testNodeRef, annotations); ok || err != nil {
		t.Errorf("Lookup(missing) = %v, %v; want false, nil", ok, err)
	}
	if _, ok, err := NetworkIDCodec.Lookup(testNodeRef, annotations); !ok || err == nil {
		t.Errorf("Lookup(bad) = %v, %v; want true and an error", ok, err)
	}
	if _, ok, err := NodeIDCodec.Lookup(testNodeRef, nil); ok || err != nil {
		t.Errorf("Lookup(nil map) = %v, %v; want false, nil", ok, err)
	}
}
