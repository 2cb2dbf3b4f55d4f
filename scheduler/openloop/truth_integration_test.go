package openloop

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestResponseTracksTheTruth runs an open timeline against the
// timestamping sink (in a process of its own) and compares what pacer measured with what the sink
// saw: pacer's response time counts from the intended send to the
// reply's kernel arrival, the truth from the intended send to the sink's
// write of the reply. Timing targets (p50 within 15 µs) are measured by
// bench/truth on a quiet machine; this test holds what noise cannot
// flip: no response is below the truth (a reply arrives after it is
// written), the median is within a millisecond of it, and the first
// requests of the run leave on time (the first 100 requests'
// send lag is no worse than the run's p99, give or take a millisecond of
// noise; the defect it guards against sent them 4–5 ms late at once). A
// run that starts late is run again, twice at most: one host hiccup
// delays one run's start, the defect delayed every run's.
func TestResponseTracksTheTruth(t *testing.T) {
	testrun.SkipShort(t, "a 2 s run against the sink")
	testrun.SkipRace(t, "it slows the generator by milliseconds: the median it holds to the truth would measure it")
	rate := timeline.RatePerSecond(10000)
	tl := timeline.Uniform{Rate: rate}
	run := func() (*sink.Child, *scheduler.Result) {
		s, err := sink.StartChild(os.Args[0], nil, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s, runOpen(t, drivertest.Dial(t, s.Addr(), 10, 0), &sink.Indexed{}, Config{
			Timeline: tl, Rate: rate, Duration: 2 * time.Second, Pacing: scheduler.Precise,
			Interval: 10 * time.Millisecond, // the first interval: the first 100 requests
		})
	}
	s, res := run()
	n := int(res.Counts.Scheduled)
	if res.Counts.Completed != uint64(n) {
		t.Fatalf("counts %+v", res.Counts)
	}
	records, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	truth := sink.TruthOf(records, n)
	trueResp, atSink := histo.New(), make([]int64, n)
	for i := range n {
		intended := res.T0 + tl.Offset(uint64(i))
		if truth.Replied[i] == 0 {
			t.Fatalf("request %d never reached the sink", i)
		}
		_ = trueResp.RecordValue(truth.Replied[i] - intended)
		atSink[i] = truth.Arrived[i] - intended
	}
	got, want := res.Response.ValueAtQuantile(50), trueResp.ValueAtQuantile(50)
	t.Logf("response p50 %.1f µs, truth %.1f µs; p99 %.1f µs, truth %.1f µs; receive clock %s",
		float64(got)/1e3, float64(want)/1e3, float64(res.Response.ValueAtQuantile(99))/1e3, float64(trueResp.ValueAtQuantile(99))/1e3, res.ReceiveClock)
	if res.Response.Min() < trueResp.Min()-int64(time.Microsecond) {
		t.Errorf("a response of %d ns below the truth's least, %d ns", res.Response.Min(), trueResp.Min())
	}
	if d := got - want; d < -int64(time.Microsecond) || d > int64(time.Millisecond) {
		t.Errorf("response p50 %d ns against the truth's %d ns", got, want)
	}
	// The first 100 requests leave on time: their send lag (the first
	// interval's) against the run's p99. One host hiccup of 2–3 ms at the
	// start (this VM's p99.9 when idle) makes one run late; the defect
	// made every run late, so a late start is run again, twice at most.
	for attempt := 1; ; attempt++ {
		late := lateStart(t, res)
		if late == "" {
			break
		}
		if attempt == 3 {
			t.Errorf("%s, in 3 runs of 3", late)
			break
		}
		t.Logf("%s: once is the host's noise, run again", late)
		s, res = run()
		if _, err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// At the sink, the first reads of a connection can be late (the sink
	// is a child process that just accepted it) and take several commands
	// at once, stamped with the last one's arrival: logged, not judged.
	all := slices.Clone(atSink)
	slices.Sort(all)
	p99 := all[len(all)*99/100]
	firstAtSink := slices.Clone(atSink[:100])
	slices.Sort(firstAtSink)
	t.Logf("at the sink: the first 100 requests p90 %.3f ms after their intended time, the run's p99 %.3f ms",
		float64(firstAtSink[90])/1e6, float64(p99)/1e6)
}

// lateStart says how a run's first 100 requests (its first interval) left
// later than its send lag p99, give or take a millisecond; "" when they
// did not.
func lateStart(t *testing.T, res *scheduler.Result) string {
	t.Helper()
	first, runP99 := res.Intervals[0].Lag.Summary, float64(res.Lag.ValueAtQuantile(99))/1e6
	t.Logf("first 100 requests: send lag p90 %.3f ms, max %.3f ms; the run's p99 %.3f ms", first.P90, first.Max, runP99)
	if res.Intervals[0].Counts.Sent == 0 || first.P90 > runP99+1 {
		return fmt.Sprintf("the first interval sent %d requests with a send lag p90 of %.3f ms: the run's p99 is %.3f ms",
			res.Intervals[0].Counts.Sent, first.P90, runP99)
	}
	return ""
}
