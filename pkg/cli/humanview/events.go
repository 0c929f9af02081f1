package humanview

import (
	"context"
	"fmt"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// maxEvents is how many of the most recent events a description shows.
const maxEvents = 10

// RecentEvents lists the most recent events about the object with uid, oldest first.
// Events are found by the object's UID, so that an earlier object of the same name
// does not show; namespace is where to look, "" for everywhere (events about a
// cluster-scoped object may be in any namespace, usually "default"). The error is the
// client's, for the caller to explain.
func RecentEvents(ctx context.Context, cs kubernetes.Interface, namespace string, uid types.UID) ([]eventsv1.Event, error) {
	sel := fields.OneTermEqualSelector("regarding.uid", string(uid)).String()
	list, err := cs.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	return events, nil
}

// lastSeen is when the event last happened: its series' last observation, else when it
// was recorded (events written through the core/v1 API have only the deprecated time).
func lastSeen(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// timesSeen is how often the event happened.
func timesSeen(e eventsv1.Event) int {
	switch {
	case e.Series != nil:
		return int(e.Series.Count)
	case e.DeprecatedCount > 0:
		return int(e.DeprecatedCount)
	}
	return 1
}

// Events writes the events, warnings in the warning colour, with how often each
// happened after its age.
func (w *Description) Events(events []eventsv1.Event) {
	p := w.Palette
	t := p.Table(
		Column{Header: "TYPE"}, Column{Header: "REASON", MinWidth: 10}, Column{Header: "AGE"},
		Column{Header: "FROM", MinWidth: 8}, Column{Header: "MESSAGE", MinWidth: 20},
	)
	for _, e := range events {
		typ := Text(e.Type)
		if e.Type == "Warning" {
			typ.Style = &p.Warn
		}
		when := w.Age(metav1.NewTime(lastSeen(e)))
		if n := timesSeen(e); n > 1 {
			when += fmt.Sprintf(" (x%d)", n)
		}
		from := e.ReportingController
		if from == "" {
			from = e.DeprecatedSource.Component
		}
		t.Add(typ, Text(e.Reason), Text(when), Text(from), Text(e.Note))
	}
	w.Section("Events", "", t)
}
