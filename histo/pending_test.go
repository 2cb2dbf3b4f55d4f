package histo

import "testing"

// TestPending: runs of equal values come out whole, in order, with their
// counts, and nothing is lost or counted twice.
func TestPending(t *testing.T) {
	var p Pending
	var got [][2]int64
	for _, v := range []int64{5, 5, 5, 7, 7, 5, 9} {
		if prev, n := p.Add(v); n > 0 {
			got = append(got, [2]int64{prev, n})
		}
	}
	if v, n := p.Take(); n > 0 {
		got = append(got, [2]int64{v, n})
	}
	want := [][2]int64{{5, 3}, {7, 2}, {5, 1}, {9, 1}}
	if len(got) != len(want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("runs %v, want %v", got, want)
		}
	}
	if _, n := p.Take(); n != 0 {
		t.Errorf("taken twice: %d samples", n)
	}
}
