package v1_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// sample is one file of testdata/valid or testdata/invalid.
type sample struct {
	path string
	data []byte
	// expect is the substring of the API server's refusal, from the file's
	// "# expect: …" line; empty for valid samples.
	expect string
}

func (s sample) name() string { return filepath.Base(s.path) }

// loadSamples reads testdata/<dir>/*.yaml, sorted by name.
func loadSamples(t testing.TB, dir string) []sample {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil {
		t.Fatalf("list samples: %v", err)
	}
	if len(paths) == 0 {
		t.Fatalf("no samples in testdata/%s", dir)
	}
	sort.Strings(paths)
	samples := make([]sample, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read sample: %v", err)
		}
		samples = append(samples, sample{path: p, data: data, expect: expectation(data)})
	}
	return samples
}

// expectation returns the text after "# expect:" in a leading comment, or "".
func expectation(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			return ""
		}
		if rest, ok := strings.CutPrefix(line, "# expect:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func newScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	return scheme
}

// decodeStrict decodes a sample into the Go type its apiVersion and kind name in the
// scheme, refusing unknown and duplicate fields.
func decodeStrict(scheme *runtime.Scheme, data []byte) (runtime.Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	gvk := tm.GroupVersionKind()
	if gvk.GroupVersion() != ovnkv1.SchemeGroupVersion {
		return nil, fmt.Errorf("apiVersion %q is not %s", tm.APIVersion, ovnkv1.SchemeGroupVersion)
	}
	obj, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kind %q: %w", tm.Kind, err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, fmt.Errorf("decode %s strictly: %w", gvk.Kind, err)
	}
	return obj, nil
}

// TestSamplesDecodeStrictly checks that every sample, valid or not, uses only fields the
// Go types know (the invalid ones break validation rules, not the schema's shape), and
// that encoding and decoding again yields the same object.
func TestSamplesDecodeStrictly(t *testing.T) {
	scheme := newScheme(t)
	for _, dir := range []string{"valid", "invalid"} {
		for _, s := range loadSamples(t, dir) {
			t.Run(dir+"/"+s.name(), func(t *testing.T) {
				obj, err := decodeStrict(scheme, s.data)
				if err != nil {
					t.Fatal(err)
				}
				encoded, err := yaml.Marshal(obj)
				if err != nil {
					t.Fatalf("encode: %v", err)
				}
				again, err := decodeStrict(scheme, encoded)
				if err != nil {
					t.Fatalf("decode the encoded object: %v\n%s", err, encoded)
				}
				if !equality.Semantic.DeepEqual(obj, again) {
					t.Errorf("round trip changed the object:\nbefore: %#v\nafter:  %#v", obj, again)
				}
			})
		}
	}
}

// TestSampleExpectations checks the sample sets themselves: every invalid sample says
// what the API server must answer, no valid one does, and every kind has valid samples.
func TestSampleExpectations(t *testing.T) {
	scheme := newScheme(t)
	kinds := map[string]int{}
	for _, s := range loadSamples(t, "valid") {
		if s.expect != "" {
			t.Errorf("%s: a valid sample has an expect line", s.path)
		}
		obj, err := decodeStrict(scheme, s.data)
		if err != nil {
			t.Errorf("%s: %v", s.path, err)
			continue
		}
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatalf("%s: %v", s.path, err)
		}
		kinds[gvks[0].Kind]++
	}
	for _, kind := range []string{"UserDefinedNetwork", "ClusterUserDefinedNetwork", "ClusterNetworkConnect", "EgressIP", "RouteAdvertisements"} {
		if kinds[kind] == 0 {
			t.Errorf("no valid sample of %s", kind)
		}
	}
	for _, s := range loadSamples(t, "invalid") {
		if s.expect == "" {
			t.Errorf("%s: an invalid sample needs a leading \"# expect: <error substring>\" line", s.path)
		}
	}
}

// TestDeepCopyIsIndependent changes every reachable value of a deep copy and checks that
// the original did not move: a shared slice, map or pointer would show up here.
func TestDeepCopyIsIndependent(t *testing.T) {
	scheme := newScheme(t)
	for _, s := range loadSamples(t, "valid") {
		t.Run(s.name(), func(t *testing.T) {
			obj, err := decodeStrict(scheme, s.data)
			if err != nil {
				t.Fatal(err)
			}
			before, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			cp := obj.DeepCopyObject()
			if !equality.Semantic.DeepEqual(obj, cp) {
				t.Fatalf("the copy differs from the original")
			}
			if n := scribble(reflect.ValueOf(cp)); n == 0 {
				t.Fatalf("found nothing to change in the copy")
			}
			after, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("changing the copy changed the original:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// scribble overwrites every string and integer reachable from v through pointers,
// structs, slices and maps, and returns how many it changed.
func scribble(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return scribble(v.Elem())
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += scribble(v.Field(i))
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += scribble(v.Index(i))
		}
		return n
	case reflect.Map:
		n := 0
		for _, k := range v.MapKeys() {
			// Map values are not addressable: change a copy and store it back.
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			n += scribble(e)
			v.SetMapIndex(k, e)
		}
		return n
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "-changed")
			return 1
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
			return 1
		}
	}
	return 0
}
