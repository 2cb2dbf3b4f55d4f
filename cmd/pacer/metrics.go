package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/metrics"
)

func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-addr", Usage: "serve live Prometheus/OpenMetrics metrics at http://`HOST:PORT`/metrics while the command runs, e.g. 127.0.0.1:9464", DefaultText: "off", Category: catOutput}
}

// liveMetrics is the --metrics-addr server of a command; nil (the flag
// not given) serves nothing, and its Hook and Close do nothing.
type liveMetrics = metrics.Server

// startMetrics binds --metrics-addr, before anything else runs;
// announceMetrics says where, once every usage error had its chance
// (exit 2 prints one line). A bad address or a port in use is a usage
// error.
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
	return srv, nil
}

// announceMetrics says on stderr where the metrics are served (nothing
// without them).
func announceMetrics(stderr io.Writer, m *liveMetrics) {
	if m != nil {
		fmt.Fprintf(stderr, "metrics on http://%s%s\n", m.Addr(), metrics.Path)
	}
}
