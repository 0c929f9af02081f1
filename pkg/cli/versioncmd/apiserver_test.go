package versioncmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

func TestVersionAgainstRealAPIServer(t *testing.T) {
	k := testenv.SharedKube(t)
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &Options{
		Output:    "json",
		IOStreams: streams,
		Discovery: func() (discovery.DiscoveryInterface, error) {
			return discovery.NewDiscoveryClientForConfig(k.RESTConfig)
		},
		Detect: func(ctx context.Context) (clusterkind.Cluster, error) {
			return clusterkind.Detect(ctx, k.Client, manifests.DefaultNamespace)
		},
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if !strings.HasPrefix(info.Server, "v1.") {
		t.Errorf("server version = %q", info.Server)
	}
	want := []string{
		"clusternetworkconnects.v1", "clusteruserdefinednetworks.v1", "egressips.v1",
		"routeadvertisements.v1", "userdefinednetworks.v1",
	}
	if strings.Join(info.Resources, ",") != strings.Join(want, ",") {
		t.Errorf("served OVN resources = %v, want %v", info.Resources, want)
	}
	if info.Cluster == nil || info.Cluster.Kind != clusterkind.None {
		t.Errorf("cluster = %+v, want none found on a cluster without either DaemonSet", info.Cluster)
	}
}

// TestVersionNamesUpstream runs `version` through the command on a cluster with
// upstream's ovnkube-node DaemonSet: the text names it on one line, -o json has it as
// the cluster field, and --client leaves the field out.
func TestVersionNamesUpstream(t *testing.T) {
	k := testenv.SharedKube(t)
	t.Setenv("KUBECACHEDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := k.Namespace(t)
	ds, err := k.Client.AppsV1().DaemonSets(ns).Create(ctx, clusterkindtest.Upstream(ns, ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.Client.AppsV1().DaemonSets(ns).Delete(context.Background(), ds.Name, metav1.DeleteOptions{})
	})
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		f := clitest.NewFactory(k.Kubeconfig, clitest.Terminal{}, nil, &out, &errOut)
		f.Settings = &cmdutil.Settings{AgentNamespace: manifests.DefaultNamespace}
		if err := clitest.Execute(ctx, New(f), &out, &errOut, args...); err != nil || errOut.Len() > 0 {
			t.Fatalf("version %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	want := "Cluster: OVN-Kubernetes, interconnect, a zone per node (DaemonSet " + ns + "/ovnkube-node)\n"
	if out := run(); !strings.Contains(out, want) {
		t.Errorf("version does not print %q:\n%s", want, out)
	}
	var info Info
	if err := json.Unmarshal([]byte(run("-o", "json")), &info); err != nil {
		t.Fatal(err)
	}
	if c := info.Cluster; c == nil || c.Kind != clusterkind.Upstream || c.Namespace != ns || c.DaemonSet != "ovnkube-node" || !c.Interconnect {
		t.Errorf("-o json cluster = %+v, want upstream's interconnect DaemonSet %s/ovnkube-node", c, ns)
	}
	if out := run("--client", "-o", "json"); strings.Contains(out, `"cluster"`) {
		t.Errorf("--client reports the cluster:\n%s", out)
	}
}
