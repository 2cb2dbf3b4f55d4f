package report

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/scheduler"
)

// What the external tests of the plots and of the text (package
// report_test, which may import report/plots and report/text) take from
// the internal ones.

// Fixture is fixture with exported fields.
type Fixture struct {
	Name, Mode                                         string
	Rate, Seconds, Base, StallMs, StallEvery, Interval float64
	Seed                                               uint64
}

func Craft(t *testing.T, f Fixture) Test {
	return craft(t, fixture{name: f.Name, mode: f.Mode, rate: f.Rate, seconds: f.Seconds, base: f.Base,
		stallMs: f.StallMs, stallEvery: f.StallEvery, interval: f.Interval, seed: f.Seed})
}

var (
	CraftDoc       = craftDoc
	InputOf        = input
	CompareFixture = compareFixture
	HostileDoc     = hostileDoc
	WriteOutput    = writeOutput
	ReadBack       = readBack
	AsTest         = asTest
	FromResult     = func(r *scheduler.Result) (Test, error) { return fromResult(r, true) }
	JSONObject     = jsonObject
	MustCheck      = mustCheck
	MustSLO        = mustSLO
)

const MaxText = maxText

// StreamRun is a crafted stream run (msgFixture with a lag per interval).
func StreamRun(t testing.TB, rate float64, seconds, subs int, deliverMs float64, lag []int64) MessagesRun {
	return msgFixture{rate: rate, seconds: seconds, subs: subs, deliverMs: deliverMs, lag: lag}.run(t)
}

// Judged is judged, for verdict_hooks_test.go.
type Judged = judged

// SetVerdictHooks sets the hooks through which report's tests reach
// package verdict's rules (see parseSLOHook).
func SetVerdictHooks(parse func(string, time.Duration) (any, error), check func(any, *Test) (*SLOResult, error),
	judge func(*Test) Judged, record func(*Test, any) (Judged, error)) {
	parseSLOHook = func(spec string, w time.Duration) (sloSpec, error) { return parse(spec, w) }
	checkHook = func(s sloSpec, t *Test) (*SLOResult, error) { return check(s, t) }
	judgeHook = judge
	recordHook = func(t *Test, s sloSpec) (judged, error) { return record(t, s) }
}

// PercentileStatsCI are a histogram's response percentiles with their
// intervals, from runs or else from the intervals' series.
func PercentileStatsCI(h *hdrhistogram.Histogram, runs []*hdrhistogram.Histogram, ivs []scheduler.Interval) []Percentile {
	return percentileStats(h, true, ciSource{runs: runs, intervals: ivs})
}

// WithResponse is a test of percentiles ps over the response histogram h.
func WithResponse(ps []Percentile, h *hdrhistogram.Histogram) *Test {
	return &Test{ResponsePercentiles: ps, fig: &figures{response: h}}
}

// ForgetFacts drops t's facts, so that the next use rebuilds them from
// its JSON.
func ForgetFacts(t *Test) { t.fig = nil }

// LossyRun is a crafted pubsub run whose every receiver lost lost
// messages (msgFixture).
func LossyRun(t testing.TB, rate float64, seconds, subs int, deliverMs float64, lost uint64) MessagesRun {
	return msgFixture{rate: rate, seconds: seconds, subs: subs, deliverMs: deliverMs, lost: lost}.run(t)
}

// EncodeHist is encodeHist: h's encoding as the JSON holds it.
var EncodeHist = encodeHist
