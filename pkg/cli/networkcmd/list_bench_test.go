package networkcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

// BenchmarkNetworkList1000 times `kubectl ovnk network list` (the table, with ready
// nodes from every node's zone report) against the real API server holding 1,000
// networks and 20 nodes (DESIGN.md: ≤ 1 s). OVNK_BENCH_LIST_NETWORKS changes the count.
func BenchmarkNetworkList1000(b *testing.B) {
	count := 1000
	if v, err := strconv.Atoi(os.Getenv("OVNK_BENCH_LIST_NETWORKS")); err == nil && v > 0 {
		count = v
	}
	k := testenv.SharedKube(b)
	c := clitest.NewClient(b, k)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	report := map[string]string{}
	for i := range count {
		name := fmt.Sprintf("bench-%04d", i)
		cudn := &ovnkv1.ClusterUserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"bench": name}},
				Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
					Role:    ovnkv1.NetworkRoleSecondary,
					Subnets: ovnkv1.DualStackCIDRs{ovnkv1.CIDR(fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256))},
				}},
			},
		}
		if err := c.Create(ctx, cudn); err != nil {
			b.Fatalf("create %s: %v", name, err)
		}
		report[cluster.CUDNNetworkName(name)] = ""
	}
	annotations := clitest.ZoneStatus(b, report)
	for i := range 20 {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("bench-node-%02d", i),
			Annotations: annotations,
		}}
		if err := c.Create(ctx, node); err != nil {
			b.Fatal(err)
		}
	}
	var out bytes.Buffer
	list := func() {
		out.Reset()
		f := clitest.NewFactory(k.Kubeconfig, clitest.Terminal{Width: 200}, nil, &out, io.Discard)
		f.Settings = &cmdutil.Settings{}
		cmd := newNetworkCmd(f, time.Now)
		cmd.SetArgs([]string{"list"})
		cmd.SetOut(&out)
		if err := cmd.ExecuteContext(ctx); err != nil {
			b.Fatal(err)
		}
	}
	list()
	if rows := bytes.Count(out.Bytes(), []byte("\n")); rows < count {
		b.Fatalf("list printed %d lines for %d networks", rows, count)
	}
	b.ResetTimer()
	for b.Loop() {
		list()
	}
	b.ReportMetric(float64(count), "networks")
}
