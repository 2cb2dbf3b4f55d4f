package looptap_test

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/looptap"
	"github.com/pacer-load/pacer/internal/rxstamp"
)

// TestTapSeesWhatTheReaderReads: a server on loopback writes 200 chunks a
// millisecond apart; the tap passes on the same bytes in order, each
// dated as the receiving socket's own kernel timestamp dates it.
func TestTapSeesWhatTheReaderReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	var mu sync.Mutex
	var tapped []byte
	var tapAt []int64 // the timestamp of each tapped byte's segment, per chunk end
	tap, err := looptap.Start(looptap.Config{ServerPort: port, Now: clock.Now, OnSegment: func(s looptap.Segment) {
		mu.Lock()
		defer mu.Unlock()
		if s.Seq != uint64(len(tapped)) {
			t.Errorf("segment at %d, want %d", s.Seq, len(tapped))
		}
		tapped = append(tapped, s.Payload...)
		for range len(s.Payload) {
			tapAt = append(tapAt, s.At)
		}
	}})
	if errors.Is(err, looptap.ErrUnsupported) {
		t.Skipf("%v (CI runs as root)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	const chunks, size = 200, 100
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for i := range chunks {
			if _, err := c.Write(bytes.Repeat([]byte{byte('a' + i%26)}, size)); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := rxstamp.New(c, clock.Now)
	if rd == nil {
		t.Skip("no kernel receive timestamps")
	}
	var got []byte
	var diffs []int64 // the reader's stamp less the tap's, per read
	buf := make([]byte, 64<<10)
	for len(got) < chunks*size {
		n, err := rd.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		time.Sleep(50 * time.Millisecond / chunks) // now and then two chunks wait: the read's stamp is the later one's
		mu.Lock()
		if end := len(got) - 1; end < len(tapAt) && rd.Arrival() != 0 {
			diffs = append(diffs, rd.Arrival()-tapAt[end])
		}
		mu.Unlock()
	}
	time.Sleep(20 * time.Millisecond)
	st := tap.Stop()
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(tapped, got) {
		t.Fatalf("the tap saw %d bytes, the reader read %d, and they differ", len(tapped), len(got))
	}
	if st.Gaps != 0 || st.Dropped != 0 || st.Segments < chunks/2 || st.Packets > st.Segments+10 {
		t.Errorf("stats %+v", st)
	}
	// The socket's stamp is taken where loopback queues the segment for
	// the receive path, the tap's where the receive path hands it to the
	// taps: a few µs later, never earlier (but for the conversions from
	// the wall clock, taken apart on either side: a µs or two).
	slices.Sort(diffs)
	if len(diffs) < chunks/2 {
		t.Fatalf("%d reads dated, of %d chunks", len(diffs), chunks)
	}
	med, most := diffs[len(diffs)/2], diffs[len(diffs)-1]
	later := 0
	for _, d := range diffs {
		if d > 3000 {
			later++
		}
	}
	t.Logf("%d segments; the reader's stamp less the tap's over %d reads: min %d ns, median %d ns, max %d ns; %d more than 3 µs later", st.Segments, len(diffs), diffs[0], med, most, later)
	// The median only: each side converts its stamps from the wall clock
	// at its own read, and a thread descheduled around all of its three
	// clock pairs (a loaded machine) converts one read by as much.
	if med < -15000 || med > 2000 {
		t.Errorf("the reader's stamps against the tap's: median %d ns (%d of %d more than 3 µs later); want the tap's a few µs later", med, later, len(diffs))
	}
}
