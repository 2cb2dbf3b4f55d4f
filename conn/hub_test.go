package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"
)

// ragged writes script to c in ragged pieces (1 to 300 bytes, now and
// then after a pause).
func ragged(c net.Conn, script string, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(script) > 0 {
		n := min(len(script), 1+rng.IntN(300))
		if _, err := io.WriteString(c, script[:n]); err != nil {
			return
		}
		script = script[n:]
		if rng.IntN(20) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// messages is n deliveries on channel ch, their payloads from..from+n-1.
func messages(ch string, from, n int) string {
	var s []byte
	for i := from; i < from+n; i++ {
		p := strconv.Itoa(i)
		s = fmt.Appendf(s, "*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(ch), ch, len(p), p)
	}
	return string(s)
}

// TestHubReadsEveryMember: three connections read on one hub goroutine,
// their messages written in ragged pieces by servers of their own: each reads all of its own, in
// order, each stamped by the kernel, and its end of stream. One meets a
// streamed value, which only a reader that may wait can read: it leaves
// the hub, and its own goroutine reads the rest.
func TestHubReadsEveryMember(t *testing.T) {
	const n = 2000
	scripts := []string{
		messages("a", 0, n),
		messages("b", 0, n/2) + "$?\r\n;3\r\nabc\r\n;0\r\n" + messages("b", n/2, n/2),
		messages("c", 0, n),
	}
	h, err := NewHub()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no hub on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	type member struct {
		c        *Conn
		got      int
		bad      string
		left     bool
		unstamp  int
		end      error
		finished chan struct{}
	}
	var push Push
	take := func(m *member, p *Push) {
		switch {
		case p.Kind == PushReply: // the streamed string
		case p.Kind != PushMessage || string(p.Head) != strconv.Itoa(m.got):
			if m.bad == "" {
				m.bad = fmt.Sprintf("push %d: kind %d payload %q", m.got, p.Kind, p.Head)
			}
		default:
			m.got++
			// Linux turns stamping on a few ms after the first socket asks
			// (rxstamp): the first messages may come unstamped.
			if m.got > n/2 && (p.Times.Arrival <= 0 || p.Times.Arrival >= p.Times.Read) {
				m.unstamp++
			}
		}
	}
	members := make([]*member, len(scripts))
	for i := range members {
		addr := loopback(t, func(c net.Conn) { ragged(c, scripts[i], uint64(i)) })
		c, err := Dial(context.Background(), Options{Addr: addr, SkipProbe: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m := &member{c: c, finished: make(chan struct{})}
		members[i] = m
		ready := func() bool {
			for {
				err := c.ReadQueued()
				held := c.Held()
				for ; held == HeldWhole; held = c.Held() {
					if err := c.ReadPush(&push); err != nil {
						m.end = err
						close(m.finished)
						return false
					}
					take(m, &push)
				}
				switch {
				case held == HeldUnframed:
					h.Leave(c)
					m.left = true
					go func() {
						defer close(m.finished)
						var p Push
						for {
							if err := c.ReadPush(&p); err != nil {
								m.end = err
								return
							}
							take(m, &p)
						}
					}()
					return false
				case errors.Is(err, ErrWouldBlock):
					return true
				case err != nil:
					m.end = err
					close(m.finished)
					return false
				case !c.LastReadFull():
					return true
				}
			}
		}
		if err := h.Join(c, ready); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	h.Start()
	for i, m := range members {
		select {
		case <-m.finished:
		case <-time.After(20 * time.Second):
			t.Fatalf("member %d: read %d of %d in 20 s", i, m.got, n)
		}
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	for i, m := range members {
		if m.got != n || m.bad != "" || !errors.Is(m.end, io.ErrUnexpectedEOF) || m.left != (i == 1) {
			t.Errorf("member %d: read %d of %d messages (%s), ended by %v, left the hub %v", i, m.got, n, m.bad, m.end, m.left)
		}
		if m.unstamp > 0 {
			t.Errorf("member %d: %d of its last %d messages without a kernel stamp before their read", i, m.unstamp, n/2)
		}
	}
}

// TestHubRefusesWhatItCannotRead: a TLS connection, or one whose reader
// goroutine runs, is no member; Close without Start returns.
func TestHubRefusesWhatItCannotRead(t *testing.T) {
	h, err := NewHub()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no hub on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	idle := func(c net.Conn) { io.Copy(io.Discard, c) }
	plain, err := Dial(context.Background(), Options{Addr: loopback(t, idle), SkipProbe: true, ReceiveClock: ReceiveRead})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := h.Join(plain, func() bool { return true }); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("a connection without kernel stamps joined: %v", err)
	}
	started, err := Dial(context.Background(), Options{Addr: loopback(t, idle), SkipProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	started.Start(discard{})
	defer started.Close()
	if err := h.Join(started, func() bool { return true }); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("a connection with its reader goroutine joined: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
}

type discard struct{}

func (discard) Reply(*Entry, Reply, Times) {}
