package openloop

import (
	"testing"

	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

func stream(t *testing.T, title string, keyspace uint64) *scenarios.Stream {
	t.Helper()
	tests, err := scenarios.Select(title)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := tests[0].Compile(scenarios.Options{Sizes: scenarios.FixedSize(3), Keyspace: keyspace}, false)
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.NewStream(tpl, 1)
}

func TestOpenCountsMatchServer(t *testing.T) {
	// The three pacings run side by side, a server each: 6,000 requests a
	// second in all leave a 2-core machine mostly idle, so each still
	// achieves its rate; no other test runs beside them.
	for _, pacing := range []scheduler.Pacing{scheduler.Precise, scheduler.Coarse, scheduler.Auto} {
		t.Run(pacing.String(), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			rate := timeline.RatePerSecond(2000)
			res := runOpen(t, drivertest.Dial(t, srv.Addr, 8, 0), stream(t, "set", 1000), Config{
				Name: "SET", Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Requests: 3000, Pacing: pacing,
			})
			c := res.Counts
			if c.Scheduled != 3000 || c.Completed != 3000 || c.Sent != 3000 || !c.Balanced() {
				t.Fatalf("counts %+v, want 3000 scheduled, sent and completed", c)
			}
			if got := drivertest.CommandCalls(t, srv, "set"); got != 3000 {
				t.Fatalf("server saw %d SETs, want 3000", got)
			}
			if res.Response.TotalCount() != 3000 || res.Lag.TotalCount() != 3000 {
				t.Fatalf("histograms hold %d responses and %d lags", res.Response.TotalCount(), res.Lag.TotalCount())
			}
			// 3000 at 2000/s take 1.5 s: the achieved rate is the target.
			if r := res.AchievedRate(); r < 1900 || r > 2010 {
				t.Fatalf("achieved %.1f/s at a 2000/s target", r)
			}
		})
	}
}
