package cluster

import (
	"errors"
	"testing"

	"github.com/pacer-load/pacer/conn"
)

// TestSpreadSlotCoversTheSlots: consecutive request indices land on slots
// spread over the whole range, none far more often than the mean.
func TestSpreadSlotCoversTheSlots(t *testing.T) {
	var hits [Slots]int
	for i := uint64(0); i < 4*Slots; i++ {
		hits[SpreadSlot(i)]++
	}
	for s, n := range hits {
		if n < 1 || n > 8 {
			t.Fatalf("slot %d hit %d times by %d consecutive indices (mean 4)", s, n, 4*Slots)
		}
	}
}

func TestRouteSlot(t *testing.T) {
	spec, _ := KeyPositions("GET")
	mset, _ := KeyPositions("MSET")
	// Untagged: the key's own slot, the command left as it is.
	cmd := conn.AppendCommand(nil, "GET", "foo")
	if s, ok := RouteSlot(cmd, spec, false, false, 9); !ok || s != Slot([]byte("foo")) {
		t.Errorf("GET foo: slot %d %v, want %d", s, ok, Slot([]byte("foo")))
	}
	if _, ok := RouteSlot(conn.AppendCommand(nil, "PING"), KeySpec{}, true, false, 9); ok {
		t.Error("PING has a key")
	}
	// Tagged by index: every key gets request idx's slot.
	cmd = conn.AppendCommand(nil, "MSET", "a:{tag}:1", "x", "b:{tag}:2", "y")
	s, ok := RouteSlot(cmd, mset, true, false, 12345)
	if !ok || s != SpreadSlot(12345) {
		t.Fatalf("tagged MSET: slot %d %v, want %d", s, ok, SpreadSlot(12345))
	}
	for _, a := range []int{1, 3} {
		key, _ := conn.Arg(cmd, a)
		if Slot(key) != s {
			t.Errorf("key %q is on slot %d, want %d", key, Slot(key), s)
		}
	}
	// Tagged by key: the first key's name gives the tag, whatever idx.
	key := []byte("key:{tag}:000000000042")
	want := TagSlot(key)
	for _, idx := range []uint64{0, 1, 99} {
		cmd = conn.AppendCommand(nil, "GET", string(key))
		if s, ok := RouteSlot(cmd, spec, true, true, idx); !ok || s != want {
			t.Errorf("by key, idx %d: slot %d %v, want %d", idx, s, ok, want)
		}
		if got, _ := EncodedSlot(cmd, spec); got != want {
			t.Errorf("by key, idx %d: the filled key hashes to %d, want %d", idx, got, want)
		}
	}
}

func TestOwners(t *testing.T) {
	o := NewOwners()
	if _, ok := o.Owner(7); ok {
		t.Fatal("a new Owners has an owner")
	}
	tp := NewTopology([]Node{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}})
	tp.Assign(0, 99, 0)
	tp.Assign(100, 199, 2)
	if got := tp.Owning(); got[0] != true || got[1] != false || got[2] != true {
		t.Errorf("Owning %v, want [true false true]", got)
	}
	o.Set(150, 4)
	o.Set(500, 4)
	// Primary 2 is not one of the run's nodes: its slots keep their owner.
	o.Take(tp, []int{3, 1, -1})
	for _, c := range []struct {
		slot uint16
		node int
		ok   bool
	}{{0, 3, true}, {99, 3, true}, {150, 4, true}, {500, 4, true}, {200, 0, false}} {
		if n, ok := o.Owner(c.slot); n != c.node && c.ok || ok != c.ok {
			t.Errorf("slot %d on %d %v, want %d %v", c.slot, n, ok, c.node, c.ok)
		}
	}
}

func TestInTurn(t *testing.T) {
	up := []bool{true, false, true, false}
	ok := func(i int) bool { return up[i] }
	turn := 0
	var got []int
	for range 4 {
		i, tried, found := InTurn(len(up), turn, ok)
		if !found {
			t.Fatal("none found")
		}
		got = append(got, i)
		turn += tried
	}
	if want := []int{0, 2, 0, 2}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("turns %v, want %v", got, want)
	}
	if i, tried, found := InTurn(3, 5, func(int) bool { return false }); found || tried != 3 || i != 1 {
		t.Errorf("none accepted: %d %d %v, want the last tried (1), 3 tries, false", i, tried, found)
	}
}

func TestFollow(t *testing.T) {
	for _, c := range []struct {
		text, code string
		next       Next
	}{
		{"MOVED 3999 127.0.0.1:6381", "MOVED", Moved},
		{"ASK 3999 127.0.0.1:6381", "ASK", Ask},
		{"MOVED 1 :99999", "MOVED", Broken},
		{"CLUSTERDOWN The cluster is down", "CLUSTERDOWN", Retry},
		{"TRYAGAIN Multiple keys request during rehashing of slot", "TRYAGAIN", Retry},
		{"ERR unknown command", "ERR", Answered},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE", Answered},
	} {
		r := Follow([]byte(c.text), []byte(c.code))
		if r.Next != c.next {
			t.Errorf("%q: next %d, want %d", c.text, r.Next, c.next)
		}
		switch r.Next {
		case Moved, Ask:
			if r.Redirect.Slot != 3999 || r.Redirect.Addr != "127.0.0.1:6381" || r.Redirect.Ask != (r.Next == Ask) {
				t.Errorf("%q: redirect %+v", c.text, r.Redirect)
			}
		case Broken:
			if !errors.Is(r.Err, conn.ErrProtocol) {
				t.Errorf("%q: error %v, want a protocol error", c.text, r.Err)
			}
		case Retry:
			if r.Code != c.code {
				t.Errorf("%q: code %q", c.text, r.Code)
			}
		}
		if Refetch(r.Next) != (r.Next == Moved || r.Next == Retry) {
			t.Errorf("%q: refetch %v", c.text, Refetch(r.Next))
		}
	}
}

func TestBackoff(t *testing.T) {
	want := []int{10, 20, 40, 80, 160, 200, 200}
	for i, ms := range want {
		if got := Backoff(i + 1); got.Milliseconds() != int64(ms) {
			t.Errorf("Backoff(%d) = %v, want %d ms", i+1, got, ms)
		}
	}
	if Backoff(1000) != MaxRetryBackoff {
		t.Error("a long run of retries is not capped")
	}
}
