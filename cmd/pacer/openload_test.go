package main

import (
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/verdict"
)

// openLoadOf parses args with the open loop's load flags (all of them, or
// without --arrival, --max-inflight and --max-backlog, as compare and
// replay have them).
func openLoadOf(t *testing.T, all bool, conns int, slo string, args ...string) (experiment.OpenLoad, error) {
	t.Helper()
	flags := []cli.Flag{pacingFlag(), maxBufferFlag(), drainFlag(), timeoutFlag(), &cli.DurationFlag{Name: "lag-limit"}}
	if all {
		flags = append(flags, arrivalFlag(), maxInflightFlag(), &cli.DurationFlag{Name: "max-backlog", Value: openloop.DefaultMaxBacklog})
	}
	var s verdict.SLO
	if slo != "" {
		var err error
		if s, err = verdict.ParseSLO(slo); err != nil {
			t.Fatal(err)
		}
	}
	var l experiment.OpenLoad
	var perr error
	app := &cli.App{Commands: []*cli.Command{{Name: "x", Flags: flags, Action: func(c *cli.Context) error {
		l, perr = parseOpenLoad(c, conns, s)
		return nil
	}}}}
	if err := app.Run(append([]string{"pacer", "x"}, args...)); err != nil {
		t.Fatal(err)
	}
	return l, perr
}

func TestParseOpenLoad(t *testing.T) {
	t.Parallel()
	l, err := openLoadOf(t, true, 10, "")
	if err != nil || l.Arrival != "uniform" || l.Pacing != scheduler.Auto || l.MaxInflight < 1 || l.MaxBuffer < 1 ||
		l.Drain != scheduler.DefaultDrain || l.LagLimit != scheduler.DefaultLagLimit(scheduler.Auto) || l.Timeout != 0 ||
		l.Backlog != openloop.DefaultMaxBacklog {
		t.Errorf("defaults: %+v, %v", l, err)
	}
	if l, err = openLoadOf(t, false, 10, "p99<=1ms", "--drain", "0s"); err != nil || l.Arrival != "" || l.MaxInflight != 0 ||
		l.Backlog != 0 || l.Drain != time.Nanosecond || l.LagLimit != 100*time.Microsecond {
		t.Errorf("without arrival, max-inflight and max-backlog, a zero drain and an SLO: %+v, %v", l, err)
	}
	if l, err = openLoadOf(t, true, 10, "p99<=1ms", "--lag-limit", "3ms", "--pacing", "coarse"); err != nil || l.LagLimit != 3*time.Millisecond {
		t.Errorf("--lag-limit given: %+v, %v", l, err)
	}
	if o := l.Open(time.Second); o.Pacing != scheduler.Coarse || o.LagLimit != 3*time.Millisecond || o.Interval != time.Second || o.MaxBacklog != l.Backlog {
		t.Errorf("open: %+v", o)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--arrival", "x"}, `--arrival "x"`},
		{[]string{"--max-inflight", "0"}, "--max-inflight 0"},
		{[]string{"--max-buffer", "0"}, `--max-buffer "0"`},
		{[]string{"--pacing", "x"}, `--pacing "x"`},
		{[]string{"--drain", "-1s"}, "--drain -1s"},
		{[]string{"--lag-limit", "0s"}, "--lag-limit 0s"},
		{[]string{"--timeout", "0s"}, "--timeout 0s"},
		{[]string{"--max-backlog", "0s"}, "--max-backlog 0s"},
	} {
		if _, err := openLoadOf(t, true, 10, "", tc.args...); err == nil || !strings.Contains(message(err), tc.want) || !usage.Is(err) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := openLoadOf(t, true, maxConnections, "", "--max-inflight", "1000000"); err == nil || !strings.Contains(err.Error(), "of in-flight entries") {
		t.Errorf("the FIFO budget: %v", err)
	}
}
