// Package rxstamp reads a socket with the kernel's software receive
// timestamps: when the last bytes a read returned reached this machine's
// kernel, on the caller's monotonic clock. A reply's arrival is then the
// kernel's instant, not the instant the reading goroutine woke up, so the
// client's own delays (scheduling, a busy core) stay out of the server's
// numbers and can be reported on their own (receive lag).
//
// Linux stamps TCP segments (loopback included) and UDP datagrams; it never
// stamps AF_UNIX stream sockets, whose reads therefore carry no timestamp.
// Elsewhere New returns nil and callers read the socket with plain reads.
package rxstamp

import (
	"errors"
	"time"
)

// ErrWouldBlock is TryRead's answer when the socket holds nothing to read.
var ErrWouldBlock = errors.New("nothing queued on the socket")

// MaxLag bounds how much earlier than its read a converted kernel
// timestamp may be before it is taken for a broken one (the wall clock was
// stepped between the stamp and the read): longer than any real wait of a
// reader, far shorter than a clock step worth noticing.
const MaxLag = int64(10 * time.Second)

// Plausible reports whether arrival, a converted kernel timestamp, may be
// used for bytes read at read (both on the same clock): it is positive (a
// clock that reads 0 or counts from near 0 is a test's or a broken one,
// and its readings must reach the caller unchanged), not after the read,
// and not more than MaxLag before it.
func Plausible(arrival, read int64) bool {
	return arrival > 0 && arrival <= read && read-arrival <= MaxLag
}

// maxPairGap bounds the spread of the monotonic readings around the wall
// clock reading that converts a timestamp: within it the conversion errs by
// at most half of it. A thread descheduled between the readings spreads
// them by far more; the pair is then taken again.
const (
	maxPairGap   = int64(2 * time.Microsecond)
	pairAttempts = 3
)

// toMono converts kernel, a CLOCK_REALTIME instant in ns, to the clock now
// reads, from a wall clock reading taken between two readings of now: the
// conversion uses the offset of that moment, so a wall clock slewed or
// stepped over a long run cannot bend it. When the readings keep straddling
// a descheduling, the tightest pair is used.
func toMono(kernel int64, now func() int64) int64 {
	best, bestGap := int64(0), int64(-1)
	for range pairAttempts {
		m1 := now()
		wall := time.Now().UnixNano()
		m2 := now()
		gap := m2 - m1
		if bestGap < 0 || gap < bestGap {
			best, bestGap = m1+gap/2-(wall-kernel), gap
		}
		if gap <= maxPairGap {
			break
		}
	}
	return best
}
