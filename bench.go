package pacer

import (
	"context"
	"io"

	"github.com/pacer-load/pacer/experiment/bench"
	"github.com/pacer-load/pacer/timeline"
)

// BenchLoad is a closed-loop run, as `pacer bench` (redis-benchmark's
// loop) takes it: Clients connections each send Pipeline requests and
// wait for their replies before sending more, until Requests completed.
// A zero field takes redis-benchmark's default.
type BenchLoad struct {
	// Addr, User, Password, TLS and Cluster are as Load's.
	Load
	// Clients (default 50), Requests (default 100000), Pipeline (default 1).
	Clients, Requests, Pipeline int
}

// Bench runs one closed-loop test (Load.Command or Load.Test, default
// "get") and returns its result: Response counts from each request's
// send, as redis-benchmark's does. Load.Rate, when set, throttles the
// loop as `bench --rate` does.
func Bench(ctx context.Context, b BenchLoad) (*Result, error) {
	l := b.Load.withDefaults()
	if b.Clients == 0 {
		b.Clients = 50
	}
	if b.Requests == 0 {
		b.Requests = 100000
	}
	if b.Pipeline == 0 {
		b.Pipeline = 1
	}
	switch {
	case b.Clients < 1 || b.Clients > 10000:
		return nil, configErr("Clients", "%d: want 1 to 10000", b.Clients)
	case b.Requests < 1:
		return nil, configErr("Requests", "%d: want at least 1", b.Requests)
	case b.Pipeline < 1 || b.Pipeline > 100000:
		return nil, configErr("Pipeline", "%d: want 1 to 100000", b.Pipeline)
	case l.Rate < 0:
		return nil, configErr("Rate", "want 0 (as fast as it goes) or a rate above 0")
	}
	test, err := l.test()
	if err != nil {
		return nil, err
	}
	env, closeEnv := l.env(ctx)
	defer closeEnv()
	cfg := bench.Config{Tests: []bench.Test{{Test: test}}, Clients: b.Clients, Requests: b.Requests, Pipeline: b.Pipeline,
		Interval: l.Interval, Seed: l.Seed, Repeat: 1, Quiet: true, Keep: true, Precision: 3}
	if l.Rate > 0 {
		cfg.Rate = timeline.RatePerSecond(l.Rate)
	}
	res, err := bench.Run(ctx, env, cfg, bench.Output{Out: io.Discard, Err: io.Discard})
	if err != nil {
		return nil, err
	}
	tests, terr := res.Tests()
	if terr != nil {
		return nil, terr
	}
	if len(tests) == 0 {
		if res.Err != nil {
			return nil, res.Err
		}
		return nil, ctx.Err()
	}
	return newResult(&tests[0]), res.Err
}
