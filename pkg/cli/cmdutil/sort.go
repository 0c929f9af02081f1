package cmdutil

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sortKey is the value an object is sorted by: absent, a number, or a string (which
// may also read as a quantity, such as 10Gi).
type sortKey struct {
	present bool
	number  float64
	text    string
	isText  bool
	// quantity is text read as a quantity, when it reads as one.
	quantity *resource.Quantity
}

// sortObjects orders objs stably by the first value field finds in each (what names
// them in errors). Numbers compare as numbers, strings as strings (timestamps, which
// the API server writes in one form, in time order), and strings that all read as
// quantities (10Gi, 500m) as quantities; an object without the field goes first.
func sortObjects(field *jsonpath.JSONPath, objs []client.Object, what string) error {
	keys := make(map[client.Object]sortKey, len(objs))
	found, texts, numbers := false, 0, 0
	for _, obj := range objs {
		u, err := objectContent(obj)
		if err != nil {
			return err
		}
		values, err := fieldValues(field, u.Object)
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if len(values) == 0 {
			continue
		}
		k, err := sortKeyOf(values[0])
		if err != nil {
			return fmt.Errorf("%s %s holds %w", u.GetKind(), u.GetName(), err)
		}
		keys[obj] = k
		found = true
		if k.isText {
			texts++
		} else {
			numbers++
		}
	}
	if !found {
		return fmt.Errorf("none of the %d %s has this field: check its path against -o yaml", len(objs), what)
	}
	if texts > 0 && numbers > 0 {
		return fmt.Errorf("the field holds strings in some %s and numbers in others, which do not sort together", what)
	}
	quantities := texts > 0
	for _, k := range keys {
		quantities = quantities && k.quantity != nil
	}
	slices.SortStableFunc(objs, func(a, b client.Object) int {
		ka, kb := keys[a], keys[b]
		switch {
		case !ka.present || !kb.present:
			return boolOrder(ka.present, kb.present)
		case quantities:
			return ka.quantity.Cmp(*kb.quantity)
		case ka.isText:
			return cmp.Compare(ka.text, kb.text)
		}
		return cmp.Compare(ka.number, kb.number)
	})
	return nil
}

// sortKeyOf is the key of v, a value of an object as JSON holds it.
func sortKeyOf(v any) (sortKey, error) {
	switch v := v.(type) {
	case string:
		k := sortKey{present: true, text: v, isText: true}
		if q, err := resource.ParseQuantity(v); err == nil {
			k.quantity = &q
		}
		return k, nil
	case int64:
		return sortKey{present: true, number: float64(v)}, nil
	case float64:
		return sortKey{present: true, number: v}, nil
	}
	return sortKey{}, fmt.Errorf("%s, which does not sort: give the path of a string or a number inside it", describeValue(v))
}

// describeValue names the kind of a JSON value that does not sort.
func describeValue(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case bool:
		return fmt.Sprintf("a boolean (%t)", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
