package report

import (
	"math"
	"math/rand/v2"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// SyntheticRun describes a synthetic test: requests at Rate for Seconds,
// a service time around Base ms, and a stall of StallMs every StallEvery
// seconds (0: none) during which replies wait for the stall's end; the
// interval series is cut every Interval seconds.
type SyntheticRun struct {
	Name, Mode          string // Mode: open or closed
	Rate, Seconds, Base float64
	StallMs, StallEvery float64
	Interval            float64
	Seed                uint64
}

// Synthetic builds the test a run of f would have written, with its
// interval series: samples recorded into histo.New() histograms and
// encoded with histo.Encode, the way a run's result is. It is for tests,
// examples and demonstrations of the renderers: the same f gives the same
// test.
func Synthetic(f SyntheticRun) (Test, error) {
	rng := rand.New(rand.NewPCG(f.Seed, 1))
	n := int(f.Rate * f.Seconds)
	nIv := int(math.Ceil(f.Seconds / f.Interval))
	type acc struct {
		resp, serv, lag *hdrhistogram.Histogram
		counts          scheduler.Counts
	}
	newAcc := func() *acc { return &acc{resp: histo.New(), serv: histo.New(), lag: histo.New()} }
	total := newAcc()
	ivs := make([]*acc, nIv)
	for i := range ivs {
		ivs[i] = newAcc()
	}
	for i := range n {
		at := float64(i) / f.Rate
		serv := f.Base * (0.6 + 0.8*rng.Float64())
		if rng.Float64() < 0.01 {
			serv *= 5
		}
		wait := 0.0
		if f.StallEvery > 0 {
			phase := math.Mod(at, f.StallEvery)
			stallAt := f.StallEvery / 2
			if phase >= stallAt && phase < stallAt+f.StallMs/1000 {
				wait = (stallAt+f.StallMs/1000-phase)*1000 + 0.01
			}
		}
		resp := wait + serv
		lag := 0.005 + 0.01*rng.Float64()
		servRec := serv
		if f.Mode == "open" {
			servRec = serv + wait*0.2
		}
		reply := at + resp/1000
		k := min(int(reply/f.Interval), nIv-1)
		for _, a := range []*acc{total, ivs[k]} {
			_ = a.resp.RecordValue(int64(resp * 1e6))
			_ = a.serv.RecordValue(int64(servRec * 1e6))
			_ = a.lag.RecordValue(int64(lag * 1e6))
			a.counts.Completed++
			a.counts.Sent++
		}
		ks := min(int(at/f.Interval), nIv-1)
		total.counts.Scheduled++
		ivs[ks].counts.Scheduled++
	}
	var encErr error
	enc := func(h *hdrhistogram.Histogram) string {
		s, err := histo.Encode(h)
		if err != nil && encErr == nil {
			encErr = err
		}
		return s
	}
	sum := func(h *hdrhistogram.Histogram) *histo.Summary {
		s := histo.Summarize(h)
		if s.Count == 0 {
			return nil
		}
		return &s
	}
	test := Test{
		Name: f.Name, Mode: f.Mode, DurationS: f.Seconds, Counts: total.counts,
		AchievedRate: float64(total.counts.Completed) / f.Seconds,
		Latencies: Latencies{ResponseMs: sum(total.resp), ServiceMs: sum(total.serv),
			Histograms: Histograms{Response: enc(total.resp), Service: enc(total.serv)}},
		Errors: map[string]uint64{}, Verdict: VerdictOK, VerdictReason: "crafted",
		Connections: 10, IntervalS: f.Interval,
	}
	if f.Mode == "open" {
		r := f.Rate
		test.TargetRate = &r
		test.SendLagMs = sum(total.lag)
		l := enc(total.lag)
		test.Histograms.SendLag = &l
		test.Arrival, test.Pacing = "uniform", "precise"
	}
	for k, a := range ivs {
		iv := Interval{
			StartS: float64(k) * f.Interval, DurationS: math.Min(f.Interval, f.Seconds-float64(k)*f.Interval),
			Counts: scheduler.Counts{Scheduled: a.counts.Scheduled, Sent: a.counts.Sent, Completed: a.counts.Completed},
			Latencies: Latencies{ResponseMs: sum(a.resp), ServiceMs: sum(a.serv),
				Histograms: Histograms{Response: enc(a.resp), Service: enc(a.serv)}},
		}
		if f.Mode == "open" {
			iv.SendLagMs = sum(a.lag)
			l := enc(a.lag)
			iv.Histograms.SendLag = &l
		}
		test.Intervals = append(test.Intervals, iv)
	}
	return test, encErr
}

// SyntheticDocument wraps tests in a result document of mode.
func SyntheticDocument(mode string, tests ...Test) *Document {
	return &Document{Schema: Schema, Mode: mode, Tool: Tool{Name: "pacer", Version: "test"},
		StartedAt: "2025-01-01T00:00:00Z", Config: map[string]any{"connections": 10, "seed": 7}, Tests: tests}
}
