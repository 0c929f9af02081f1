package alloc

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

func TestTunnelKeyConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"BaseTransitSwitchTunnelKey", BaseTransitSwitchTunnelKey, 16711683},
		{"MaxTunnelKey", MaxTunnelKey, 16777215},
		{"FirstAllocatedTunnelKey", FirstAllocatedTunnelKey, 16715779},
		{"TunnelKeyPoolSize", TunnelKeyPoolSize, 61437},
		// OVN's global keys (ovn-util.h: OVN_MIN_DP_KEY_GLOBAL) start two below ours.
		{"OVN_MIN_DP_KEY_GLOBAL", MaxTunnelKey - (1<<16 - 1) + 1, BaseTransitSwitchTunnelKey - 2},
		{"MaxNetworkID", MaxNetworkID, 4095},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestTransitSwitchTunnelKey(t *testing.T) {
	for _, tc := range []struct {
		networkID int
		want      int
		wantErr   string
	}{
		{networkID: 0, want: 16711683}, // the default network
		{networkID: 1, want: 16711684},
		{networkID: 4095, want: 16715778},
		{networkID: 4096, wantErr: "network id 4096 is outside 0–4095, the ids with a transit switch tunnel key"},
		{networkID: -1, wantErr: "network id -1 is outside 0–4095"},
	} {
		t.Run(strconv.Itoa(tc.networkID), func(t *testing.T) {
			got, err := TransitSwitchTunnelKey(tc.networkID)
			checkErr(t, err, tc.wantErr)
			if err == nil && got != tc.want {
				t.Fatalf("TransitSwitchTunnelKey(%d) = %d, want %d", tc.networkID, got, tc.want)
			}
		})
	}
}

// keyStep is one call on a TunnelKeyAllocator and what it should return.
type keyStep struct {
	op      string // reserve, allocate, release
	owner   string
	n       int   // allocate: how many
	keys    []int // reserve: the keys; allocate: the wanted keys
	wantErr string
}

const k0 = FirstAllocatedTunnelKey

func TestTunnelKeyAllocator(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []keyStep
	}{{
		name: "lowest first, idempotent, grows",
		steps: []keyStep{
			{op: "allocate", owner: "cluster_udn_l2a", n: 1, keys: []int{k0}},
			{op: "allocate", owner: "cnc/blue", n: 1, keys: []int{k0 + 1}},
			{op: "allocate", owner: "cluster_udn_l2a", n: 1, keys: []int{k0}},
			{op: "allocate", owner: "cluster_udn_l2a", n: 2, keys: []int{k0, k0 + 2}},
			{op: "allocate", owner: "cluster_udn_l2a", n: 1, wantErr: `"cluster_udn_l2a" already holds 2 tunnel keys [16715779 16715781], more than the 1 asked for; release it first`},
			{op: "allocate", owner: "x", n: 0, wantErr: `"x" asks for 0 tunnel keys; ask for 1 or more`},
			{op: "allocate", owner: "", n: 1, wantErr: "owner name is empty"},
		},
	}, {
		name: "legacy keys are accepted without being recorded",
		steps: []keyStep{
			{op: "reserve", owner: "ns1_l2", keys: []int{BaseTransitSwitchTunnelKey + 7, k0 + 5}},
			{op: "reserve", owner: "ns1_l3", keys: []int{BaseTransitSwitchTunnelKey + 8}},
			{op: "reserve", owner: "ns1_other", keys: []int{BaseTransitSwitchTunnelKey + 7}}, // not checked: derived
			{op: "allocate", owner: "ns1_l2", n: 1, keys: []int{k0 + 5}},
			{op: "allocate", owner: "new", n: 1, keys: []int{k0}},
			{op: "allocate", owner: "ns1_l3", n: 1, keys: []int{k0 + 1}},
		},
	}, {
		name: "reserve is idempotent and names both owners on conflict",
		steps: []keyStep{
			{op: "reserve", owner: "a", keys: []int{BaseTransitSwitchTunnelKey + 1, k0 + 9}},
			{op: "reserve", owner: "a", keys: []int{BaseTransitSwitchTunnelKey + 1, k0 + 9}},
			{op: "reserve", owner: "a", keys: []int{k0 + 9}},
			{op: "reserve", owner: "a", keys: []int{k0 + 10}, wantErr: `"a" already holds tunnel keys [16715788], cannot also reserve [16715789]; release it first`},
			{op: "reserve", owner: "a", keys: []int{k0 + 9, k0 + 10}, wantErr: "already holds"},
			{op: "reserve", owner: "b", keys: []int{k0 + 10, k0 + 9}, wantErr: `tunnel key 16715788 is taken by "a", cannot reserve it for "b"`},
			{op: "allocate", owner: "c", n: 1, keys: []int{k0}}, // b's failed reserve took nothing
			{op: "allocate", owner: "d", n: 2, keys: []int{k0 + 1, k0 + 2}},
		},
	}, {
		name: "reserve refuses keys outside both ranges and repeated keys",
		steps: []keyStep{
			{op: "reserve", owner: "a", keys: []int{5}, wantErr: `tunnel key 5 of "a" is outside 16711683–16715778 (derived) and 16715779–16777215 (allocated); clear the persisted keys`},
			{op: "reserve", owner: "a", keys: []int{BaseTransitSwitchTunnelKey - 1}, wantErr: "tunnel key 16711682"},
			{op: "reserve", owner: "a", keys: []int{MaxTunnelKey + 1}, wantErr: "tunnel key 16777216"},
			{op: "reserve", owner: "a", keys: []int{k0 + 3, k0 + 3}, wantErr: "tunnel key 16715782 appears twice"},
			{op: "reserve", owner: "", keys: []int{k0}, wantErr: "owner name is empty"},
			{op: "reserve", owner: "a", keys: []int{MaxTunnelKey}},
			{op: "allocate", owner: "b", n: 1, keys: []int{k0}},
		},
	}, {
		name: "release hands the lowest keys out again",
		steps: []keyStep{
			{op: "allocate", owner: "a", n: 2, keys: []int{k0, k0 + 1}},
			{op: "allocate", owner: "b", n: 1, keys: []int{k0 + 2}},
			{op: "release", owner: "a"},
			{op: "release", owner: "nobody"},
			{op: "allocate", owner: "c", n: 1, keys: []int{k0}},
			{op: "allocate", owner: "b", n: 3, keys: []int{k0 + 2, k0 + 1, k0 + 3}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			runKeySteps(t, NewTunnelKeyAllocator(), tc.steps)
		})
	}
}

func runKeySteps(t *testing.T, a *TunnelKeyAllocator, steps []keyStep) {
	t.Helper()
	for i, s := range steps {
		switch s.op {
		case "reserve":
			checkErr(t, a.Reserve(s.owner, s.keys), s.wantErr)
		case "allocate":
			got, err := a.Allocate(s.owner, s.n)
			checkErr(t, err, s.wantErr)
			if err == nil && !slices.Equal(got, s.keys) {
				t.Fatalf("step %d: Allocate(%q, %d) = %v, want %v", i, s.owner, s.n, got, s.keys)
			}
		case "release":
			a.Release(s.owner)
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}
	}
}

// TestTunnelKeyAllocatorLastKey fills the pool: the last key handed out is MaxTunnelKey,
// the next request fails naming the pool, and a failed request takes nothing.
func TestTunnelKeyAllocatorLastKey(t *testing.T) {
	a := NewTunnelKeyAllocator()
	for i := range TunnelKeyPoolSize - 2 {
		if _, err := a.Allocate("cnc/"+strconv.Itoa(i), 1); err != nil {
			t.Fatalf("Allocate #%d: %v", i, err)
		}
	}
	// Two keys are left; asking for three fails and leaves both free.
	_, err := a.Allocate("greedy", 3)
	checkErr(t, err, `no free tunnel key for "greedy": the pool 16715779–16777215 of 61437 keys is used up by 61435 owners; delete unused Layer2 networks or network connects`)
	got, err := a.Allocate("second-to-last", 1)
	checkErr(t, err, "")
	last, err := a.Allocate("last", 1)
	checkErr(t, err, "")
	if got[0] != MaxTunnelKey-1 || last[0] != MaxTunnelKey {
		t.Fatalf("last two keys = %d, %d; want %d, %d", got[0], last[0], MaxTunnelKey-1, MaxTunnelKey)
	}
	_, err = a.Allocate("one-too-many", 1)
	checkErr(t, err, "used up by 61437 owners")
	// An owner that holds keys keeps them when it asks for more than is left.
	_, err = a.Allocate("last", 2)
	checkErr(t, err, "no free tunnel key")
	if keys, err := a.Allocate("last", 1); err != nil || keys[0] != MaxTunnelKey {
		t.Fatalf("Allocate(last, 1) after a failed grow = %v, %v", keys, err)
	}
}

func TestTunnelKeyAllocatorOneOwnerTakesAll(t *testing.T) {
	a := NewTunnelKeyAllocator()
	keys, err := a.Allocate("all", TunnelKeyPoolSize)
	checkErr(t, err, "")
	if len(keys) != TunnelKeyPoolSize || keys[0] != FirstAllocatedTunnelKey || keys[len(keys)-1] != MaxTunnelKey {
		t.Fatalf("got %d keys %d…%d", len(keys), keys[0], keys[len(keys)-1])
	}
	_, err = a.Allocate("x", 1)
	checkErr(t, err, "used up by 1 owner;")
}

// TestAllocateReturnsACopy checks that callers cannot change the allocator's state
// through the returned slice.
func TestAllocateReturnsACopy(t *testing.T) {
	a := NewTunnelKeyAllocator()
	keys, _ := a.Allocate("a", 1)
	keys[0] = 1
	if again, _ := a.Allocate("a", 1); again[0] != k0 {
		t.Fatalf("Allocate after changing the returned slice = %v", again)
	}
}

func TestNetworkTunnelKeys(t *testing.T) {
	a := NewTunnelKeyAllocator()
	for _, tc := range []struct {
		owner     string
		networkID int
		topology  string
		primary   bool
		nilAlloc  bool
		want      []int
		wantErr   string
	}{
		{owner: "default", networkID: 0, topology: "Layer3", primary: true, want: []int{16711683}},
		{owner: "cluster_udn_l3", networkID: 5, topology: "Layer3", primary: true, want: []int{16711688}},
		{owner: "ns1_l3", networkID: 6, topology: "layer3", want: []int{16711689}, nilAlloc: true},
		{owner: "cluster_udn_localnet", networkID: 7, topology: "Localnet", want: []int{16711690}},
		{owner: "ns1_l2sec", networkID: 8, topology: "Layer2", primary: false, want: []int{16711691}, nilAlloc: true},
		// Primary Layer2: [Layer2 switch, transit router].
		{owner: "cluster_udn_l2", networkID: 9, topology: "Layer2", primary: true, want: []int{16711692, k0}},
		{owner: "ns2_l2", networkID: 10, topology: "layer2", primary: true, want: []int{16711693, k0 + 1}},
		{owner: "cluster_udn_l2", networkID: 9, topology: "Layer2", primary: true, want: []int{16711692, k0}},
		{owner: "ns3_l2", networkID: 4095, topology: "Layer2", primary: true, want: []int{16715778, k0 + 2}},
		{owner: "ns4_l2", networkID: 11, topology: "Layer2", primary: true, nilAlloc: true, wantErr: `tunnel keys of primary Layer2 network "ns4_l2": no tunnel key allocator given`},
		{owner: "ns5_l2", networkID: 4096, topology: "Layer2", primary: true, wantErr: `tunnel keys of network "ns5_l2": network id 4096 is outside 0–4095`},
		{owner: "ns6", networkID: 12, topology: "Layer4", wantErr: `network "ns6" has topology "Layer4"; want Layer3, Layer2 or Localnet`},
		{owner: "ns7", networkID: -1, topology: "Layer3", wantErr: "network id -1"},
	} {
		t.Run(fmt.Sprintf("%s/%d/%s/%v", tc.owner, tc.networkID, tc.topology, tc.primary), func(t *testing.T) {
			alloc := a
			if tc.nilAlloc {
				alloc = nil
			}
			got, err := NetworkTunnelKeys(alloc, tc.owner, tc.networkID, tc.topology, tc.primary)
			checkErr(t, err, tc.wantErr)
			if err == nil && !slices.Equal(got, tc.want) {
				t.Fatalf("NetworkTunnelKeys = %v, want %v", got, tc.want)
			}
		})
	}
	// The annotation a primary Layer2 network persisted is what a new leader reserves,
	// after which the network gets the same keys back.
	b := NewTunnelKeyAllocator()
	checkErr(t, b.Reserve("ns2_l2", []int{16711693, k0 + 1}), "")
	got, err := NetworkTunnelKeys(b, "ns2_l2", 10, "Layer2", true)
	checkErr(t, err, "")
	if !slices.Equal(got, []int{16711693, k0 + 1}) {
		t.Fatalf("after resume: %v", got)
	}
	// A failed allocation is wrapped with the network's name.
	full := NewTunnelKeyAllocator()
	if _, err := full.Allocate("all", TunnelKeyPoolSize); err != nil {
		t.Fatal(err)
	}
	_, err = NetworkTunnelKeys(full, "ns9_l2", 13, "Layer2", true)
	checkErr(t, err, `transit router tunnel key of network "ns9_l2": no free tunnel key`)
}
