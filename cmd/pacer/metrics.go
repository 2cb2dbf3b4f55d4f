package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/scheduler"
)

func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-addr", Usage: "serve live Prometheus/OpenMetrics metrics at http://`HOST:PORT`/metrics while the command runs, e.g. 127.0.0.1:9464", DefaultText: "off", Category: catOutput}
}

// liveMetrics is the --metrics-addr server of a command; a nil
// *liveMetrics (the flag not given) does nothing.
type liveMetrics struct {
	srv *metrics.Server
}

// startMetrics binds --metrics-addr, before anything else runs; announce
// says where, once every usage error had its chance (exit 2 prints one
// line). A bad address or a port in use is a usage error.
func startMetrics(c *cli.Context) (*liveMetrics, error) {
	if !c.IsSet("metrics-addr") {
		return nil, nil
	}
	addr := c.String("metrics-addr")
	if err := metrics.CheckAddr(addr); err != nil {
		return nil, usageErrorf("--metrics-addr %q: %v", addr, err)
	}
	srv, err := metrics.Listen(addr)
	switch {
	case errors.Is(err, metrics.ErrAddrInUse):
		return nil, usageErrorf("--metrics-addr %s: the port is in use by another process: choose another port", addr)
	case err != nil:
		return nil, usageErrorf("--metrics-addr %s: cannot listen: %v", addr, err)
	}
	return &liveMetrics{srv: srv}, nil
}

// announce says on stderr where the metrics are served; nil-safe.
func (m *liveMetrics) announce(stderr io.Writer) {
	if m != nil {
		fmt.Fprintf(stderr, "metrics on http://%s%s\n", m.srv.Addr(), metrics.Path)
	}
}

// close stops serving; nil-safe.
func (m *liveMetrics) close() {
	if m != nil {
		m.srv.Close()
	}
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
