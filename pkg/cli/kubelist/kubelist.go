// Package kubelist turns typed objects into the List kubectl prints for several
// objects, so that -o json, yaml, name and jsonpath of a command give what
// `kubectl get` would.
package kubelist

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// Of is a List of objs, each with its apiVersion and kind set from cmdutil.Scheme: the
// client leaves them empty on the typed objects it reads.
func Of(objs ...client.Object) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, obj := range objs {
		gvks, _, err := cmdutil.Scheme.ObjectKinds(obj)
		if err != nil {
			return nil, fmt.Errorf("kind of %T %s: %w", obj, obj.GetName(), err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("convert %s %s: %w", gvks[0].Kind, obj.GetName(), err)
		}
		u := unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvks[0])
		list.Items = append(list.Items, u)
	}
	return list, nil
}
