package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func config(rate float64, n uint64, streams, groups, consumers int) Config {
	r := timeline.RatePerSecond(rate)
	return Config{Name: "test", Streams: streams, Prefix: DefaultPrefix, Groups: groups, Consumers: consumers, Count: DefaultCount, Block: DefaultBlock,
		Size: 64, Producers: 1, Timeline: timeline.Uniform{Rate: r}, Open: openloop.Config{Rate: r, Requests: n, HiccupInterval: -1, Interval: 100 * time.Millisecond}}
}

// check runs cfg and checks that every entry reached every group once,
// and was acknowledged once.
func check(t *testing.T, env *experiment.Env, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Messages
	n := cfg.Open.Requests
	if res.Added != n || m.Expected != n*uint64(cfg.Groups) || m.Delivered != m.Expected || m.Lost != 0 || res.Redelivered != 0 || res.Acked != m.Delivered {
		var per []string
		for _, r := range m.Receivers {
			per = append(per, fmt.Sprintf("%s %s: %d (stale %d, foreign %d, ended %v)", r.Name, r.Channels, r.Delivered, r.Stale, r.Foreign, r.Ended))
		}
		t.Fatalf("added %d, expected %d delivered %d lost %d redelivered %d acked %d; %v", res.Added, m.Expected, m.Delivered, m.Lost, res.Redelivered, res.Acked, per)
	}
	if d := histo.Summarize(m.Delivery); d.Count != int64(m.Delivered) {
		t.Errorf("delivery latency of %d", d.Count)
	}
	return res
}

// TestStreamEmbedded: every entry reaches one consumer of every group,
// once, and is acknowledged once: one stream, and several with fewer
// consumers than streams.
func TestStreamEmbedded(t *testing.T) {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr())
	check(t, env, config(2000, 800, 1, 2, 3))
	check(t, env, config(2000, 800, 4, 1, 2))
}

// TestStreamRedis: against redis-server, RESP2 and RESP3, with MAXLEN.
func TestStreamRedis(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server")
	rs := redistest.Start(t)
	for _, resp3 := range []bool{false, true} {
		env := experiment.InProcessEnv(rs.Addr)
		env.InProcess = false
		env.Target.Options.RESP3 = resp3
		cfg := config(5000, 3000, 2, 1, 4)
		cfg.MaxLen = 100000
		res := check(t, env, cfg)
		if m := res.Messages; m.Stamped < m.Reads*9/10 {
			t.Errorf("RESP3 %v: %d of %d reads carried a kernel timestamp", resp3, m.Stamped, m.Reads)
		}
	}
}

// TestSlowConsumersFallBehind: consumers that take longer per entry than
// the rate allows leave a lag that grows through the run, interval by
// interval.
func TestSlowConsumersFallBehind(t *testing.T) {
	testrun.SkipShort(t, "runs 1.5 s of entries against slow consumers")
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	cfg := config(2000, 0, 1, 1, 2)
	cfg.Open.Requests, cfg.Open.Duration, cfg.Open.Drain = 0, 1500*time.Millisecond, 200*time.Millisecond
	cfg.ConsumerDelay = 2 * time.Millisecond // 2 consumers: 1000/s of 2000/s
	res, err := Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lags []int64
	for _, iv := range res.Messages.Intervals {
		lags = append(lags, iv.Gauges.Lag)
	}
	if len(lags) < 10 || lags[4] < 200 || lags[12] < lags[4]+400 || res.Messages.Lost == 0 {
		t.Errorf("lag by interval %v, lost %d: want a lag that grows by about 100 entries an interval", lags, res.Messages.Lost)
	}
}
