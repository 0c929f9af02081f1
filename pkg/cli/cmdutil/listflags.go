package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListFlags are the flags with which `kubectl get` chooses and orders what a list
// shows, for a command listing Kubernetes objects: -l, --sort-by, -w and -A.
type ListFlags struct {
	// Selector is -l: a label selector the API server applies to the objects.
	Selector string
	// SortBy is --sort-by: a field of the objects to order them by.
	SortBy string
	// Watch is -w: after the list, print each object that changes.
	Watch bool
	// AllNamespaces is -A: the objects of every namespace, whatever -n says.
	AllNamespaces bool

	// what names the objects in errors ("networks").
	what     string
	selector labels.Selector
	sortBy   *jsonpath.JSONPath
}

// AddListFlags registers -l, --sort-by and -w on cmd, which lists what (its objects'
// noun in the plural, for the help and errors: "networks"), and -A. For cluster-scoped
// objects (namespaced false), -A is accepted and does nothing, as kubectl accepts it
// for them: a script may pass it to every list.
func AddListFlags(cmd *cobra.Command, what string, namespaced bool) *ListFlags {
	l := &ListFlags{what: what}
	fs := cmd.Flags()
	fs.StringVarP(&l.Selector, "selector", "l", "", "list only the "+what+" whose labels match this selector (e.g. -l tier=web, -l 'env in (a,b)', -l '!legacy'), as the API server matches them")
	fs.StringVar(&l.SortBy, "sort-by", "", "order the "+what+" by a field of theirs, a JSONPath such as .metadata.creationTimestamp (strings and numbers sort; a missing field sorts first; with -w, the list: changes print as they come)")
	fs.BoolVarP(&l.Watch, "watch", "w", false, "after the list, print each of the "+what+" again whenever it changes (a new row, or the object in the -o format), until interrupted")
	allUsage := "list the " + what + " of every namespace, whatever -n says"
	if !namespaced {
		allUsage = "accepted, and changes nothing, as in kubectl: " + what + " belong to no namespace"
	}
	fs.BoolVarP(&l.AllNamespaces, "all-namespaces", "A", false, allUsage)
	return l
}

// Validate parses -l and --sort-by before anything is contacted.
func (l *ListFlags) Validate() error {
	sel, err := labels.Parse(l.Selector)
	if err != nil {
		return fmt.Errorf("-l %q: %w: write a label selector such as tier=web, 'env in (a,b)' or '!legacy'", l.Selector, err)
	}
	l.selector = sel
	l.sortBy = nil
	if l.SortBy != "" {
		if l.sortBy, err = fieldPath(l.SortBy); err != nil {
			return fmt.Errorf("--sort-by %q: %w", l.SortBy, err)
		}
	}
	return nil
}

// ListOptions are the options of the API server's list (and watch) that -l asks for.
func (l *ListFlags) ListOptions() []client.ListOption {
	if l.selector == nil || l.selector.Empty() {
		return nil
	}
	return []client.ListOption{client.MatchingLabelsSelector{Selector: l.selector}}
}

// Sort orders objs by --sort-by, as kubectl does: by the first value the field holds
// in each object, the objects without it first. Objects of equal values keep their
// order. Without --sort-by it does nothing. The field must be present in at least one
// of the objects (else it is likely misspelt) and hold strings or numbers.
func (l *ListFlags) Sort(objs []client.Object) error {
	if l.sortBy == nil || len(objs) == 0 {
		return nil
	}
	if err := sortObjects(l.sortBy, objs, l.what); err != nil {
		return fmt.Errorf("--sort-by %s: %w", l.SortBy, err)
	}
	return nil
}
