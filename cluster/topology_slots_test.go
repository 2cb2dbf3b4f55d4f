package cluster

import (
	"slices"
	"testing"
)

func TestSlotList(t *testing.T) {
	top := NewTopology([]Node{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}})
	top.Assign(0, 2, 0)
	top.Assign(3, Slots-2, 1)
	top.Assign(Slots-1, Slots-1, 0)
	if got := top.SlotList(0); !slices.Equal(got, []uint16{0, 1, 2, Slots - 1}) {
		t.Errorf("a's slots %v", got)
	}
	if got := top.SlotList(1); len(got) != top.SlotsOf(1) || got[0] != 3 || got[len(got)-1] != Slots-2 || !slices.IsSorted(got) {
		t.Errorf("b's %d slots, from %d to %d", len(got), got[0], got[len(got)-1])
	}
	if got := top.SlotList(2); got != nil {
		t.Errorf("c owns no slot, listed %v", got)
	}
}

// TestRefreshed: a known primary takes its slots in the new map; one the
// map drops, or that lost every slot, keeps its old list; a primary that
// joined is not among the lists.
func TestRefreshed(t *testing.T) {
	top := NewTopology([]Node{{Addr: "b:1"}, {Addr: "new:1"}, {Addr: "a:1"}})
	top.Assign(0, 9, 2)
	top.Assign(10, Slots-1, 1)
	old := [][]uint16{{0, 1}, {2, 3}, {4}}
	got := Refreshed(old, []string{"a:1", "b:1", "gone:1"}, top)
	want := [][]uint16{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 3}, {4}}
	if len(got) != len(want) {
		t.Fatalf("%d lists, want %d", len(got), len(want))
	}
	for k := range want {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("list %d: %v, want %v", k, got[k], want[k])
		}
	}
	if !slices.Equal(old[0], []uint16{0, 1}) {
		t.Errorf("the old lists changed: %v", old)
	}
}
