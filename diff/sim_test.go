package diff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
)

// The comparison end to end on simulated results written and read back
// as files: that the statistics of package stats reach the words with
// their units and scales intact. A/A comparisons hold no change in their
// interval about 95% of the time and say worse or better rarely; a known
// change is found. Each test logs its figures.

// tally counts words and intervals holding the truth over trials.
type tally struct {
	n, holds, alarms, worse, same int
}

func (c *tally) add(f Figure, truthPct float64) {
	c.n++
	if len(f.IntervalPct) == 2 && f.IntervalPct[0] != nil && f.IntervalPct[1] != nil &&
		*f.IntervalPct[0] <= truthPct && truthPct <= *f.IntervalPct[1] {
		c.holds++
	}
	switch stats.Word(f.Word) {
	case stats.Worse:
		c.worse++
		c.alarms++
	case stats.Better:
		c.alarms++
	case stats.Same:
		c.same++
	}
}

func (c tally) String() string {
	return fmt.Sprintf("interval holds the truth %.1f%%, worse or better %.1f%%, worse %.1f%%, same %.1f%% of %d",
		pctOf(c.holds, c.n), pctOf(c.alarms, c.n), pctOf(c.worse, c.n), pctOf(c.same, c.n), c.n)
}

func pctOf(a, n int) float64 { return 100 * float64(a) / float64(n) }

// trials compares draws of two sides trials times and tallies p50 and p99.
func trials(t *testing.T, n int, truthPct float64, draw func(rng *rand.Rand) (Side, Side)) map[string]*tally {
	out := map[string]*tally{"p50": {}, "p99": {}}
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		a, b := draw(rng)
		d, err := Compare(a, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range out {
			c.add(figure(t, d.Tests[0], name), truthPct)
		}
	}
	return out
}

// Repeated runs a side, the spread between runs 3%: Welch on the runs'
// logarithms.
func TestRunsAA(t *testing.T) {
	testrun.SkipShort(t, "200 simulated comparisons of 3 runs against 3")
	testrun.SkipRace(t, "single-goroutine arithmetic the race detector only slows: .ci/run runs it without")
	t.Parallel()
	p := process{rate: 1500, intervals: 2, median: 200, sigma: 0.4, runSigma: 0.03}
	got := trials(t, 200, 0, func(rng *rand.Rand) (Side, Side) {
		return side(input(t, "a.json", doc(t, nil, p.runs(t, rng, 3)))), side(input(t, "b.json", doc(t, nil, p.runs(t, rng, 3))))
	})
	for name, c := range got {
		t.Logf("runs, 3 a side, A/A, %s: %s", name, c)
		if r := pctOf(c.holds, c.n); r < 90 || r > 99.5 || pctOf(c.alarms, c.n) > 7 {
			t.Errorf("%s: %s", name, c)
		}
	}
}

// A candidate 30% slower, 3 runs a side: worse at p50 and p99 in at least
// 90% of comparisons, and the interval holds +30% about 95% of the time.
func TestRunsPower(t *testing.T) {
	testrun.SkipShort(t, "200 simulated comparisons of 3 runs against 3")
	testrun.SkipRace(t, "single-goroutine arithmetic the race detector only slows: .ci/run runs it without")
	t.Parallel()
	p := process{rate: 1500, intervals: 2, median: 200, sigma: 0.4, runSigma: 0.03}
	slow := p
	slow.median *= 1.3
	got := trials(t, 200, 30, func(rng *rand.Rand) (Side, Side) {
		return side(input(t, "a.json", doc(t, nil, p.runs(t, rng, 3)))), side(input(t, "b.json", doc(t, nil, slow.runs(t, rng, 3))))
	})
	for name, c := range got {
		t.Logf("runs, 3 a side, +30%%, %s: %s", name, c)
		if pctOf(c.worse, c.n) < 90 || pctOf(c.holds, c.n) < 90 {
			t.Errorf("%s: %s", name, c)
		}
	}
}

// The rounds of an interleaved A/B: each round shares a level (drift, the
// host's load) on both sides, which the pairing cancels.
func TestPairedAA(t *testing.T) {
	testrun.SkipShort(t, "200 simulated interleaved comparisons of 6 rounds")
	testrun.SkipRace(t, "single-goroutine arithmetic the race detector only slows: .ci/run runs it without")
	t.Parallel()
	p := process{rate: 1000, intervals: 2, median: 200, sigma: 0.4}
	got := trials(t, 200, 0, func(rng *rand.Rand) (Side, Side) {
		var a, b []report.Test
		for range 6 {
			round := p
			round.median *= math.Exp(0.1 * rng.NormFloat64()) // 10% between rounds, shared
			a, b = append(a, round.run(t, rng)), append(b, round.run(t, rng))
		}
		cfg := func(s string) map[string]any { return map[string]any{"ab": map[string]any{"session": "x", "side": s}} }
		return side(input(t, "ab.a.json", doc(t, cfg("a"), a))), side(input(t, "ab.b.json", doc(t, cfg("b"), b)))
	})
	for name, c := range got {
		t.Logf("paired, 6 rounds, A/A, %s: %s", name, c)
		if r := pctOf(c.holds, c.n); r < 90 || r > 99.5 || pctOf(c.alarms, c.n) > 7 {
			t.Errorf("%s: %s", name, c)
		}
	}
}

// One run a side of 12 intervals: the block bootstrap of each, combined.
func TestBlocksAA(t *testing.T) {
	testrun.SkipShort(t, "200 simulated comparisons of single runs")
	testrun.SkipRace(t, "single-goroutine arithmetic the race detector only slows: .ci/run runs it without")
	t.Parallel()
	p := process{rate: 1000, intervals: 12, median: 200, sigma: 0.4}
	got := trials(t, 200, 0, func(rng *rand.Rand) (Side, Side) {
		return side(input(t, "a.json", doc(t, nil, p.runs(t, rng, 1)))), side(input(t, "b.json", doc(t, nil, p.runs(t, rng, 1))))
	})
	for name, c := range got {
		t.Logf("blocks, one run of 12 intervals a side, A/A, %s: %s", name, c)
		if r := pctOf(c.holds, c.n); r < 90 || r > 99.5 || pctOf(c.alarms, c.n) > 7 {
			t.Errorf("%s: %s", name, c)
		}
	}
}
