package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/scheduler"
)

// metricsFlags are --metrics-addr and what shapes the endpoint.
func metricsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "metrics-addr", Usage: "serve live Prometheus/OpenMetrics metrics at http://`HOST:PORT`/metrics while the command runs, e.g. 127.0.0.1:9464", DefaultText: "off", Category: catOutput},
		&cli.StringFlag{Name: "metrics-buckets", Usage: "upper bounds of the metrics' latency histograms: a `LIST` of durations, e.g. 1ms,2ms,5ms,10ms (at most 200)", DefaultText: "10 per decade from 50us to 1s, 1-2-5 around: 49 bounds", Category: catOutput},
		&cli.DurationFlag{Name: "metrics-linger", Usage: "keep serving the metrics for `DURATION` after the last test, so the last scrape sees the final counts (Ctrl-C ends it sooner)", DefaultText: "0: close at the end", Category: catOutput},
	}
}

// liveMetrics is the --metrics-addr server of a command; a nil
// *liveMetrics (the flag not given) does nothing.
type liveMetrics struct {
	srv    *metrics.Server
	linger time.Duration
	// ctx ends the linger early (the first Ctrl-C cancels it); stderr is
	// where announce and the linger speak.
	ctx    context.Context
	stderr io.Writer
}

// startMetrics binds --metrics-addr, before anything else runs; announce
// says where, once every usage error had its chance (exit 2 prints one
// line). A bad address, a port in use, a bad bucket list or linger are
// usage errors.
func startMetrics(c *cli.Context) (*liveMetrics, error) {
	if !c.IsSet("metrics-addr") {
		for _, name := range []string{"metrics-buckets", "metrics-linger"} {
			if c.IsSet(name) {
				return nil, usageErrorf("--%s needs --metrics-addr", name)
			}
		}
		return nil, nil
	}
	addr := c.String("metrics-addr")
	if err := metrics.CheckAddr(addr); err != nil {
		return nil, usageErrorf("--metrics-addr %q: %v", addr, err)
	}
	cfg := metrics.Config{Addr: addr}
	if c.IsSet("metrics-buckets") {
		b, err := metrics.ParseBuckets(c.String("metrics-buckets"))
		if err != nil {
			return nil, usageErrorf("--metrics-buckets: %v", err)
		}
		cfg.Buckets = b
	}
	linger := c.Duration("metrics-linger")
	if linger < 0 {
		return nil, usageErrorf("--metrics-linger %s: want a duration of 0 or more", linger)
	}
	srv, err := metrics.Listen(cfg)
	switch {
	case errors.Is(err, metrics.ErrAddrInUse):
		return nil, usageErrorf("--metrics-addr %s: the port is in use by another process: choose another port", addr)
	case err != nil:
		return nil, usageErrorf("--metrics-addr %s: cannot listen: %v", addr, err)
	}
	return &liveMetrics{srv: srv, linger: linger, ctx: c.Context, stderr: c.App.ErrWriter}, nil
}

// announce says on stderr where the metrics are served, and warns when
// other machines can reach them; nil-safe.
func (m *liveMetrics) announce(stderr io.Writer) {
	if m == nil {
		return
	}
	m.stderr = stderr
	fmt.Fprintf(stderr, "metrics on http://%s%s\n", m.srv.Addr(), metrics.Path)
	if !m.srv.Loopback() {
		fmt.Fprintf(stderr, "pacer: warning: --metrics-addr %s is not a loopback address: other machines can read the metrics (test names, the target's address)\n", m.srv.Addr())
	}
}

// scope labels the tests to come with the target's address (never its
// password: the address is host:port, a unix socket's path, or a cluster's
// seed) and the shard; nil-safe.
func (m *liveMetrics) scope(o conn.Options, p *scheduler.Placement) {
	if m == nil {
		return
	}
	shard := ""
	if p.Sharded() {
		shard = strconv.Itoa(p.K) + "/" + strconv.Itoa(p.N)
	}
	m.srv.Collector.SetScope(o.Addr, shard)
}

// close stops serving, after --metrics-linger when a test was served and
// the command was not interrupted; nil-safe.
func (m *liveMetrics) close() {
	if m == nil {
		return
	}
	if m.linger > 0 && m.ctx.Err() == nil && m.srv.Collector.Watched() {
		fmt.Fprintf(m.stderr, "pacer: serving the final metrics for %s (--metrics-linger; Ctrl-C ends it)\n", m.linger)
		t := time.NewTimer(m.linger)
		select {
		case <-t.C:
		case <-m.ctx.Done():
			t.Stop()
		}
	}
	m.srv.Close()
}

// hook exposes a test under the labels test and mode: it returns the
// OnStart to give the scheduler (which then calls onStart, if any) and the
// end to call once the run has returned.
func (m *liveMetrics) hook(test, mode string, onStart func(*scheduler.Live)) (func(*scheduler.Live), func()) {
	if m == nil {
		return onStart, func() {}
	}
	end := func() {}
	return func(l *scheduler.Live) {
			end = m.srv.Collector.Watch(test, mode, l)
			if onStart != nil {
				onStart(l)
			}
		}, func() {
			end()
		}
}
