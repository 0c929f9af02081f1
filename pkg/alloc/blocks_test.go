package alloc

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestNewBlockAllocatorValidates(t *testing.T) {
	v4, v6 := BlockSpace{pfx("192.168.0.0/16"), 24}, BlockSpace{pfx("fd00:10::/112"), 120}
	for _, tc := range []struct {
		name     string
		spaces   []BlockSpace
		wantSize uint64
		wantErr  string
	}{
		{name: "IPv4", spaces: []BlockSpace{v4}, wantSize: 256},
		{name: "dual-stack", spaces: []BlockSpace{v4, v6}, wantSize: 256},
		{name: "IPv6 first", spaces: []BlockSpace{v6, v4}, wantSize: 256},
		{name: "the smaller space counts", spaces: []BlockSpace{v4, {pfx("fd00:10::/104"), 120}}, wantSize: 256},
		{name: "huge IPv6 space", spaces: []BlockSpace{{pfx("fd00::/8"), 120}}, wantSize: 1 << 63},
		{name: "no space", wantErr: "0 address spaces given for blocks; give one, or one per IP family"},
		{name: "three spaces", spaces: []BlockSpace{v4, v6, v4}, wantErr: "3 address spaces given"},
		{name: "host bits", spaces: []BlockSpace{{pfx("192.168.0.1/16"), 24}}, wantErr: "block space 192.168.0.1/16 is not a network address"},
		{name: "zero prefix", spaces: []BlockSpace{{}}, wantErr: "is not a network address in CIDR notation"},
		{name: "block as large as the space", spaces: []BlockSpace{{pfx("192.168.0.0/24"), 24}},
			wantErr: "blocks of /24 do not fit 192.168.0.0/24; use a block length from /25 to /32"},
		{name: "block too long", spaces: []BlockSpace{{pfx("192.168.0.0/24"), 33}}, wantErr: "blocks of /33 do not fit"},
		{name: "one family twice", spaces: []BlockSpace{v4, {pfx("10.0.0.0/8"), 24}},
			wantErr: "block spaces 192.168.0.0/16 and 10.0.0.0/8 are of one IP family; give at most one per family"},
		{name: "different host bits", spaces: []BlockSpace{v4, {pfx("fd00:10::/112"), 121}},
			wantErr: "blocks of /24 in 192.168.0.0/16 have 8 host bits but blocks of /121 in fd00:10::/112 have 7; give both families blocks of as many addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewBlockAllocator(tc.spaces...)
			checkErr(t, err, tc.wantErr)
			if err == nil && a.Size() != tc.wantSize {
				t.Fatalf("Size() = %d, want %d", a.Size(), tc.wantSize)
			}
		})
	}
}

// blockStep is one call on a BlockAllocator and what it should return.
type blockStep struct {
	op      string // reserve, allocate, release
	owner   string
	blocks  string // reserve: the blocks, space-separated; allocate: the wanted blocks
	wantErr string
}

func TestBlockAllocator(t *testing.T) {
	dual := []BlockSpace{{pfx("192.168.0.0/22"), 24}, {pfx("fd00:10::/118"), 120}}
	for _, tc := range []struct {
		name   string
		spaces []BlockSpace
		steps  []blockStep
	}{{
		name:   "lowest free first, the same index in both families",
		spaces: dual,
		steps: []blockStep{
			{op: "allocate", owner: "a", blocks: "192.168.0.0/24 fd00:10::/120"},
			{op: "allocate", owner: "b", blocks: "192.168.1.0/24 fd00:10::100/120"},
			{op: "allocate", owner: "a", blocks: "192.168.0.0/24 fd00:10::/120"}, // what it holds
			{op: "release", owner: "a"},
			{op: "allocate", owner: "c", blocks: "192.168.0.0/24 fd00:10::/120"},
			{op: "allocate", owner: "d", blocks: "192.168.2.0/24 fd00:10::200/120"},
			{op: "allocate", owner: "e", blocks: "192.168.3.0/24 fd00:10::300/120"},
			{op: "allocate", owner: "f", wantErr: `no free block for "f": 4 blocks, all in use; use larger spaces or longer blocks`},
			{op: "release", owner: "nobody"},
		},
	}, {
		name:   "resume: persisted blocks first, newcomers get the gaps",
		spaces: dual,
		steps: []blockStep{
			{op: "reserve", owner: "b", blocks: "192.168.2.0/24 fd00:10::200/120"},
			{op: "reserve", owner: "a", blocks: "192.168.0.0/24"}, // one family: the other follows
			{op: "allocate", owner: "a", blocks: "192.168.0.0/24 fd00:10::/120"},
			{op: "reserve", owner: "a", blocks: "192.168.0.0/24 fd00:10::/120"}, // again: nothing changes
			{op: "allocate", owner: "new", blocks: "192.168.1.0/24 fd00:10::100/120"},
			{op: "allocate", owner: "newer", blocks: "192.168.3.0/24 fd00:10::300/120"},
		},
	}, {
		name:   "bad reservations change nothing",
		spaces: dual,
		steps: []blockStep{
			{op: "reserve", owner: "a", blocks: "192.168.1.0/24"},
			{op: "reserve", owner: "b", blocks: "fd00:10::100/120", wantErr: `blocks 192.168.1.0/24 and fd00:10::100/120 are taken by "a", cannot reserve them for "b"`},
			{op: "reserve", owner: "a", blocks: "192.168.2.0/24", wantErr: `"a" already holds blocks 192.168.1.0/24 and fd00:10::100/120, cannot also reserve 192.168.2.0/24; release it first`},
			{op: "reserve", owner: "b", blocks: "10.0.0.0/24", wantErr: `block 10.0.0.0/24 of "b" is outside the /24 blocks of 192.168.0.0/22 and the /120 blocks of fd00:10::/118`},
			{op: "reserve", owner: "b", blocks: "192.168.2.0/25", wantErr: `block 192.168.2.0/25 of "b" is a /25, but 192.168.0.0/22 hands out /24 blocks`},
			{op: "reserve", owner: "b", blocks: "192.168.2.1/24", wantErr: `block 192.168.2.1/24 of "b" is not aligned to /24; use 192.168.2.0/24`},
			{op: "reserve", owner: "b", blocks: "192.168.2.0/24 fd00:10::300/120", wantErr: `blocks 192.168.2.0/24 and fd00:10::300/120 of "b" are not of the same index in their spaces`},
			{op: "reserve", owner: "", blocks: "192.168.2.0/24", wantErr: "the owner name is empty"},
			{op: "reserve", owner: "b", wantErr: `reserve blocks for "b": no block given`},
			{op: "allocate", owner: "", wantErr: "allocate blocks: the owner name is empty"},
			{op: "allocate", owner: "b", blocks: "192.168.0.0/24 fd00:10::/120"},
		},
	}, {
		name:   "blocks past the smaller space are never handed out",
		spaces: []BlockSpace{{pfx("192.168.0.0/23"), 24}, {pfx("fd00:10::/112"), 120}},
		steps: []blockStep{
			{op: "reserve", owner: "a", blocks: "fd00:10::200/120", wantErr: `block fd00:10::200/120 of "a" is beyond the first 2 blocks of fd00:10::/112, which are all that are handed out`},
			{op: "allocate", owner: "a", blocks: "192.168.0.0/24 fd00:10::/120"},
			{op: "allocate", owner: "b", blocks: "192.168.1.0/24 fd00:10::100/120"},
			{op: "allocate", owner: "c", wantErr: "2 blocks, all in use"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewBlockAllocator(tc.spaces...)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.steps {
				var got []netip.Prefix
				switch st.op {
				case "reserve":
					err = a.Reserve(st.owner, prefixes(strings.Fields(st.blocks)...))
				case "allocate":
					got, err = a.Allocate(st.owner)
				case "release":
					a.Release(st.owner)
					err = nil
				}
				if st.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), st.wantErr) {
						t.Fatalf("step %d %s %s: error %v, want one containing %q", i, st.op, st.owner, err, st.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d %s %s: %v", i, st.op, st.owner, err)
				}
				if st.op == "allocate" && !slices.Equal(got, prefixes(strings.Fields(st.blocks)...)) {
					t.Fatalf("step %d: Allocate(%s) = %v, want %s", i, st.owner, got, st.blocks)
				}
			}
		})
	}
}

// TestBlockAllocatorOwners: Get and Owners tell exactly who holds which blocks.
func TestBlockAllocatorOwners(t *testing.T) {
	a, err := NewBlockAllocator(BlockSpace{pfx("192.168.0.0/16"), 24})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"c", "a", "b"} {
		if _, err := a.Allocate(o); err != nil {
			t.Fatal(err)
		}
	}
	a.Release("b")
	if got, ok := a.Get("c"); !ok || !slices.Equal(got, prefixes("192.168.0.0/24")) {
		t.Fatalf("Get(c) = %v, %v; want [192.168.0.0/24], true (the first allocated)", got, ok)
	}
	if got, ok := a.Get("b"); ok {
		t.Fatalf("Get(b) = %v after its release", got)
	}
	if got := slices.Sorted(slices.Values(a.Owners())); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("Owners() = %v, want [a c]", got)
	}
}
