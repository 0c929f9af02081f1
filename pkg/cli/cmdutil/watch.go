package cmdutil

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rewatchPause is how long a watch the API server closed at once waits before it is
// started again, so that a server refusing to hold watches open is not hammered.
const rewatchPause = time.Second

// Watched is one kind of object a watch follows.
type Watched struct {
	// List is an empty list of the kind, e.g. &ovnkv1.UserDefinedNetworkList{}.
	List client.ObjectList
	// ResourceVersion is the version of the list the watch follows on from: every
	// change after it is seen, none before.
	ResourceVersion string
	// Options are the list's options (namespace, label selector), which the watch
	// keeps.
	Options []client.ListOption
}

// Watch calls changed with each object of the kinds that is added, modified or
// deleted after its list, one at a time in the order they arrive, until ctx ends or
// Ctrl-C (both end it cleanly: nil), or changed or a watch fails. changed gets a
// context that Ctrl-C ends, so that what it reads stops too. A watch the API server
// closes, as it does after a while, starts again where it stopped.
func (c *Connection) Watch(ctx context.Context, kinds []Watched, changed func(context.Context, watch.EventType, client.Object) error) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: Scheme})
	if err != nil {
		return c.Explain(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	events := make(chan watch.Event)
	failed := make(chan error, len(kinds))
	for _, k := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := follow(ctx, wc, k, events); err != nil {
				failed <- fmt.Errorf("watch %s: %w", kindName(k.List), c.Explain(err))
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-failed:
			return err
		case e := <-events:
			if err := changed(ctx, e.Type, e.Object.(client.Object)); err != nil {
				if ctx.Err() != nil {
					return nil // Ctrl-C while changed was reading
				}
				return err
			}
		}
	}
}

// follow sends the changes of one kind to events until ctx ends or the watch fails.
func follow(ctx context.Context, wc client.WithWatch, k Watched, events chan<- watch.Event) error {
	version := k.ResourceVersion
	for {
		started := time.Now()
		list := k.List.DeepCopyObject().(client.ObjectList)
		opts := append([]client.ListOption{&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: version, AllowWatchBookmarks: true}}}, k.Options...)
		w, err := wc.Watch(ctx, list, opts...)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		seen := version
		version, err = forward(ctx, w, version, events)
		w.Stop()
		if err != nil || ctx.Err() != nil {
			return err
		}
		if version == seen && time.Since(started) < rewatchPause {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(rewatchPause):
			}
		}
	}
}

// forward sends w's changes to events until w ends, and returns the last version seen.
func forward(ctx context.Context, w watch.Interface, version string, events chan<- watch.Event) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return version, nil
		case e, ok := <-w.ResultChan():
			if !ok {
				return version, nil
			}
			switch e.Type {
			case watch.Error:
				err := apierrors.FromObject(e.Object)
				if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
					return version, fmt.Errorf("the API server no longer holds the changes since version %s (%w): run the command again", version, err)
				}
				return version, err
			case watch.Bookmark, watch.Added, watch.Modified, watch.Deleted:
				obj, err := meta.Accessor(e.Object)
				if err != nil {
					return version, fmt.Errorf("%s event of %T: %w", e.Type, e.Object, err)
				}
				version = obj.GetResourceVersion()
				if e.Type == watch.Bookmark {
					continue
				}
				select {
				case events <- e:
				case <-ctx.Done():
					return version, nil
				}
			}
		}
	}
}

// kindName is the plural kind of list, for errors: "UserDefinedNetworks".
func kindName(list client.ObjectList) string {
	gvks, _, err := Scheme.ObjectKinds(list)
	if err != nil {
		return fmt.Sprintf("%T", list)
	}
	return strings.TrimSuffix(gvks[0].Kind, "List") + "s"
}
