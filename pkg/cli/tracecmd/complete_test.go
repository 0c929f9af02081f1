package tracecmd_test

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/tracecmd"
)

// TestCompletionOffersPods checks that SRC and DST complete to what trace accepts: the
// pods of the namespace -n names (or the kubeconfig's), node/NAME, and NAMESPACE/POD once
// a slash is typed; never a namespace's name, which is no endpoint.
func TestCompletionOffersPods(t *testing.T) {
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, _ func() time.Time) []*cobra.Command {
		return []*cobra.Command{tracecmd.New(f)}
	})
	h.Prefix = []string{"trace"}
	blue, green := h.Namespace("", nil), h.Namespace("", nil)
	pod := func(ns, name string) {
		h.Create(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
		})
	}
	pod(blue, "web")
	pod(blue, "db")
	pod(green, "api")
	h.Node("complete-node", nil)

	h.CheckCompletions(t, []clitest.Completion{
		{Args: []string{"-n", blue, ""}, Want: []string{"web", "db", "node/complete-node"}, Not: []string{"api", blue, green, blue + "/", green + "/"}},
		{Args: []string{"--namespace", green, ""}, Want: []string{"api"}, Not: []string{"web", blue, green}},
		{Args: []string{"-n", blue, "w"}, Want: []string{"web"}, Not: []string{"db"}},
		{Args: []string{"-n", blue, "web", ""}, Want: []string{"db", "web"}, Not: []string{blue, green}},
		{Args: []string{green + "/"}, Want: []string{green + "/api"}, Not: []string{green + "/web", "node/complete-node"}},
		{Args: []string{"node/"}, Want: []string{"node/complete-node"}, Not: []string{"web"}},
		{Args: []string{""}, Not: []string{blue, green, blue + "/", green + "/"}},
		{Args: []string{"-n", blue, "web", "db", ""}, Not: []string{"web", "db", "node/complete-node"}},
	})
}
