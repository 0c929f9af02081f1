package alloc

import (
	"strconv"
	"testing"
)

// idStep is one call on an IDAllocator and what it should return.
type idStep struct {
	op      string // reserve, allocate, release
	owner   string
	id      int // reserve: the id; allocate: the wanted id
	wantErr string
}

func runIDSteps(t *testing.T, a *IDAllocator, steps []idStep) {
	t.Helper()
	for i, s := range steps {
		switch s.op {
		case "reserve":
			checkErr(t, a.Reserve(s.owner, s.id), s.wantErr)
		case "allocate":
			got, err := a.Allocate(s.owner)
			checkErr(t, err, s.wantErr)
			if err == nil && got != s.id {
				t.Fatalf("step %d: Allocate(%q) = %d, want %d", i, s.owner, got, s.id)
			}
		case "release":
			a.Release(s.owner)
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}
	}
}

func TestIDAllocator(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last int
		steps       []idStep
	}{{
		name: "node ids start at 2", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "allocate", owner: "node-a", id: 2},
			{op: "allocate", owner: "node-b", id: 3},
			{op: "allocate", owner: "node-a", id: 2}, // idempotent
		},
	}, {
		name: "network ids start at 1", first: MinNetworkID, last: MaxNetworkID,
		steps: []idStep{
			{op: "allocate", owner: "cluster_udn_blue", id: 1},
			{op: "reserve", owner: "ns1_red", id: 4095},
			{op: "reserve", owner: "default", id: 0, wantErr: `network id 0 of "default" is outside 1–4095|clear the persisted id`},
			{op: "reserve", owner: "ns1_green", id: 4096, wantErr: "network id 4096"},
		},
	}, {
		name: "reserved ids are skipped", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "reserve", owner: "node-b", id: 3},
			{op: "reserve", owner: "node-c", id: 5},
			{op: "allocate", owner: "node-a", id: 2},
			{op: "allocate", owner: "node-d", id: 4},
			{op: "allocate", owner: "node-e", id: 6},
		},
	}, {
		name: "reserve is idempotent and names both owners on conflict", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "reserve", owner: "node-a", id: 7},
			{op: "reserve", owner: "node-a", id: 7},
			{op: "reserve", owner: "node-a", id: 8, wantErr: `"node-a" already holds node id 7, cannot also reserve 8; release it first`},
			{op: "reserve", owner: "node-b", id: 7, wantErr: `node id 7 is taken by "node-a", cannot reserve it for "node-b"`},
			{op: "allocate", owner: "node-a", id: 7},
		},
	}, {
		name: "ids 0 and 1 and negative ids are never nodes'", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "reserve", owner: "node-a", id: 0, wantErr: "node id 0 of \"node-a\" is outside 2–5000"},
			{op: "reserve", owner: "node-a", id: 1, wantErr: "node id 1"},
			{op: "reserve", owner: "node-a", id: -1, wantErr: "node id -1"},
			{op: "reserve", owner: "node-a", id: MaxNodeID + 1, wantErr: "node id 5001"},
			{op: "allocate", owner: "node-a", id: 2}, // the failures changed nothing
		},
	}, {
		name: "release hands the lowest id out again", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "allocate", owner: "a", id: 2},
			{op: "allocate", owner: "b", id: 3},
			{op: "allocate", owner: "c", id: 4},
			{op: "release", owner: "b"},
			{op: "release", owner: "a"},
			{op: "release", owner: "nobody"},
			{op: "allocate", owner: "d", id: 2},
			{op: "allocate", owner: "e", id: 3},
			{op: "allocate", owner: "f", id: 5},
			{op: "reserve", owner: "b", id: 3, wantErr: `taken by "e"`},
		},
	}, {
		name: "exhaustion names the range", first: 2, last: 4,
		steps: []idStep{
			{op: "allocate", owner: "a", id: 2},
			{op: "allocate", owner: "b", id: 3},
			{op: "allocate", owner: "c", id: 4},
			{op: "allocate", owner: "d", wantErr: `no free node id for "d": all 3 ids of 2–4 are in use; release the ids of deleted owners`},
			{op: "release", owner: "b"},
			{op: "allocate", owner: "d", id: 3},
		},
	}, {
		name: "a single id", first: 7, last: 7,
		steps: []idStep{
			{op: "allocate", owner: "a", id: 7},
			{op: "allocate", owner: "b", wantErr: "all 1 ids of 7–7"},
		},
	}, {
		name: "empty owner", first: MinNodeID, last: MaxNodeID,
		steps: []idStep{
			{op: "reserve", owner: "", id: 2, wantErr: "owner name is empty"},
			{op: "allocate", owner: "", wantErr: "owner name is empty"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			what := "node"
			if tc.first == MinNetworkID {
				what = "network"
			}
			runIDSteps(t, NewIDAllocator(what, tc.first, tc.last), tc.steps)
		})
	}
}

func TestIDAllocatorGet(t *testing.T) {
	a := NewIDAllocator("node", MinNodeID, MaxNodeID)
	if _, ok := a.Get("node-a"); ok {
		t.Fatal("Get of an unknown owner reports an id")
	}
	if err := a.Reserve("node-a", 42); err != nil {
		t.Fatal(err)
	}
	if id, ok := a.Get("node-a"); !ok || id != 42 {
		t.Fatalf("Get = %d, %v; want 42, true", id, ok)
	}
	a.Release("node-a")
	if _, ok := a.Get("node-a"); ok {
		t.Fatal("Get after Release reports an id")
	}
}

func TestNewIDAllocatorPanicsOnBadRange(t *testing.T) {
	for _, r := range [][2]int{{5, 4}, {-1, 10}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewIDAllocator(%d, %d) did not panic", r[0], r[1])
				}
			}()
			NewIDAllocator("node", r[0], r[1])
		}()
	}
}

func TestIDAllocatorNetworkExhaustion(t *testing.T) {
	a := NewIDAllocator("network", MinNetworkID, MaxNetworkID)
	for want := MinNetworkID; want <= MaxNetworkID; want++ {
		got, err := a.Allocate("net" + strconv.Itoa(want))
		if err != nil || got != want {
			t.Fatalf("Allocate #%d = %d, %v", want, got, err)
		}
	}
	_, err := a.Allocate("one-too-many")
	checkErr(t, err, "all 4095 ids of 1–4095 are in use")
}
