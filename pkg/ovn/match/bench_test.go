package match_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// policy is a typical three-term router policy match.
const policy = `inport == "rtos-node1" && ip4.src == 10.244.0.0/16 && ip4.dst == 10.96.0.10 /* service */`

// BenchmarkEval measures evaluating a parsed expression. "policy" is the typical
// router policy, matching (so every term is evaluated); "acl" an ACL that reads an
// address set and a port group; "rows" a trace's worth of distinct policies, most of
// which fail on their first term, reported per row.
func BenchmarkEval(b *testing.B) {
	p := with(tcp4, func(p *match.Packet) { p.InPort, p.IPDst = "rtos-node1", addr("10.96.0.10") })
	b.Run("policy", func(b *testing.B) {
		e := mustParse(b, policy)
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := e.Eval(&p, nil); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("acl", func(b *testing.B) {
		e := mustParse(b, `outport == @nodes && ip4.src == $v4 && tcp.dst == {80, 443}`)
		acl := with(p, func(p *match.Packet) { p.OutPort = "p2" })
		var sets match.Sets = evalSets // converted once: boxing the map pair allocates
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := e.Eval(&acl, sets); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		rows := make([]*match.Expr, 1000)
		for i := range rows {
			rows[i] = mustParse(b, fmt.Sprintf(`inport == "rtos-node%d" && ip4.src == 10.%d.0.0/16 && ip4.dst == 10.96.%d.%d`, i%50, i%256, i/256, i%256))
		}
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			for _, e := range rows {
				_, _ = e.Eval(&p, nil)
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	})
}

// BenchmarkParse measures parsing the typical policy and a long ACL match.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, expr string }{
		{"policy", policy},
		{"acl", `outport == @a14397542553826018935 && (ip4.src == {$a10148211500778908391, 10.244.0.0/16} || ip6.src == fd00::/8) ` +
			`&& tcp.dst == {80, 443, 8080, 8443} && ct.est && !ct.rpl && !ip4.mcast`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := match.Parse(bc.expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustParse(tb testing.TB, s string) *match.Expr {
	tb.Helper()
	e, err := match.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}
