package pubsub

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// config is a run of n messages at rate over k channels to n subscribers.
func config(rate float64, msgs uint64, k, subs int) Config {
	r := timeline.RatePerSecond(rate)
	return Config{Name: "test", Channels: k, Subscribers: subs, Prefix: DefaultPrefix, Size: 64, Publishers: 2,
		Timeline: timeline.Uniform{Rate: r}, Open: openloop.Config{Rate: r, Requests: msgs, HiccupInterval: -1, Interval: 100 * time.Millisecond}}
}

// TestPubSubEmbedded: every message reaches every subscriber of its
// channel, once, and PUBLISH's replies count them.
func TestPubSubEmbedded(t *testing.T) {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	for _, c := range []struct {
		name              string
		k, subs           int
		patterns, sharded bool
	}{{"one channel", 1, 4, false, false}, {"patterns", 3, 6, true, false}, {"sharded, fewer subscribers than channels", 5, 2, false, true}} {
		cfg := config(2000, 600, c.k, c.subs)
		cfg.Patterns, cfg.Sharded = c.patterns, c.sharded
		out, err := Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := out.Open
		m := s.Messages
		want := uint64(0)
		for ch := range c.k {
			sent := uint64(600 / c.k)
			if ch < 600%c.k {
				sent++
			}
			want += sent * uint64(messages.FanOut(ch, c.subs, c.k))
		}
		if s.Published != 600 || m.Expected != want || m.Delivered != want || m.Lost != 0 || m.Duplicates != 0 || m.Foreign != 0 {
			t.Errorf("%s: published %d, expected %d delivered %d lost %d dups %d foreign %d; want %d", c.name, s.Published, m.Expected, m.Delivered, m.Lost, m.Duplicates, m.Foreign, want)
		}
		if s.Receivers.Replies != 600 || s.Receivers.Sum != want {
			t.Errorf("%s: PUBLISH replies %+v, want 600 summing to %d", c.name, s.Receivers, want)
		}
		if d := histo.Summarize(m.Delivery); d.Count != int64(want) || d.Max > 1000 {
			t.Errorf("%s: delivery latency %+v", c.name, d)
		}
		var ivs uint64
		for _, iv := range m.Intervals {
			ivs += iv.Delivered
		}
		if ivs != want || len(m.Receivers) != c.subs {
			t.Errorf("%s: intervals hold %d deliveries of %d; %d receivers", c.name, ivs, want, len(m.Receivers))
		}
	}
}

// TestStallShowsFromTheIntendedTime: the embedded target frozen 100 ms
// every 300 ms: the messages published into a stall are delivered when it
// ends, and their delivery latency counts from when they were meant to
// go; the closed publisher, which waits for its replies, sends none
// during a stall, so its messages hide it.
func TestStallShowsFromTheIntendedTime(t *testing.T) {
	testrun.SkipShort(t, "runs two publishers against a stalling target for about 2 s")
	testrun.SkipRace(t, "judges delivery latencies against the stalls")
	srv := embedded.MustStart(embedded.Config{Faults: embedded.Faults{Stall: 100 * time.Millisecond, Every: 300 * time.Millisecond}})
	defer srv.Close()
	cfg := config(2000, 0, 1, 3)
	cfg.Open.Requests, cfg.Open.Duration = 0, 900*time.Millisecond
	cfg.Closed, cfg.ClosedRate = true, timeline.RatePerSecond(2000)
	out, err := Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	open, closed := histo.Summarize(out.Open.Messages.Delivery), histo.Summarize(out.Closed.Messages.Delivery)
	// A third of the time is stalled: the open p99 is near the stall's
	// length.
	if open.P99 < 60 {
		t.Errorf("open delivery p99 %.1f ms: want the 100 ms stalls", open.P99)
	}
	// A third of the open messages are intended in a stall; the closed
	// ones that wait for one are the few each connection had in flight.
	if closed.P90 > open.P90/3 {
		t.Errorf("closed delivery p90 %.1f ms against open %.1f ms: the closed publisher should hide the stalls", closed.P90, open.P90)
	}
	if out.Open.Messages.Lost != 0 || out.Closed.Messages.Lost != 0 {
		t.Errorf("lost %d and %d", out.Open.Messages.Lost, out.Closed.Messages.Lost)
	}
}

// TestPubSubRedis: against redis-server, with RESP3 subscribers too.
func TestPubSubRedis(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server")
	rs := redistest.Start(t)
	for _, resp3 := range []bool{false, true} {
		env := experiment.InProcessEnv(rs.Addr)
		env.InProcess = false
		env.Target.Options.RESP3 = resp3
		cfg := config(5000, 2000, 2, 5)
		out, err := Run(context.Background(), env, cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := out.Open.Messages
		if m.Expected != 5000 || m.Delivered != 5000 || m.Lost != 0 || out.Open.Receivers.Sum != 5000 {
			t.Errorf("RESP3 %v: expected %d delivered %d lost %d receivers %+v", resp3, m.Expected, m.Delivered, m.Lost, out.Open.Receivers)
		}
		if m.Stamped < m.Reads*9/10 {
			t.Errorf("RESP3 %v: %d of %d deliveries carried a kernel timestamp", resp3, m.Stamped, m.Reads)
		}
	}
}

// TestPubSubRedisLongForeignMessage: a message longer than subscribers
// reading on the hub hold whole (300 KiB, published by someone else
// mid-run) is read by the subscriber's own goroutine from then on:
// counted as foreign by each subscriber, and nothing of the run's is lost.
func TestPubSubRedisLongForeignMessage(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server")
	left := hubLeaves.Load()
	m := hubRunWith(t, "PUBLISH", DefaultPrefix+"0", strings.Repeat("x", 300<<10))
	if want := uint64(2000 * hubMinMembers); m.Expected != want || m.Delivered != want || m.Lost != 0 || m.Foreign != hubMinMembers {
		t.Errorf("expected %d delivered %d lost %d foreign %d; want %d delivered and the long message foreign to each of %d", m.Expected, m.Delivered, m.Lost, m.Foreign, want, hubMinMembers)
	}
	if n := hubLeaves.Load() - left; runtime.GOOS == "linux" && n != hubMinMembers {
		t.Errorf("%d subscribers left the hub, want %d", n, hubMinMembers)
	}
}

// TestPubSubRedisKilledSubscribers: the server closes the subscribers
// reading on the hub mid-run (CLIENT KILL TYPE pubsub): each end is an
// event with what it had and what it missed, the messages after it are
// lost, and the run ends on time.
func TestPubSubRedisKilledSubscribers(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server")
	start := time.Now()
	m := hubRunWith(t, "CLIENT", "KILL", "TYPE", "pubsub")
	if len(m.Events) != hubMinMembers || m.Lost == 0 || m.Delivered+m.Lost != m.Expected {
		t.Fatalf("%d events, delivered %d + lost %d of %d; want each of %d subscribers ended, the rest lost", len(m.Events), m.Delivered, m.Lost, m.Expected, hubMinMembers)
	}
	for _, e := range m.Events {
		if e.Missed == 0 || e.Delivered == 0 || e.At <= 0 {
			t.Errorf("event %+v: want what it had and what it missed", e)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v after its subscribers ended", d)
	}
}

// hubRunWith runs 2000 messages at 2000/s to one channel of hubMinMembers
// subscribers (who read on a hub) against a redis-server, which is sent
// the command args 300 ms into the run, and returns the run's messages.
func hubRunWith(t *testing.T, args ...string) *messages.Result {
	t.Helper()
	rs := redistest.Start(t)
	env := experiment.InProcessEnv(rs.Addr)
	env.InProcess = false
	go func() {
		time.Sleep(300 * time.Millisecond)
		if _, err := rs.Do(args...); err != nil {
			t.Error(err)
		}
	}()
	out, err := Run(context.Background(), env, config(2000, 2000, 1, hubMinMembers))
	if err != nil {
		t.Fatal(err)
	}
	return out.Open.Messages
}
