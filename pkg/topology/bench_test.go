package topology

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// scaleState is a cluster of nodes × networks: half Layer3, half Layer2, dual-stack,
// every network reusing the same subnets (user-defined networks are isolated, so they
// may), with one pod per node on each Layer2 network.
func scaleState(nodes, networks int) *cluster.State {
	st := &cluster.State{Config: baseConfig()}
	for i := 0; i < nodes; i++ {
		n := kindNode(fmt.Sprintf("node%04d", i), i+2, i%250+2)
		st.Nodes = append(st.Nodes, n)
	}
	for j := 0; j < networks; j++ {
		net := &cluster.Network{
			Name:           fmt.Sprintf("cluster_udn_net%04d", j),
			Role:           cluster.Primary,
			MTU:            1400,
			Transport:      cluster.Geneve,
			JoinSubnets:    prefixes("100.65.0.0/16", "fd99::/64"),
			TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
			ID:             j + 1,
			Owner:          cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: fmt.Sprintf("net%04d", j)},
		}
		if j%2 == 0 {
			net.Topology = cluster.Layer3
			net.Subnets = []cluster.Subnet{{CIDR: pfx("10.128.0.0/14"), HostSubnet: 24}, {CIDR: pfx("fd10::/48"), HostSubnet: 64}}
			net.TunnelKeys = []int{16711683 + j + 1}
			for i, node := range st.Nodes {
				node.Subnets[net.Name] = []netip.Prefix{
					netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(128 + i/256), byte(i % 256), 0}), 24),
					netip.MustParsePrefix(fmt.Sprintf("fd10:0:0:%x::/64", i)),
				}
			}
		} else {
			net.Topology = cluster.Layer2
			net.Subnets = []cluster.Subnet{{CIDR: pfx("10.200.0.0/16")}, {CIDR: pfx("fd20::/60")}}
			net.TunnelKeys = []int{16711683 + j + 1, 16715779 + j}
			for i, node := range st.Nodes {
				st.Pods = append(st.Pods, &cluster.Pod{
					Namespace: fmt.Sprintf("ns%04d", j), Name: fmt.Sprintf("pod%04d", i), Node: node.Name,
					Networks: map[string]cluster.PodInterface{net.Name: {
						IPs:      []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 200, byte(i / 250), byte(i%250 + 3)}), 16)},
						MAC:      fmt.Sprintf("0a:58:0a:c8:%02x:%02x", i/250, i%250+3),
						TunnelID: i + 3,
					}},
				})
			}
		}
		st.Networks = append(st.Networks, net)
	}
	return st
}

func benchmarkCompile(b *testing.B, nodes, networks int) {
	st := scaleState(nodes, networks)
	b.ReportAllocs()
	b.ResetTimer()
	var rowsOut int
	for i := 0; i < b.N; i++ {
		res, err := Compile(st, st.Nodes[0].Name)
		if err != nil || len(res.NotCompiled) > 0 {
			b.Fatalf("%v %v", err, res.NotCompiled)
		}
		rowsOut = res.Rows.Len()
	}
	b.StopTimer()
	b.ReportMetric(float64(rowsOut), "rows")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MiB")
}

// BenchmarkCompileZone is one zone of a 500-network × 500-node cluster.
func BenchmarkCompileZone(b *testing.B) { benchmarkCompile(b, 500, 500) }

// BenchmarkCompileZoneNodeAdded is the same zone after a 501st node joins: what the
// agent recompiles when a node is added.
func BenchmarkCompileZoneNodeAdded(b *testing.B) { benchmarkCompile(b, 501, 500) }
