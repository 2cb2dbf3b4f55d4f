package diff

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// A simulated run, written as pacer writes a result and read back with
// report's own reader, so that the comparison sees what it sees in a
// file: a uniform rate, service times log-normal around a median that
// may differ from run to run (the spread between runs) and be slower
// on one side (a known change).
type process struct {
	rate      int     // requests per second, one interval a second
	intervals int     // intervals per run
	median    float64 // µs
	sigma     float64 // log-sd of a request's time
	runSigma  float64 // log-sd of a run's level
	hiccupUs  float64 // the host hiccup meter's wake-up lateness (µs), 0: not measured
	lagUs     float64 // send lag (µs) each request's response time has beyond its service time
	verdict   string  // the run's verdict ("ok" when empty)
}

// run draws one run as a report test.
func (p process) run(t testing.TB, rng *rand.Rand) report.Test {
	t.Helper()
	level := math.Exp(p.runSigma * rng.NormFloat64())
	all, hic, svcAll := histo.New(), histo.New(), histo.New()
	tt := report.Test{ID: "get", Name: "GET", Mode: "open", Verdict: p.verdict, IntervalS: 1, DurationS: float64(p.intervals)}
	if tt.Verdict == "" {
		tt.Verdict = report.VerdictOK
	}
	rate := float64(p.rate)
	tt.TargetRate = &rate
	for i := range p.intervals {
		h, svc := histo.New(), histo.New()
		for range p.rate {
			sv := int64(1000 * p.median * level * math.Exp(p.sigma*rng.NormFloat64()))
			v := sv + int64(1000*p.lagUs)
			record(t, h, v)
			record(t, all, v)
			record(t, svc, sv)
			record(t, svcAll, sv)
			if p.hiccupUs > 0 {
				record(t, hic, int64(1000*p.hiccupUs*math.Exp(0.05*rng.NormFloat64())))
			}
		}
		c := scheduler.Counts{Scheduled: uint64(p.rate), Sent: uint64(p.rate), Completed: uint64(p.rate)}
		iv := report.Interval{StartS: float64(i), DurationS: 1, Counts: c}
		iv.Histograms.Response, iv.Histograms.Service = encode(t, h), encode(t, svc)
		tt.Intervals = append(tt.Intervals, iv)
		tt.Counts.Scheduled += c.Scheduled
		tt.Counts.Sent += c.Sent
		tt.Counts.Completed += c.Completed
	}
	tt.AchievedRate = float64(tt.Counts.Completed) / tt.DurationS
	tt.Histograms.Response, tt.Histograms.Service = encode(t, all), encode(t, svcAll)
	s := histo.Summarize(all)
	tt.ResponseMs = &s
	if p.hiccupUs > 0 {
		e := encode(t, hic)
		tt.Histograms.Hiccup = &e
	}
	return tt
}

func record(t testing.TB, h *hdrhistogram.Histogram, v int64) {
	if err := h.RecordValue(max(v, 1)); err != nil {
		t.Fatal(err)
	}
}

func encode(t testing.TB, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := histo.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// doc is a result document of the tests; with runs > 1 each is the
// pooled test of its runs (--repeat).
func doc(t testing.TB, config map[string]any, tests ...[]report.Test) *report.Document {
	t.Helper()
	d := &report.Document{Schema: report.Schema, Mode: "open", Tool: report.Tool{Name: "pacer", Version: "test"},
		Config: config, Tests: []report.Test{}}
	for _, runs := range tests {
		if len(runs) == 1 {
			d.Tests = append(d.Tests, runs[0])
			continue
		}
		pooled := runs[0]
		all := histo.New()
		for _, r := range runs {
			h, err := histo.Decode(r.Histograms.Response)
			if err != nil {
				t.Fatal(err)
			}
			all.Merge(h)
		}
		pooled.Histograms.Response = encode(t, all) // service: the first run's, unused
		pooled.Repeats = &report.Repeats{N: len(runs), Runs: runs}
		d.Tests = append(d.Tests, pooled)
	}
	return d
}

// input writes d as a file would hold it and reads it back.
func input(t testing.TB, label string, d *report.Document) report.Input {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.ReadInput(label, b)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// side is one side of the inputs.
func side(in ...report.Input) Side { return Side{Inputs: in} }

// figure returns the named figure of a compared test.
func figure(t testing.TB, tt Test, name string) Figure {
	t.Helper()
	for _, f := range tt.Figures {
		if f.Figure == name {
			return f
		}
	}
	t.Fatalf("%s: no figure %s", tt.Name, name)
	return Figure{}
}

// runs draws n runs of p.
func (p process) runs(t testing.TB, rng *rand.Rand, n int) []report.Test {
	out := make([]report.Test, n)
	for i := range out {
		out[i] = p.run(t, rng)
	}
	return out
}
