package sandbox

import (
	"testing"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
)

// TestUpstreamDaemonSetReadsAsUpstreams checks the DaemonSet against what the plugin
// knows of upstream's: its NB container is found by name, and the socket it serves is
// the one its command names inside the container (the relay's source, the node's
// socket, comes later on the command line and must not be taken for it).
func TestUpstreamDaemonSetReadsAsUpstreams(t *testing.T) {
	ds := upstreamDaemonSet()
	if ds.Name != clusterkind.UpstreamDaemonSet || ds.Namespace != clusterkind.UpstreamNamespaces[0] {
		t.Errorf("DaemonSet %s/%s, want %s/%s", ds.Namespace, ds.Name, clusterkind.UpstreamNamespaces[0], clusterkind.UpstreamDaemonSet)
	}
	spec := &ds.Spec.Template.Spec
	if !spec.HostNetwork {
		t.Error("not in the host's network, as upstream's is")
	}
	c := clusterkind.NBContainer(spec)
	if c == nil || c.Name != upstreamNBContainer {
		t.Fatalf("NB container %+v, want %s", c, upstreamNBContainer)
	}
	if got := clusterkind.NBSocket(c); got != clusterkind.DefaultNBSocket {
		t.Errorf("NB socket %s, want %s", got, clusterkind.DefaultNBSocket)
	}
}
