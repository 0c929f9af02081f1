package topology

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// TestGoldenScaleInOrder holds a zone of a small topologytest.Scale cluster, the shape
// the compile benchmarks time, to a golden file row by row in the order Compile emits
// them, with every reference list in its order: the other goldens print sorted tables,
// so only this one notices a change of order, which the compile's speed-ups must not make.
func TestGoldenScaleInOrder(t *testing.T) {
	st := topologytest.Scale(3, 4)
	res, err := Compile(st, st.Nodes[1].Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("networks not compiled: %v", res.NotCompiled)
	}
	var b strings.Builder
	for _, table := range rows.Tables {
		for _, m := range table.Models(res.Rows) {
			row, err := json.Marshal(m) // maps come out with sorted keys
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(table.Name() + " " + string(row) + "\n")
		}
	}
	for _, w := range res.Warnings {
		b.WriteString("warning " + w + "\n")
	}
	goldenText(t, "scale-3x4-node0001.inorder", b.String())
}
