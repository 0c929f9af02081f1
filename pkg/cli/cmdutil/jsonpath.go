package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldPathExample is how an error about a field path says to write one.
const fieldPathExample = "write one such as .metadata.name or {.spec.topology}"

// fieldPath parses path, a field of an object as --sort-by and -o custom-columns take
// it: kubectl writes .metadata.name, metadata.name, {.metadata.name} and
// {metadata.name} alike, one JSONPath expression without braces inside. Fields missing
// from an object find nothing rather than failing.
func fieldPath(path string) (*jsonpath.JSONPath, error) {
	inner := path
	if strings.HasPrefix(inner, "{") && strings.HasSuffix(inner, "}") {
		inner = inner[1 : len(inner)-1]
	}
	inner = strings.TrimPrefix(inner, ".")
	if inner == "" || strings.ContainsAny(inner, "{}") {
		return nil, errors.New("not a field path: " + fieldPathExample)
	}
	p := jsonpath.New(path).AllowMissingKeys(true)
	if err := p.Parse("{." + inner + "}"); err != nil {
		return nil, fmt.Errorf("%w: %s", err, fieldPathExample)
	}
	return p, nil
}

// fieldValues are the values p finds in obj, as fmt prints them: none when the object
// lacks the field.
func fieldValues(p *jsonpath.JSONPath, obj map[string]any) ([]any, error) {
	results, err := p.FindResults(obj)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, r := range results {
		for _, v := range r {
			out = append(out, v.Interface())
		}
	}
	return out, nil
}

// objectContent is obj as the API server writes it, apiVersion and kind included,
// which the client leaves empty on the typed objects it reads: what a JSONPath given
// by the user (-o jsonpath, custom-columns, --sort-by) is evaluated against.
func objectContent(obj client.Object) (*unstructured.Unstructured, error) {
	gvks, _, err := Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, fmt.Errorf("kind of %T %s: %w", obj, obj.GetName(), err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s %s: %w", gvks[0].Kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u, nil
}
