package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/statuscmd"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/sandboxtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// runKubectl runs the real kubectl (not the plugin) against the sandbox.
func (ec *e2eCluster) runKubectl(ctx context.Context, args ...string) {
	ec.t.Helper()
	cmd := exec.CommandContext(ctx, ec.kubectl, args...)
	cmd.Env = append(os.Environ(), sandboxtest.KubectlEnv(ec.t, ec.s)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		ec.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// statusOf runs `kubectl ovnk status -o json` and returns node's row.
func (ec *e2eCluster) statusOf(ctx context.Context, node string) (statuscmd.NodeStatus, error) {
	r := ec.ovnk(ctx, nil, "status", "-o", "json")
	if r.err != nil {
		return statuscmd.NodeStatus{}, fmt.Errorf("kubectl ovnk status: %w\n%s", r.err, r.stderr)
	}
	var rep statuscmd.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		return statuscmd.NodeStatus{}, fmt.Errorf("status -o json: %w\n%s", err, r.stdout)
	}
	i := slices.IndexFunc(rep.Nodes, func(n statuscmd.NodeStatus) bool { return n.Node == node })
	if i < 0 {
		return statuscmd.NodeStatus{}, fmt.Errorf("status has no row for %s", node)
	}
	return rep.Nodes[i], nil
}

// TestBadNodeAnnotationThroughKubectl is issue #19's first item, as the operator did
// it: a node's k8s.ovn.org/l3-gateway-config is overwritten with garbage through the
// real kubectl. The node's agent runs without its node part, as an agent whose
// annotations something else publishes does (with it, the agent would rewrite the
// annotation it publishes at once). `kubectl ovnk status` must show the node not
// ready, naming the annotation, and its last error the value; the other zones keep
// the node's last good state, so a trace from another node to a pod on it is still
// delivered (through every zone, the broken node's included: its agent pod stays
// Ready, so the plugin reads its zone); and once the annotation is restored the node
// is ready again.
func TestBadNodeAnnotationThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n1, n2 := ec.nodes[0], ec.nodes[1]
	ec.create(ctx,
		namespace("bad-r", map[string]string{"tenant": "bad-r"}),
		layer3CUDN("bad-r", "bad-r", "10.73.0.0/16"),
		pod("bad-r", "a", n1.name), pod("bad-r", "b", n2.name),
	)
	ec.podIface(ctx, "bad-r", "a", "bad-r/bad-r")
	ec.podIface(ctx, "bad-r", "b", "bad-r/bad-r")
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_bad-r"))
	ec.rollOut(ctx, n2, "--node-dataplane=false")
	ec.must(ctx, "status", "--wait", "--timeout", "2m")

	delivered := func(when string) {
		t.Helper()
		res := ec.traceJSON(ctx, "bad-r/a", "bad-r/b")
		if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "bad-r/b" || v.Zone != n2.name {
			t.Fatalf("%s: verdict %+v, want delivered to bad-r/b in %s's zone", when, v, n2.name)
		}
	}
	delivered("before")

	var node corev1.Node
	if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Name: n2.name}, &node); err != nil {
		t.Fatal(err)
	}
	good := node.Annotations[cluster.AnnotationL3GatewayConfig]
	ec.runKubectl(ctx, "annotate", "--overwrite", "node", n2.name, cluster.AnnotationL3GatewayConfig+"=garbage")
	err := testenv.Eventually(ctx, 2*time.Minute, n2.name+" not ready, naming the annotation", func(ctx context.Context) error {
		s, err := ec.statusOf(ctx, n2.name)
		if err != nil {
			return err
		}
		if s.Ready || !strings.Contains(s.NotReadyReason, cluster.AnnotationL3GatewayConfig) || !strings.Contains(s.LastError, `"garbage"`) {
			return fmt.Errorf("ready %v (%s), last error %q", s.Ready, s.NotReadyReason, s.LastError)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, ec.agentLog(n2))
	}
	// The other zones, which saw the garbage too, kept node2's ports.
	log, err := ec.s.AgentLog(ctx, n1.name, 2000)
	if err != nil || !strings.Contains(log, "keeps its last good value") {
		t.Errorf("%s's agent did not say it keeps %s's last good value (%v):\n%s", n1.name, n2.name, err, log)
	}
	delivered("with the garbage")

	ec.runKubectl(ctx, "annotate", "--overwrite", "node", n2.name, cluster.AnnotationL3GatewayConfig+"="+good)
	ec.must(ctx, "status", "--wait", "--timeout", "2m")
	if s, err := ec.statusOf(ctx, n2.name); err != nil || s.LastError != "" {
		t.Errorf("restored: %+v, %v; want no last error", s, err)
	}
	delivered("after")
}
