package networkcmd

import (
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestCreatePrimaryWarnings checks that create warns, and still creates, when a primary
// network serves a namespace without the label k8s.ovn.org/primary-user-defined-network
// or one of the cluster's own namespaces, and stays quiet otherwise.
func TestCreatePrimaryWarnings(t *testing.T) {
	h := newHarness(t)
	labelled := h.Namespace("", map[string]string{cluster.LabelPrimaryUDN: ""})
	plain := h.Namespace("", nil)
	lacksLabel := "lacks the label " + cluster.LabelPrimaryUDN
	for _, tc := range []struct {
		name string
		args []string
		want string // a part of the one warning; "" none
	}{
		{"a primary network in a labelled namespace", []string{"create", "n1", "-n", labelled, "--subnet", "10.70.0.0/16"}, ""},
		{"a primary network in a namespace without the label", []string{"create", "n1", "-n", plain, "--subnet", "10.70.0.0/16"},
			"Warning: namespace " + plain + " " + lacksLabel + ": pods already running there keep the default network"},
		{"a secondary network needs no label", []string{"create", "n1", "-n", plain, "--subnet", "10.70.0.0/16", "--role", "secondary"}, ""},
		{"a primary network in kube-system", []string{"create", "n1", "-n", "kube-system", "--subnet", "10.70.0.0/16"},
			"Warning: namespace kube-system runs the cluster's own pods, and every pod created there from now on gets this network as its primary network"},
		{"a primary cluster network serving default", []string{"create", "n1", "--cluster", "--namespaces", "default," + labelled, "--subnet", "10.70.0.0/16"},
			"Warning: namespace default runs the cluster's own pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.T = t
			out, stderr, err := h.Run(append(tc.args, "--dry-run=server")...)
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr)
			}
			if !strings.HasSuffix(out, "created (server dry run)\n") {
				t.Errorf("stdout %q: the network was not accepted", out)
			}
			switch {
			case tc.want == "" && stderr != "":
				t.Errorf("stderr %q, want no warning", stderr)
			case tc.want != "" && !strings.Contains(stderr, tc.want):
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
		})
	}
}
