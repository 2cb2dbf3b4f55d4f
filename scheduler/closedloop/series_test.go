package closedloop

import (
	"context"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/scheduler"
)

// TestClosedIntervalsAddUpToTheTest: the same for the closed loop, with a
// mix, against a server that answers everything.
func TestClosedIntervalsAddUpToTheTest(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.OK)
	cmds, names := drivertest.MixNames(t)
	const d = 50 * time.Millisecond
	res, err := Run(context.Background(), drivertest.Dial(t, srv.Addr, 3, 0), Config{
		Duration: 300 * time.Millisecond, Pipeline: 4, Interval: d, CommandNames: names,
		NewCommands: func(i int) scheduler.Commands { return cmds(uint64(i)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) < 6 || res.Counts.Completed == 0 {
		t.Fatalf("%d intervals, counts %+v", len(res.Intervals), res.Counts)
	}
	drivertest.CheckSeries(t, "closed", res.Intervals, d, res.Counts, [3]*hdrhistogram.Histogram{res.Response, res.Service, nil})
	var bytesOut, bytesIn uint64
	for _, iv := range res.Intervals {
		bytesOut, bytesIn = bytesOut+iv.BytesSent, bytesIn+iv.BytesReceived
	}
	if bytesOut != res.BytesSent || bytesIn != res.BytesReceived || res.BytesSent < res.Counts.Sent*14 || res.BytesReceived < res.Counts.Completed*5 {
		t.Fatalf("bytes: intervals %d out %d in, test %d out %d in, for %d sent", bytesOut, bytesIn, res.BytesSent, res.BytesReceived, res.Counts.Sent)
	}
	for _, c := range res.Commands {
		drivertest.CheckSeries(t, c.Name, c.Intervals, d, c.Counts, [3]*hdrhistogram.Histogram{c.Response, c.Service, nil})
	}
}
