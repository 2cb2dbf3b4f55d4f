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
		&cli.StringFlag{Name: "metrics-buckets", Usage: "upper bounds of the metrics' latency histograms: a `LIST` of durations, e.g. 1ms,2ms,5ms,10ms (at most 200)", DefaultText: "49 bounds from 10us to 10s, 10 per decade from 50us to 1s", Category: catOutput},
		&cli.DurationFlag{Name: "metrics-linger", Usage: "keep serving the metrics for `DURATION` after the last test, so the last scrape sees the final counts (Ctrl-C ends it sooner)", DefaultText: "0: close at the end", Category: catOutput},
	}
}

// liveMetrics is the --metrics-addr server of a command; nil (the flag
// not given) serves nothing, and its Hook, SetScope, Linger and Close do
// nothing.
type liveMetrics = metrics.Exporter

// startMetrics binds --metrics-addr, before anything else runs;
// announceMetrics says where, once every usage error had its chance
// (exit 2 prints one line). A bad address, a port in use, a bad bucket
// list or linger are usage errors.
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
	cfg := metrics.Config{Addr: addr, Linger: c.Duration("metrics-linger")}
	if cfg.Linger < 0 {
		return nil, usageErrorf("--metrics-linger %s: want a duration of 0 or more", cfg.Linger)
	}
	if c.IsSet("metrics-buckets") {
		b, err := metrics.ParseBuckets(c.String("metrics-buckets"))
		if err != nil {
			return nil, usageErrorf("--metrics-buckets: %v", err)
		}
		cfg.Buckets = b
	}
	srv, err := metrics.Listen(cfg)
	switch {
	case errors.Is(err, metrics.ErrAddrInUse):
		return nil, usageErrorf("--metrics-addr %s: the port is in use by another process: choose another port", addr)
	case err != nil:
		return nil, usageErrorf("--metrics-addr %s: cannot listen: %v", addr, err)
	}
	return srv, nil
}

// announceMetrics says on stderr where the metrics are served, and warns
// when other machines can reach them (nothing without them).
func announceMetrics(stderr io.Writer, m *liveMetrics) {
	if m == nil {
		return
	}
	fmt.Fprintf(stderr, "metrics on http://%s%s\n", m.Addr(), metrics.Path)
	if !m.Loopback() {
		fmt.Fprintf(stderr, "pacer: warning: --metrics-addr %s is not a loopback address: other machines can read the metrics (test names, the target's address)\n", m.Addr())
	}
}

// scopeMetrics labels the tests to come with the target's address (never
// its password: the address is host:port, a unix socket's path, or a
// cluster's seed) and the shard (K/N; none unsharded).
func scopeMetrics(m *liveMetrics, o conn.Options, p *scheduler.Placement) {
	shard := ""
	if p.Sharded() {
		shard = strconv.Itoa(p.K) + "/" + strconv.Itoa(p.N)
	}
	m.SetScope(o.Addr, shard)
}

// closeMetrics stops serving, after --metrics-linger (saying so on
// stderr) when a test was served and ctx, the command's, was not
// interrupted.
func closeMetrics(ctx context.Context, stderr io.Writer, m *liveMetrics) {
	m.Linger(ctx, func(d time.Duration) {
		fmt.Fprintf(stderr, "pacer: serving the final metrics for %s (--metrics-linger; Ctrl-C ends it)\n", d)
	})
	m.Close()
}
