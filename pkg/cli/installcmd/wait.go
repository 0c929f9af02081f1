package installcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// waitCRDs polls the CRDs until done says each is where it should be, showing
// "<what>: n/total" as progress whenever it changes, and fails at the timeout naming
// those that are not.
func waitCRDs(ctx context.Context, c client.Client, crds []*unstructured.Unstructured, timeout time.Duration, p *cmdutil.ProgressLine,
	what string, done func(crd *unstructured.Unstructured, getErr error) (bool, error)) error {
	defer p.Finish()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	shown := ""
	for {
		var pending []string
		for _, crd := range crds {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(crd.GroupVersionKind())
			ok, err := done(got, c.Get(ctx, client.ObjectKeyFromObject(crd), got)) // got is filled first
			if err != nil {
				return fmt.Errorf("get %s: %w", displayName(crd), err)
			}
			if !ok {
				pending = append(pending, crd.GetName())
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if line := fmt.Sprintf("%s: %d/%d", what, len(crds)-len(pending), len(crds)); line != shown {
			p.Show(line)
			shown = line
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("timed out after %s; %s: still waiting for %s", timeout, what, strings.Join(pending, ", "))
		case <-ticker.C:
		}
	}
}

// waitEstablished waits until the API server serves every CRD (condition Established).
func waitEstablished(ctx context.Context, c client.Client, crds []*unstructured.Unstructured, timeout time.Duration, p *cmdutil.ProgressLine) error {
	return waitCRDs(ctx, c, crds, timeout, p, "Waiting for the CRDs to be established", func(crd *unstructured.Unstructured, err error) (bool, error) {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return established(crd), err
	})
}

// waitGone waits until every CRD is deleted, which the API server does after deleting
// all of its objects.
func waitGone(ctx context.Context, c client.Client, crds []*unstructured.Unstructured, timeout time.Duration, p *cmdutil.ProgressLine) error {
	return waitCRDs(ctx, c, crds, timeout, p, "Waiting for the CRDs and their objects to be deleted", func(_ *unstructured.Unstructured, err error) (bool, error) {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// established reports whether a CRD's status has condition Established True.
func established(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
