package stats

import (
	"errors"
	"testing"
)

// TestHistMemo: a Hist is made once per key and kept; a failure to make
// one is not kept; a nil memo makes one each time.
func TestHistMemo(t *testing.T) {
	made := 0
	mk := func(v int64, err error) func() (Hist, error) {
		return func() (Hist, error) {
			made++
			return Hist{Values: []int64{v}, Counts: []int64{1}}, err
		}
	}
	var m HistMemo
	for range 2 {
		if h, err := m.Get("a", mk(1, nil)); err != nil || h.Values[0] != 1 {
			t.Fatalf("got %v, %v", h, err)
		}
	}
	if h, _ := m.Get("b", mk(2, nil)); h.Values[0] != 2 || made != 2 || m.Len() != 2 {
		t.Fatalf("got %v; made %d, kept %d: want 2 and 2", h, made, m.Len())
	}
	boom := errors.New("boom")
	if _, err := m.Get("c", mk(3, boom)); err != boom || m.Len() != 2 {
		t.Fatalf("a failure: %v, kept %d", err, m.Len())
	}
	var none *HistMemo
	none.Get("a", mk(1, nil))
	none.Get("a", mk(1, nil))
	if made != 5 || none.Len() != 0 {
		t.Fatalf("a nil memo: made %d, want 5", made)
	}
}
