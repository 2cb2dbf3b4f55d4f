package messages

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestTrack: in order, duplicates, reordering within the window, a gap
// the window passes, a stale arrival, and the counts a reference that
// remembers everything agrees with.
func TestTrack(t *testing.T) {
	var tr Track
	for o := range uint64(10) {
		if tr.Add(o) != First {
			t.Fatalf("ordinal %d not first", o)
		}
	}
	if tr.Add(3) != Duplicate || tr.Add(12) != First || tr.Add(12) != Duplicate || tr.Add(11) != First || tr.Add(10) != First {
		t.Fatal("duplicate, reorder")
	}
	if tr.Distinct != 13 || tr.Duplicates != 2 || tr.Reordered != 2 || tr.Stale != 0 || tr.high != 13 {
		t.Fatalf("%+v", tr)
	}
	// A gap of 5, then a message two windows ahead: the 5 fall behind
	// the window, and so do the Window ordinals it jumped over beyond
	// the new window; those in it are not given up yet, but lost at the
	// end if they never come.
	tr.Add(18)
	tr.Add(18 + 2*Window)
	if tr.GivenUp != 5+Window || tr.Lost(19+2*Window) != 2*Window+4 {
		t.Fatalf("given up %d lost %d", tr.GivenUp, tr.Lost(19+2*Window))
	}
	if tr.Add(14) != Stale || tr.Add(18+Window+1) != First || tr.Reordered != 3 {
		t.Errorf("a given-up ordinal arriving late is stale; one within the window is reordered: %+v", tr)
	}
}

// TestTrackAgainstReference: random deliveries (losses, duplicates, local
// reordering by up to a window) counted as a map of every ordinal would.
func TestTrackAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 50 {
		var tr Track
		seen := map[uint64]bool{}
		const n = 20000
		var order []uint64
		for o := range uint64(n) {
			if rng.Float64() < 0.01 {
				continue // lost
			}
			order = append(order, o)
			if rng.Float64() < 0.01 {
				order = append(order, o) // duplicated
			}
		}
		// Local reordering: shuffle some blocks of 100, so no delivery
		// moves more than 100 places.
		for i := 0; i < len(order); i += 100 {
			if rng.Float64() < 0.2 {
				b := order[i:min(i+100, len(order))]
				rng.Shuffle(len(b), func(x, y int) { b[x], b[y] = b[y], b[x] })
			}
		}
		var dups, reordered uint64
		high := uint64(0)
		for _, o := range order {
			if seen[o] {
				dups++
			} else if o+1 < high {
				reordered++
			}
			seen[o] = true
			high = max(high, o+1)
			tr.Add(o)
		}
		if tr.Distinct != uint64(len(seen)) || tr.Duplicates != dups || tr.Reordered != reordered || tr.Stale != 0 || tr.Lost(n) != n-uint64(len(seen)) {
			t.Fatalf("round %d: %+v; want distinct %d dups %d reordered %d", round, tr, len(seen), dups, reordered)
		}
	}
}

func TestHeader(t *testing.T) {
	b := Payload(40)
	h := Header{Run: 7, Seq: 1 << 40, Intended: -5, Sent: 1e18}
	h.Put(b)
	got, ok := ParseHeader(b)
	if !ok || got != h || string(b[HeaderLen:]) != "xxxxxxxx" {
		t.Fatalf("%+v %v %q", got, ok, b)
	}
	if _, ok := ParseHeader(b[:HeaderLen-1]); ok {
		t.Error("short payload")
	}
	b[0] = 'P'
	if _, ok := ParseHeader(b); ok {
		t.Error("foreign payload")
	}
	if len(Payload(3)) != HeaderLen {
		t.Error("a payload holds its header")
	}
}

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		j, n, k int
		want    []int
	}{{0, 10, 1, []int{0}}, {7, 10, 3, []int{1}}, {1, 2, 5, []int{1, 3}}, {0, 1, 3, []int{0, 1, 2}}} {
		got := Layout(c.j, c.n, c.k)
		if len(got) != len(c.want) {
			t.Errorf("Layout(%d, %d, %d) = %v, want %v", c.j, c.n, c.k, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Layout(%d, %d, %d) = %v, want %v", c.j, c.n, c.k, got, c.want)
			}
		}
	}
	// Every channel is covered, and FanOut counts its subscribers.
	for _, nk := range [][2]int{{10, 3}, {3, 10}, {7, 7}, {1, 1}} {
		n, k := nk[0], nk[1]
		count := make([]int, k)
		for j := range n {
			for _, c := range Layout(j, n, k) {
				count[c]++
			}
		}
		for c := range k {
			if count[c] == 0 || count[c] != FanOut(c, n, k) {
				t.Errorf("n=%d k=%d: channel %d has %d subscribers, FanOut says %d", n, k, c, count[c], FanOut(c, n, k))
			}
		}
	}
}

// TestSettle: Settle returns once the receivers have everything, once
// their progress stands still for the quiet time, and at the limit while
// it keeps moving; a cancelled context returns at once.
func TestSettle(t *testing.T) {
	t.Parallel()
	looks := 0
	Settle(context.Background(), time.Hour, time.Hour, func() (uint64, bool) { looks++; return uint64(looks), looks == 3 })
	if looks != 3 {
		t.Errorf("complete at the third look: looked %d times", looks)
	}
	looks = 0
	Settle(context.Background(), 20*time.Millisecond, time.Hour, func() (uint64, bool) { looks++; return 7, false })
	if looks < 2 {
		t.Errorf("still progress: looked %d times", looks)
	}
	moving := uint64(0)
	Settle(context.Background(), time.Hour, 30*time.Millisecond, func() (uint64, bool) { moving++; return moving, false })
	if moving < 2 {
		t.Errorf("moving progress: looked %d times before the limit", moving)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	looks = 0
	Settle(ctx, time.Hour, time.Hour, func() (uint64, bool) { looks++; return 0, false })
	if looks != 0 {
		t.Errorf("cancelled: looked %d times", looks)
	}
}
