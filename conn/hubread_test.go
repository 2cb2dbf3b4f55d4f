package conn

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// newTestHub starts a hub, or skips where there is none; it is closed
// when the test ends.
func newTestHub(t *testing.T) *Hub {
	t.Helper()
	h, err := NewHub()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no hub on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	h.Start()
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// ordered is a Handler that checks replies come in the order of their
// requests (Entry.Kind counts them).
type ordered struct {
	mu       sync.Mutex
	next     uint32
	bad      string
	unstamp  int
	replies  int
	readEnds int
	got      chan struct{}
}

func newOrdered() *ordered { return &ordered{got: make(chan struct{}, 1<<16)} }

func (o *ordered) Reply(e *Entry, r Reply, t Times) {
	o.mu.Lock()
	if e.Kind != o.next && o.bad == "" {
		o.bad = "reply " + strconv.Itoa(int(o.next)) + " answered request " + strconv.Itoa(int(e.Kind))
	}
	if r.Err && o.bad == "" {
		o.bad = "error reply to request " + strconv.Itoa(int(e.Kind))
	}
	o.next++
	o.replies++
	if t.Arrival <= 0 || t.Arrival > t.Read {
		o.unstamp++
	}
	o.mu.Unlock()
	o.got <- struct{}{}
}

func (o *ordered) ReadEnded() {
	o.mu.Lock()
	o.readEnds++
	o.mu.Unlock()
}

func (o *ordered) wait(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-o.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d replies", i, n)
		}
	}
}

// TestStartOnReadsRepliesOnTheHub: three connections to a redis-server
// read on one hub, each with 3,000 pipelined GETs and SETs in bursts: each
// gets every reply, in the order of its requests, kernel-stamped, and
// ReadEnded runs. One meets a value longer than the hub holds (400 KB):
// its reading moves to a goroutine of its own, and it still gets every
// reply in order. Close returns once the hub reads it no more.
func TestStartOnReadsRepliesOnTheHub(t *testing.T) {
	srv := redistest.Start(t)
	h := newTestHub(t)
	big := strings.Repeat("x", 400<<10)
	if _, err := srv.Do("SET", "big", big); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	type member struct {
		c *Conn
		o *ordered
	}
	var members []member
	for range 3 {
		c := mustDial(t, Options{Addr: srv.Addr})
		o := newOrdered()
		c.StartOn(h, o)
		if !c.OnHub() {
			t.Fatal("a plain kernel-stamped connection is not read on the hub")
		}
		members = append(members, member{c, o})
	}
	set := AppendCommand(nil, "SET", "k", "v")
	get := AppendCommand(nil, "GET", "k")
	getBig := AppendCommand(nil, "GET", "big")
	for kind := uint32(0); kind < n; kind++ {
		for i, m := range members {
			cmd := set
			switch {
			case i == 1 && kind == n/2:
				cmd = getBig
			case kind%3 == 0:
				cmd = get
			}
			m.c.Queue(cmd, 0, kind)
		}
		if kind%50 == 49 {
			for _, m := range members {
				if err := m.c.FlushBlocking(int64(kind)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for i, m := range members {
		if err := m.c.FlushBlocking(n); err != nil {
			t.Fatal(err)
		}
		m.o.wait(t, n)
		m.c.Close()
		select {
		case <-m.c.Done():
		default:
			t.Errorf("member %d: Close returned before its reader stopped", i)
		}
		m.o.mu.Lock()
		if m.o.bad != "" || m.o.replies != n {
			t.Errorf("member %d: %d of %d replies: %s", i, m.o.replies, n, m.o.bad)
		}
		if m.o.unstamp > 10 {
			t.Errorf("member %d: %d replies without a kernel stamp before their read", i, m.o.unstamp)
		}
		if m.o.readEnds == 0 {
			t.Errorf("member %d: ReadEnded never ran", i)
		}
		if left := !m.c.OnHub(); left != (i == 1) || m.c.BytesRead() < uint64(len(big)) == (i == 1) {
			t.Errorf("member %d: left the hub %v, read %d bytes (the long value: %d)", i, left, m.c.BytesRead(), len(big))
		}
		m.o.mu.Unlock()
	}
}

// TestStartOnEndsLikeAReaderGoroutine: a connection read on a hub ends as
// one read by its own goroutine does. A server that answers 2 of 5 and
// hangs up: Done closes, 3 stay unanswered. A connection expired from
// another goroutine while the hub waits: Done closes at once (the hub
// wakes for it). A hub closed under a live connection: its Done closes,
// and Close returns. A write that fails keeps the replies that arrived.
func TestStartOnEndsLikeAReaderGoroutine(t *testing.T) {
	h := newTestHub(t)
	cmd := AppendCommand(nil, "PING")
	t.Run("hang-up", func(t *testing.T) {
		addr := loopback(t, func(c net.Conn) {
			buf := make([]byte, 4096)
			c.Read(buf)
			c.Write([]byte("+PONG\r\n+PONG\r\n"))
		})
		c := mustDial(t, Options{Addr: addr, SkipProbe: true})
		o := newOrdered()
		c.StartOn(h, o)
		for i := range 5 {
			c.Queue(cmd, 0, uint32(i))
		}
		if err := c.Flush(1); err != nil {
			t.Fatal(err)
		}
		o.wait(t, 2)
		waitDone(t, c)
		c.Close()
		unanswered := 0
		c.Unanswered(func(*Entry) { unanswered++ })
		if c.Err() == nil || unanswered != 3 {
			t.Errorf("error %v, %d unanswered: want the hang-up and 3", c.Err(), unanswered)
		}
	})
	t.Run("expired", func(t *testing.T) {
		idle := make(chan struct{})
		addr := loopback(t, func(c net.Conn) { <-idle })
		defer close(idle)
		c := mustDial(t, Options{Addr: addr, SkipProbe: true})
		c.StartOn(h, newOrdered())
		c.Queue(cmd, 0, 0)
		if err := c.Flush(1); err != nil {
			t.Fatal(err)
		}
		c.Expire()
		waitDone(t, c)
		c.Close()
		if !errors.Is(c.Err(), ErrTimeout) {
			t.Errorf("error %v, want ErrTimeout", c.Err())
		}
	})
	t.Run("write-fails", func(t *testing.T) {
		writeFailureKeepsReplies(t, func(c *Conn, g Handler) { c.StartOn(h, g) })
	})
	t.Run("hub-closed", func(t *testing.T) {
		h2 := newTestHub(t)
		idle := make(chan struct{})
		addr := loopback(t, func(c net.Conn) { <-idle })
		defer close(idle)
		c := mustDial(t, Options{Addr: addr, SkipProbe: true})
		o := newOrdered()
		c.StartOn(h2, o)
		if err := h2.Close(); err != nil {
			t.Fatal(err)
		}
		waitDone(t, c)
		c.Close()
		if o.readEnds == 0 {
			t.Error("ReadEnded did not run when the hub closed")
		}
	})
}

// TestStartOnWithoutAHub: a nil hub, or a connection no hub can read (no
// kernel stamps), is read by a goroutine of its own.
func TestStartOnWithoutAHub(t *testing.T) {
	srv := redistest.Start(t)
	h := newTestHub(t)
	for _, tc := range []struct {
		name string
		hub  *Hub
		o    Options
	}{
		{"nil hub", nil, Options{Addr: srv.Addr}},
		{"read clock", h, Options{Addr: srv.Addr, ReceiveClock: ReceiveRead}},
	} {
		c := mustDial(t, tc.o)
		o := newOrdered()
		c.StartOn(tc.hub, o)
		if c.OnHub() {
			t.Errorf("%s: read on a hub", tc.name)
		}
		c.Queue(AppendCommand(nil, "PING"), 0, 0)
		if err := c.Flush(1); err != nil {
			t.Fatal(err)
		}
		o.wait(t, 1)
		c.Close()
	}
}

func waitDone(t *testing.T, c *Conn) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(hangLimit):
		t.Fatal("Done did not close")
	}
}
