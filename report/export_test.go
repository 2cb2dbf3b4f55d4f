package report

import (
	"testing"
	"time"
)

// What the external tests of the plots (package report_test, which may
// import report/plots) take from the internal ones.

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
	DiffFixture    = diffFixture
	WithTopology   = withTopology
	ReadBack       = readBack
	AsTest         = asTest
	MemtierInput   = memtierInput
)

const (
	BenchmarkCSV = benchmarkCSV
	MaxText      = maxText
)

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
