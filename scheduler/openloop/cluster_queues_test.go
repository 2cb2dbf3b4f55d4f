package openloop

import (
	"bytes"
	"strings"
	"testing"
)

func TestCmdStoreKeepsBytesUntilReleased(t *testing.T) {
	var s cmdStore
	var want [][]byte
	for i := range 200 {
		cmd := enc("SET", "k"+itoa(i), strings.Repeat("v", i%37))
		s.push(cmd, uint8(i%5))
		want = append(want, cmd)
		if i%3 == 2 {
			s.release(uint64(i - 40)) // lags behind, as the pacer's release does
		}
	}
	for q := s.first; q < s.next; q++ {
		got, tries := s.get(q)
		if !bytes.Equal(got, want[q]) || tries != uint8(q%5) {
			t.Fatalf("seq %d: %q (%d tries), want %q", q, got, tries, want[q])
		}
	}
	if got, _ := s.get(s.first - 1); got != nil {
		t.Errorf("a released command is still held")
	}
	s.release(s.next)
	if len(s.buf) != 0 {
		t.Errorf("%d bytes held after releasing everything", len(s.buf))
	}
	s.reset()
	s.push([]byte("x"), 0)
	if got, _ := s.get(0); string(got) != "x" {
		t.Errorf("after reset: %q", got)
	}
}

func TestWaitQueueIsFIFO(t *testing.T) {
	var q waitQueue
	next := 0
	for i := range 1000 {
		q.push(waitItem{intended: int64(i)}, []byte(itoa(i)))
		if i%3 == 0 {
			it, b := q.front()
			if it.intended != int64(next) || string(b) != itoa(next) {
				t.Fatalf("front %d %q, want %d", it.intended, b, next)
			}
			q.pop()
			next++
		}
	}
	for q.len() > 0 {
		it, b := q.front()
		if it.intended != int64(next) || string(b) != itoa(next) {
			t.Fatalf("front %d %q, want %d", it.intended, b, next)
		}
		q.pop()
		next++
	}
	if next != 1000 || len(q.buf) != 0 {
		t.Errorf("popped %d, %d bytes left", next, len(q.buf))
	}
}

func TestRedirectQueueHandsOverInOrder(t *testing.T) {
	var q redirectQueue
	if q.take() != nil {
		t.Fatal("empty queue gave redirects")
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				q.push(redirect{lane: g, seq: uint64(i)})
			}
		}()
	}
	last := map[int]int{0: -1, 1: -1, 2: -1, 3: -1}
	total, finished := 0, 0
	for finished < 4 || q.n.Load() > 0 {
		select {
		case <-done:
			finished++
		default:
		}
		for _, r := range q.take() {
			if int(r.seq) != last[r.lane]+1 {
				t.Fatalf("reader %d: seq %d after %d", r.lane, r.seq, last[r.lane])
			}
			last[r.lane] = int(r.seq)
			total++
		}
	}
	if total != 400 {
		t.Errorf("took %d of 400", total)
	}
}

func TestCmdStoreIsBounded(t *testing.T) {
	s := cmdStore{limit: 100}
	cmd := []byte(strings.Repeat("x", 40))
	for range 5 {
		s.push(cmd, 1)
	}
	for q := range uint64(5) {
		got, tries := s.get(q)
		if held := q < 2; (got != nil) != held || held && tries != 1 {
			t.Errorf("seq %d: held %v (%d tries), want %v", q, got != nil, tries, held)
		}
	}
	if len(s.buf) > 100 {
		t.Errorf("%d bytes held, limit 100", len(s.buf))
	}
	s.release(5)
	big := []byte(strings.Repeat("y", 500)) // one command alone is always kept
	s.push(big, 0)
	if got, _ := s.get(5); !bytes.Equal(got, big) {
		t.Errorf("a command above the limit in an empty store was not kept")
	}
}
