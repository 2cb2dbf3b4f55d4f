package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// TestCompareReading: the one sentence states the rates compared and
// concludes only on trustworthy, comparable runs.
func TestCompareReading(t *testing.T) {
	result := func(mode string, rate float64, p99 time.Duration, completed uint64, verdict string) Run {
		h := histo.NewRecorder()
		for range 100 {
			h.Record(int64(p99))
		}
		r := &scheduler.Result{Mode: mode, Counts: scheduler.Counts{Completed: completed}, Window: time.Second,
			Response: h.Snapshot()}
		if rate > 0 {
			r.TargetRate = timeline.RatePerSecond(rate)
		}
		tt, err := report.NewTest(r, report.TestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tt.Verdict, tt.VerdictReason = verdict, "why"
		return Run{Test: tt}
	}
	const ok, behind = report.VerdictOK, report.VerdictGeneratorBehind
	closed := result("closed", 0, 2*time.Millisecond, 70000, ok)
	for _, tc := range []struct {
		name   string
		closed Run
		open   Run
		says   string
	}{
		{"coordinated omission at a lighter load", closed, result("open", 20000, 90*time.Millisecond, 20000, ok),
			"Closed loop at 70000 req/s (its own pace) against open loop at 20000 req/s (29% of it): the closed-loop p99 (2.001 ms) hides 88.0 ms of queueing, the open loop's response p99 is 90.0 ms — coordinated omission."},
		{"agreement near the closed loop's throughput", closed, result("open", 66500, 2500*time.Microsecond, 66500, ok),
			"(95% of it): response p99 2.501 ms against the closed loop's 2.001 ms — no hidden queueing at this rate."},
		{"too far apart to agree", closed, result("open", 20000, 700*time.Microsecond, 20000, ok),
			"no conclusion, the loads are too far apart to compare"},
		{"open loop over the closed loop's throughput", closed, result("open", 80000, 90*time.Millisecond, 80000, ok),
			"no conclusion, the open loop offered more than the closed loop's throughput"},
		{"open run untrustworthy", closed, result("open", 20000, 90*time.Millisecond, 20000, behind),
			"no conclusion, the open run is inconclusive (generator_behind: why)."},
		{"closed run untrustworthy", result("closed", 0, 2*time.Millisecond, 70000, report.VerdictTargetLost), result("open", 20000, 90*time.Millisecond, 20000, ok),
			"no conclusion, the closed run is inconclusive (target_lost: why)."},
	} {
		got := Reading(tc.closed, tc.open)
		if !strings.Contains(got, tc.says) || strings.Count(got, ".") < 1 {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.says)
		}
	}
}

// asFlag spells an option as cmd/pacer does.
func asFlag(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// TestShardClients: the shards split the closed loop's clients, every
// N-th from the K-th; a shard left none, or a sharded comparison without
// a rate, is a usage error.
func TestShardClients(t *testing.T) {
	for _, c := range []struct {
		conns, k, n int
		rate        bool
		want        int
		err         string
	}{
		{50, 1, 2, true, 25, ""},
		{5, 1, 2, true, 3, ""},
		{5, 2, 2, true, 2, ""},
		{2, 3, 4, true, 0, "--shard 3/4: -c 2 leaves this shard no closed-loop client; give at least -c 4"},
		{50, 1, 2, false, 0, "--shard needs --rate"},
	} {
		got, err := ShardClients(c.conns, c.k, c.n, c.rate)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("-c %d, shard %d/%d: %d, %v; want %d", c.conns, c.k, c.n, got, err, c.want)
		case c.err != "" && (!usage.Is(err) || !strings.Contains(usage.Render(err, asFlag), c.err)):
			t.Errorf("-c %d, shard %d/%d, rate %v: %v; want a usage error with %q", c.conns, c.k, c.n, c.rate, err, c.err)
		}
	}
}
