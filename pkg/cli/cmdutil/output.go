package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Output is the -o flag, as kubectl has it: empty for the command's own human view,
// or json, yaml, name, jsonpath=…, jsonpath-file=…, go-template=…, go-template-file=…,
// and for objects custom-columns=… and custom-columns-file=….
type Output struct {
	flags *genericclioptions.PrintFlags
	// humanViews are the extra values the command itself draws (e.g. "wide", "tree").
	humanViews []string
	// data is set for a view that is not Kubernetes objects (PrintData): -o name (it
	// has no names), kyaml (which PrintData does not write) and custom columns (their
	// fields are objects' fields) are neither offered nor accepted.
	data bool
	// columns are the custom columns of -o custom-columns[-file], read by Validate.
	columns *customColumns
}

// notForData are the printers' formats a view that is not objects cannot be printed in.
var notForData = []string{"name", "kyaml"}

// AddOutputFlag registers -o on cmd, for a command that prints Kubernetes objects
// (PrintObject, PrintList). humanViews are extra formats the command draws itself,
// besides the default (empty) one.
func AddOutputFlag(cmd *cobra.Command, humanViews ...string) *Output {
	return addOutputFlag(cmd, false, humanViews)
}

// AddDataOutputFlag registers -o on cmd, for a command whose view is not Kubernetes
// objects (PrintData): every format of AddOutputFlag but name and kyaml.
func AddDataOutputFlag(cmd *cobra.Command, humanViews ...string) *Output {
	return addOutputFlag(cmd, true, humanViews)
}

func addOutputFlag(cmd *cobra.Command, data bool, humanViews []string) *Output {
	o := &Output{flags: genericclioptions.NewPrintFlags("").WithTypeSetter(Scheme), humanViews: humanViews, data: data}
	o.flags.AddFlags(cmd)
	formats := o.formats()
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

// Validate checks -o before anything is contacted, custom columns' fields included.
func (o *Output) Validate() error {
	if o.Human() {
		return nil
	}
	if isCustomColumns(o.Format()) && !o.data {
		columns, err := parseCustomColumns(o.Format())
		if err != nil {
			return err
		}
		o.columns = columns
		return nil
	}
	if _, err := o.flags.ToPrinter(); err != nil || o.data && slices.Contains(notForData, o.Format()) {
		return o.unknown()
	}
	return nil
}

// formats are the -o values the command takes: its own views, then the printers', then
// for objects the custom columns.
func (o *Output) formats() []string {
	out := append([]string{}, o.humanViews...)
	for _, f := range o.flags.AllowedFormats() {
		if !o.data || !slices.Contains(notForData, f) {
			out = append(out, f)
		}
	}
	if !o.data {
		out = append(out, customColumnsFormats...)
	}
	return out
}

func (o *Output) unknown() error {
	return fmt.Errorf("unknown output format %q: use one of %s", o.Format(), strings.Join(o.formats(), ", "))
}

// PrintObject prints a Kubernetes object (or a List) in the -o format.
func (o *Output) PrintObject(obj runtime.Object, w io.Writer) error {
	if o.columns != nil {
		objs, err := columnObjects(obj)
		if err != nil {
			return err
		}
		return o.columns.print(objs, true, w)
	}
	p, err := o.flags.ToPrinter()
	if err != nil {
		return o.unknown()
	}
	return p.PrintObj(obj, w)
}

// columnObjects are the objects custom columns show of obj: its items if it is a List.
func columnObjects(obj runtime.Object) ([]client.Object, error) {
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, fmt.Errorf("custom columns of %T: %w", obj, err)
		}
	}
	objs := make([]client.Object, len(items))
	for i, item := range items {
		c, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("custom columns of %T: %T has no metadata", obj, item)
		}
		objs[i] = c
	}
	return objs, nil
}

// PrintList prints objs as the List kubectl prints for several objects, so that -o
// json, yaml, name and jsonpath give what `kubectl get` would. Each object gets its
// apiVersion and kind from Scheme: the client leaves them empty on the typed objects it
// reads. Custom columns print a row for each object.
func (o *Output) PrintList(objs []client.Object, w io.Writer) error {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, obj := range objs {
		u, err := objectContent(obj)
		if err != nil {
			return err
		}
		list.Items = append(list.Items, *u)
	}
	return o.PrintObject(list, w)
}

// PrintWatchList prints objs, the list a watch (-w) starts from, as `kubectl get -w`
// does: each object on its own rather than a List, so that what follows (PrintWatched)
// continues the same stream; custom columns print their header once, here, even over
// no objects.
func (o *Output) PrintWatchList(objs []client.Object, w io.Writer) error {
	if o.columns != nil {
		return o.columns.print(objs, true, w)
	}
	for _, obj := range objs {
		if err := o.PrintObject(obj, w); err != nil {
			return err
		}
	}
	return nil
}

// PrintWatched prints an object that changed while watching, after PrintWatchList:
// custom columns its row alone.
func (o *Output) PrintWatched(obj client.Object, w io.Writer) error {
	if o.columns != nil {
		return o.columns.print([]client.Object{obj}, false, w)
	}
	return o.PrintObject(obj, w)
}

// PrintData prints a view that is not a Kubernetes object (a topology, a route table,
// a status) as json, yaml, jsonpath or go-template: the -o of AddDataOutputFlag, whose
// Validate refuses -o name, as such a view has no names.
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
