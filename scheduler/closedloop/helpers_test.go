package closedloop

// Helpers of the scheduler's driver tests that the closed loop's tests
// use too: a loopback RESP server whose replies a test decides, dialing
// with the drivers' clock, and the series check.

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// fakeServer is a loopback RESP server for the driver's end-of-run rules.
// Every command it receives is cmdLen bytes (the tests send one fixed
// template); reply decides what each connection's k-th command gets.
type fakeServer struct {
	ln     net.Listener
	cmdLen int
	// reply returns the bytes to answer the k-th command of a connection,
	// or nil for no answer; close=true closes the connection instead.
	reply    func(k int) (b []byte, close bool)
	noRead   atomic.Bool // stop reading (the socket buffers fill up)
	received atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newFakeServer(t *testing.T, cmdLen int, reply func(k int) ([]byte, bool)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, cmdLen: cmdLen, reply: reply}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go s.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.noRead.Store(false)
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	buf := make([]byte, 64<<10)
	var out []byte
	pending, k := 0, 0
	for {
		for s.noRead.Load() {
			time.Sleep(time.Millisecond)
		}
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		pending += n
		out = out[:0]
		for pending >= s.cmdLen {
			pending -= s.cmdLen
			s.received.Add(1)
			b, closeNow := s.reply(k)
			k++
			if closeNow {
				c.Write(out)
				return
			}
			out = append(out, b...)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// pong is the fake server's reply, shared so it allocates nothing per reply.
var pong = []byte("+PONG\r\n")

func (s *fakeServer) dial(t *testing.T, n, maxInflight int) []*conn.Conn {
	return dial(t, s.ln.Addr().String(), n, maxInflight)
}

func pingStream(t *testing.T) (*scenarios.Stream, int) {
	tpl, err := scenarios.Compile("PING", []string{"PING"}, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.NewStream(tpl, 1), tpl.Len()
}

func dial(t *testing.T, addr string, n, maxInflight int) []*conn.Conn {
	t.Helper()
	conns, err := conn.DialAll(context.Background(), conn.Options{Addr: addr, SkipProbe: true, Now: scheduler.Now, MaxInflight: maxInflight}, n)
	if err != nil {
		t.Fatal(err)
	}
	return conns
}

// checkSeries verifies that a series adds up to what it cuts: counts sum
// to counts, each histogram's intervals merge to the histogram exactly
// (same count, same p99.9 and max), intervals are contiguous from 0.
func checkSeries(t *testing.T, what string, ivs []scheduler.Interval, d time.Duration, total scheduler.Counts, hs [3]*hdrhistogram.Histogram) {
	t.Helper()
	checkSeriesFrom(t, what, 0, ivs, d, total, hs)
}

// checkSeriesFrom is checkSeries for a series whose first interval starts
// at origin (the end of a warmup).
func checkSeriesFrom(t *testing.T, what string, origin time.Duration, ivs []scheduler.Interval, d time.Duration, total scheduler.Counts, hs [3]*hdrhistogram.Histogram) {
	t.Helper()
	if len(ivs) == 0 {
		t.Fatalf("%s: no intervals", what)
	}
	var sum scheduler.Counts
	merged := [3]*hdrhistogram.Histogram{histo.New(), histo.New(), histo.New()}
	for k, iv := range ivs {
		if iv.Start != origin+time.Duration(k)*d || (k < len(ivs)-1 && iv.Duration != d) || iv.Duration < 0 {
			t.Fatalf("%s: interval %d starts at %v and lasts %v, with intervals of %v", what, k, iv.Start, iv.Duration, d)
		}
		sum.Add(iv.Counts)
		for i, p := range [3]histo.Packed{iv.Response, iv.Service, iv.Lag} {
			h, err := p.Histogram()
			if err != nil {
				t.Fatalf("%s: interval %d: %v", what, k, err)
			}
			if h.TotalCount() != p.Summary.Count {
				t.Fatalf("%s: interval %d: summary of %d samples for %d", what, k, p.Summary.Count, h.TotalCount())
			}
			merged[i].Merge(h)
		}
	}
	if sum != total {
		t.Fatalf("%s: intervals sum to %+v, the test counts %+v", what, sum, total)
	}
	for i, h := range hs {
		if h == nil {
			if merged[i].TotalCount() != 0 {
				t.Fatalf("%s: histogram %d: intervals hold %d samples of a histogram the test does not have", what, i, merged[i].TotalCount())
			}
			continue
		}
		m := merged[i]
		if m.TotalCount() != h.TotalCount() || m.ValueAtQuantile(99.9) != h.ValueAtQuantile(99.9) || m.Max() != h.Max() || m.Min() != h.Min() {
			t.Fatalf("%s: histogram %d: intervals merge to %d samples (p99.9 %d, max %d), the test has %d (p99.9 %d, max %d)",
				what, i, m.TotalCount(), m.ValueAtQuantile(99.9), m.Max(), h.TotalCount(), h.ValueAtQuantile(99.9), h.Max())
		}
	}
}

func mixNames(t *testing.T) (func(seed uint64) scheduler.Commands, []string) {
	t.Helper()
	r, err := scenarios.BuildRecipe("", []scenarios.Custom{
		{Name: "a", Args: []string{"GET", "a"}, Weight: 3}, {Name: "b", Args: []string{"SET", "b", "x"}, Weight: 1}}, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	return func(seed uint64) scheduler.Commands { return scenarios.NewMixStream(m, seed, scenarios.Uniform{}) }, []string{"a", "b"}
}

// finishes fails t when f does not return within a generous bound: for
// work that must not hang whatever the server does.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not finish in 20 s", what)
	}
}

func commandCalls(t *testing.T, s *redistest.Server, cmd string) int {
	t.Helper()
	info, err := s.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	v := info["cmdstat_"+cmd]
	// calls=N,usec=...
	if len(v) < 6 {
		return 0
	}
	end := 6
	for end < len(v) && v[end] != ',' {
		end++
	}
	n, _ := strconv.Atoi(v[6:end])
	return n
}
