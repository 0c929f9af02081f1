package manifests

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ToUnstructured converts one of the typed objects Agent returns into the form a
// server-side apply sends: its fields as JSON names them, with apiVersion and kind,
// without status (an apply must not claim the fields a controller reports) and without
// an empty spec. An apply owns every field it sends, so the typed objects must not
// carry zero values that their JSON tags fail to omit: testdata/agent.yaml shows every
// field Agent's objects send.
func ToUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("object %q has no apiVersion and kind set", obj.GetName())
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s %q: %w", gvk.Kind, obj.GetName(), err)
	}
	delete(fields, "status")
	if spec, ok := fields["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(fields, "spec") // a Namespace's
	}
	return &unstructured.Unstructured{Object: fields}, nil
}

// yamlHeader starts the rendered manifests.
const yamlHeader = "# ovnk-agent: rendered by github.com/ovnk/ovnk/pkg/manifests.AgentYAML.\n" +
	"# Install the CRDs first; apply with: kubectl apply --server-side --field-manager=" + FieldManager + " -f <this file>\n"

// AgentYAML renders the objects of Agent as one multi-document YAML stream, in apply
// order. The output depends only on opts (and, when opts.Version is empty, on the
// build's version): keys are sorted, and no server-set field appears.
func AgentYAML(opts AgentOptions) ([]byte, error) {
	objs, err := Agent(opts)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString(yamlHeader)
	for _, obj := range objs {
		u, err := ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("render agent manifests: %w", err)
		}
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("render %s %q: %w", u.GetKind(), u.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}
