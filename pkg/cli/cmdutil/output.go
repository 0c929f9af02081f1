package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Output is the -o flag, as kubectl has it: empty for the command's own human view,
// or json, yaml, name, jsonpath=…, jsonpath-file=…, go-template=…, go-template-file=….
type Output struct {
	flags *genericclioptions.PrintFlags
	// humanViews are the extra values the command itself draws (e.g. "wide", "tree").
	humanViews []string
}

// AddOutputFlag registers -o on cmd. humanViews are extra formats the command draws
// itself, besides the default (empty) one.
func AddOutputFlag(cmd *cobra.Command, humanViews ...string) *Output {
	o := &Output{flags: genericclioptions.NewPrintFlags("").WithTypeSetter(Scheme), humanViews: humanViews}
	o.flags.AddFlags(cmd)
	formats := append(append([]string{}, humanViews...), o.flags.AllowedFormats()...)
	cmd.Flag("output").Usage = "output format: " + strings.Join(formats, ", ") + " (default: a table)"
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
	return o
}

// Format is the -o value as given, "" for the human view.
func (o *Output) Format() string { return *o.flags.OutputFormat }

// Human reports whether the command draws the output itself: no -o, or one of its own.
func (o *Output) Human() bool {
	f := o.Format()
	if f == "" {
		return true
	}
	for _, v := range o.humanViews {
		if f == v {
			return true
		}
	}
	return false
}

// Validate checks -o before anything is contacted.
func (o *Output) Validate() error {
	if o.Human() {
		return nil
	}
	if _, err := o.flags.ToPrinter(); err != nil {
		return o.unknown()
	}
	return nil
}

func (o *Output) unknown() error {
	all := append(append([]string{}, o.humanViews...), o.flags.AllowedFormats()...)
	return fmt.Errorf("unknown output format %q: use one of %s", o.Format(), strings.Join(all, ", "))
}

// PrintObject prints a Kubernetes object (or a List) in the -o format.
func (o *Output) PrintObject(obj runtime.Object, w io.Writer) error {
	p, err := o.flags.ToPrinter()
	if err != nil {
		return o.unknown()
	}
	return p.PrintObj(obj, w)
}

// PrintList prints objs as the List kubectl prints for several objects, so that -o
// json, yaml, name and jsonpath give what `kubectl get` would. Each object gets its
// apiVersion and kind from Scheme: the client leaves them empty on the typed objects it
// reads.
func (o *Output) PrintList(objs []client.Object, w io.Writer) error {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, obj := range objs {
		gvks, _, err := Scheme.ObjectKinds(obj)
		if err != nil {
			return fmt.Errorf("kind of %T %s: %w", obj, obj.GetName(), err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("convert %s %s: %w", gvks[0].Kind, obj.GetName(), err)
		}
		u := unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvks[0])
		list.Items = append(list.Items, u)
	}
	return o.PrintObject(list, w)
}

// PrintData prints a view that is not a Kubernetes object (a topology, a route table,
// a status) as json, yaml, jsonpath or go-template. Such a view has no name, so -o name
// is refused.
func (o *Output) PrintData(v any, w io.Writer) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	format := o.Format()
	switch {
	case format == "json":
		var buf map[string]any
		if err := json.Unmarshal(data, &buf); err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "    ")
		return enc.Encode(buf)
	case format == "yaml":
		out, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	case format == "name":
		return fmt.Errorf("-o name needs named objects, and this view has none: use -o json, yaml or jsonpath")
	}
	var content map[string]any
	if err := json.Unmarshal(data, &content); err != nil {
		return err
	}
	// The template printers directly: the full chain would insist on a kind.
	p, err := o.flags.TemplatePrinterFlags.ToPrinter(format)
	if err != nil {
		return o.unknown()
	}
	return p.PrintObj(&unstructured.Unstructured{Object: content}, w)
}
