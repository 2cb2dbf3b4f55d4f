package messages

import "math/bits"

// Window is how many ordinals behind the highest one delivered a Track
// remembers. A message that far behind is Stale: a duplicate, or one
// given up on, it cannot tell. Pub/Sub keeps a channel's order per
// publishing connection, so a delivery that late takes a publisher's
// connections racing each other by thousands of messages.
const Window = 4096

// Track is one receiver's accounting of one channel (or one consumer
// group's of one stream): which ordinals came, in what order, and how
// often. Its memory is fixed (about 550 bytes), whatever the run's
// length. One goroutine at a time.
type Track struct {
	// high is one past the highest ordinal delivered (0: none yet).
	high uint64
	// seen holds, for the ordinals in [high−Window, high), whether each
	// came: ordinal o at bit o mod Window.
	seen [Window / 64]uint64

	// Distinct counts the ordinals delivered at least once, Duplicates
	// the deliveries of one already delivered, Reordered the first
	// deliveries of an ordinal below one delivered earlier, Stale those
	// more than Window behind the highest (a duplicate or one given up
	// on: it cannot tell), GivenUp the ordinals that fell behind the
	// window without coming: lost so far.
	Distinct, Duplicates, Reordered, Stale, GivenUp uint64
}

// Outcome is what a delivery was to its Track.
type Outcome uint8

// Outcomes of Track.Add.
const (
	First     Outcome = iota // the ordinal's first delivery
	Duplicate                // delivered before
	Stale                    // more than Window behind: a duplicate, or one given up on
)

// Add counts a delivery of ordinal o.
func (t *Track) Add(o uint64) Outcome {
	switch {
	case o >= t.high:
		t.advance(o + 1)
	case t.high-o > Window:
		t.Stale++
		return Stale
	case t.has(o):
		t.Duplicates++
		return Duplicate
	default:
		t.Reordered++
	}
	t.seen[(o%Window)/64] |= 1 << (o % 64)
	t.Distinct++
	return First
}

func (t *Track) has(o uint64) bool { return t.seen[(o%Window)/64]&(1<<(o%64)) != 0 }

// advance moves the window's end to to: the ordinals [high, to) take the
// places of those Window before them, which leave it, given up when they
// never came.
func (t *Track) advance(to uint64) {
	if to-t.high >= Window {
		// Everything in the window leaves, and whatever lies between it
		// and the new one never entered it.
		inWindow := min(t.high, Window)
		var came uint64
		for _, w := range t.seen {
			came += uint64(bits.OnesCount64(w))
		}
		t.GivenUp += inWindow - came
		if to-Window > t.high {
			t.GivenUp += to - Window - t.high
		}
		clear(t.seen[:])
		t.high = to
		return
	}
	for o := t.high; o < to; o++ {
		w, b := (o%Window)/64, o%64
		if o >= Window && t.seen[w]&(1<<b) == 0 {
			t.GivenUp++ // ordinal o − Window never came
		}
		t.seen[w] &^= 1 << b
	}
	t.high = to
}

// Lost is what never came of the first expected ordinals: expected less
// the distinct ordinals delivered, at least 0. A Stale delivery may have
// been one of them: Lost then counts it.
func (t *Track) Lost(expected uint64) uint64 {
	return expected - min(expected, t.Distinct)
}
