package messages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
)

// deliverAll hands every command of cmds to the receivers listening to its
// channel (subs[c]), as a server would, dropping those drop says.
func deliverAll(t *testing.T, cmds [][]byte, k int, subs [][]*Receiver, arrival func(h Header) int64, drop func(r *Receiver, h Header) bool) {
	t.Helper()
	for _, cmd := range cmds {
		payload, ok := conn.Arg(cmd, 2)
		if !ok {
			t.Fatalf("no payload in %q", cmd)
		}
		h, ok := ParseHeader(payload)
		if !ok {
			t.Fatalf("no header in %q", payload)
		}
		c, ord := Ordinal(h.Seq, k)
		ch, _ := conn.Arg(cmd, 1)
		if want := "ch:" + strconv.Itoa(c); string(ch) != want {
			t.Fatalf("message %d on %q, want %q", h.Seq, ch, want)
		}
		for _, r := range subs[c] {
			if drop != nil && drop(r, h) {
				continue
			}
			a := arrival(h)
			r.Deliver(r.Track(0), ord, h, conn.Times{Arrival: a, Read: a + 1000})
		}
	}
}

// TestMeter: a publisher's messages over three channels, two receivers on
// each, one of which misses some: every delivery is counted once, the
// loss is what its channel carried less what came, the intervals add up
// to the run, and the warmup's messages count apart.
func TestMeter(t *testing.T) {
	const k = 3
	m := NewMeter(MeterConfig{Run: 9, Interval: 10 * time.Millisecond, Warmup: 5 * time.Millisecond})
	sent := NewSent(k)
	var prefixes [][]byte
	for c := range k {
		prefixes = append(prefixes, Prefix([]string{"PUBLISH", "ch:" + strconv.Itoa(c)}, 40))
	}
	p := NewPublisher(m, sent, prefixes, 40)
	subs := make([][]*Receiver, k)
	for c := range k {
		for j := range 2 {
			subs[c] = append(subs[c], m.NewReceiver("sub "+strconv.Itoa(2*c+j), "ch:"+strconv.Itoa(c), 1))
		}
	}
	t0 := now()
	p.Begin(t0)
	const n = 3000
	var cmds [][]byte
	for i := range uint64(n) {
		intended := t0 + int64(i)*int64(10*time.Microsecond) // 30 ms of timeline
		p.Stamp(i, intended, intended+500)
		cmd, _ := p.Next()
		cmds = append(cmds, bytes.Clone(cmd))
	}
	if len(cmds[0]) != len(prefixes[0])+40+2 {
		t.Fatalf("command of %d bytes: %q", len(cmds[0]), cmds[0])
	}
	loser := subs[1][0]
	deliverAll(t, cmds, k, subs, func(h Header) int64 { return h.Intended + int64(time.Millisecond) },
		func(r *Receiver, h Header) bool { return r == loser && h.Seq%10 == 1 })
	// A foreign payload and a duplicate.
	subs[0][0].Deliver(subs[0][0].Track(0), 0, Header{Run: 8}, conn.Times{Arrival: t0, Read: t0})
	subs[0][0].Deliver(subs[0][0].Track(0), 999, Header{Run: 9, Seq: 2997, Intended: t0, Sent: t0}, conn.Times{Arrival: t0, Read: t0})
	time.Sleep(25 * time.Millisecond) // some intervals close on their own
	res, err := m.Finish(now(), func(r *Receiver) uint64 {
		c, _ := strconv.Atoi(r.Channels[3:])
		return sent.Channel(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	warmMsgs := uint64(500) // intended in the first 5 ms
	if got := sent.Total(); got != n-warmMsgs {
		t.Fatalf("sent %d measured, want %d", got, n-warmMsgs)
	}
	// The loser misses seq ≡ 1 mod 10 on channel 1 (seq ≡ 1 mod 3):
	// seq ≡ 1 mod 30, those measured (seq ≥ 500).
	lost := uint64(0)
	for s := uint64(500); s < n; s++ {
		if s%30 == 1 {
			lost++
		}
	}
	wantExpected := 2 * (n - warmMsgs)
	if res.Expected != wantExpected || res.Lost != lost || res.Delivered != wantExpected-lost || res.Foreign != 1 || res.Duplicates != 1 {
		t.Fatalf("expected %d delivered %d lost %d foreign %d dups %d; want %d, %d lost", res.Expected, res.Delivered, res.Lost, res.Foreign, res.Duplicates, wantExpected, lost)
	}
	var warmLost, ch1 uint64
	for s := uint64(0); s < n; s++ {
		switch {
		case s < warmMsgs && s%30 == 1:
			warmLost++
		case s >= warmMsgs && s%3 == 1:
			ch1++
		}
	}
	if res.Warmup != 2*warmMsgs-warmLost || res.Receivers[2].Lost != lost || res.Receivers[2].Expected != ch1 || res.Receivers[2].Delivered+lost != ch1 {
		t.Errorf("warmup %d, loser %+v", res.Warmup, res.Receivers[2])
	}
	if d := histo.Summarize(res.Delivery); d.Count != int64(res.Delivered) || d.Min < 0.999 || d.Max > 1.001 {
		t.Errorf("delivery latency %+v, want %d of 1 ms", d, res.Delivered)
	}
	if s := histo.Summarize(res.Service); s.P50 < 0.999 || s.P50 > 1.0 {
		t.Errorf("service %+v", s)
	}
	var sum uint64
	var hs int64
	for _, iv := range res.Intervals {
		sum += iv.Delivered
		hs += iv.Delivery.Summary.Count
	}
	if sum != res.Delivered || hs != int64(res.Delivered) || len(res.Intervals) < 2 {
		t.Errorf("%d intervals hold %d deliveries (%d in histograms), the run %d", len(res.Intervals), sum, hs, res.Delivered)
	}
}

// TestDeliverDoesNotAllocate: a delivery costs no allocation.
func TestDeliverDoesNotAllocate(t *testing.T) {
	m := NewMeter(MeterConfig{Run: 1})
	m.warmEnd.Store(1)
	m.t0.Store(1)
	r := m.NewReceiver("r", "c", 1)
	seq := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		r.Deliver(r.Track(0), seq, Header{Run: 1, Seq: seq, Intended: 100, Sent: 200}, conn.Times{Arrival: 5000, Read: 6000})
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per delivery", allocs)
	}
}

// TestEndReason: a server that closed a receiver's connection is named
// whichever way its end reached pacer (an end of stream, a reset, a write
// that broke the pipe); any other error is a failure.
func TestEndReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{io.EOF, "the server closed the connection"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), "the server closed the connection (reset)"},
		{&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, "the server closed the connection (broken pipe)"},
		{errors.New("bad reply"), "the connection failed: bad reply"},
	} {
		if got := EndReason(c.err); got != c.want {
			t.Errorf("EndReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
