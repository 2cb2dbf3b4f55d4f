package report

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// fixture describes a synthetic test: requests at rate for seconds, a
// service time around base ms, and a stall of stallMs every stallEvery
// seconds (0: none) during which replies wait for the stall's end.
type fixture struct {
	name          string
	mode          string // open or closed
	rate, seconds float64
	base          float64
	stallMs       float64
	stallEvery    float64
	interval      float64
	seed          uint64
}

// craft builds the test a run of f would have written, with its interval
// series: samples recorded into histo.New() histograms and encoded with
// histo.Encode, the way fromResult does.
func craft(t *testing.T, f fixture) Test {
	t.Helper()
	rng := rand.New(rand.NewPCG(f.seed, 1))
	n := int(f.rate * f.seconds)
	nIv := int(math.Ceil(f.seconds / f.interval))
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
		at := float64(i) / f.rate
		serv := f.base * (0.6 + 0.8*rng.Float64())
		if rng.Float64() < 0.01 {
			serv *= 5
		}
		wait := 0.0
		if f.stallEvery > 0 {
			phase := math.Mod(at, f.stallEvery)
			stallAt := f.stallEvery / 2
			if phase >= stallAt && phase < stallAt+f.stallMs/1000 {
				wait = (stallAt+f.stallMs/1000-phase)*1000 + 0.01
			}
		}
		resp := wait + serv
		lag := 0.005 + 0.01*rng.Float64()
		servRec := serv
		if f.mode == "open" {
			servRec = serv + wait*0.2
		}
		reply := at + resp/1000
		k := min(int(reply/f.interval), nIv-1)
		for _, a := range []*acc{total, ivs[k]} {
			_ = a.resp.RecordValue(int64(resp * 1e6))
			_ = a.serv.RecordValue(int64(servRec * 1e6))
			_ = a.lag.RecordValue(int64(lag * 1e6))
			a.counts.Completed++
			a.counts.Sent++
		}
		ks := min(int(at/f.interval), nIv-1)
		total.counts.Scheduled++
		ivs[ks].counts.Scheduled++
	}
	enc := func(h *hdrhistogram.Histogram) string {
		s, err := histo.Encode(h)
		if err != nil {
			t.Fatal(err)
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
		Name: f.name, Mode: f.mode, DurationS: f.seconds, Counts: total.counts,
		AchievedRate: float64(total.counts.Completed) / f.seconds,
		Latencies: Latencies{ResponseMs: sum(total.resp), ServiceMs: sum(total.serv),
			Histograms: Histograms{Response: enc(total.resp), Service: enc(total.serv)}},
		Errors: map[string]uint64{}, Verdict: VerdictOK, VerdictReason: "crafted",
		Connections: 10, IntervalS: f.interval,
	}
	if f.mode == "open" {
		r := f.rate
		test.TargetRate = &r
		test.SendLagMs = sum(total.lag)
		l := enc(total.lag)
		test.Histograms.SendLag = &l
		test.Arrival, test.Pacing = "uniform", "precise"
	}
	for k, a := range ivs {
		iv := Interval{
			StartS: float64(k) * f.interval, DurationS: math.Min(f.interval, f.seconds-float64(k)*f.interval),
			Counts: scheduler.Counts{Scheduled: a.counts.Scheduled, Sent: a.counts.Sent, Completed: a.counts.Completed},
			Latencies: Latencies{ResponseMs: sum(a.resp), ServiceMs: sum(a.serv),
				Histograms: Histograms{Response: enc(a.resp), Service: enc(a.serv)}},
		}
		if f.mode == "open" {
			iv.SendLagMs = sum(a.lag)
			l := enc(a.lag)
			iv.Histograms.SendLag = &l
		}
		test.Intervals = append(test.Intervals, iv)
	}
	return test
}

// craftDoc wraps tests in a document.
func craftDoc(mode string, tests ...Test) *Document {
	return &Document{Schema: Schema, Mode: mode, Tool: Tool{Name: "pacer", Version: "test"},
		StartedAt: "2025-01-01T00:00:00Z", Config: map[string]any{"connections": 10, "seed": 7}, Tests: tests}
}

// input reads doc back as pacer report would.
func input(t *testing.T, label string, doc *Document) Input {
	t.Helper()
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadInput(label, b)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// compareFixture is a compare-like document: a closed loop and two open
// loops, against a server that stalls 100 ms every second.
func compareFixture(t *testing.T) *Document {
	return craftDoc("mixed",
		craft(t, fixture{name: "GET (closed loop)", mode: "closed", rate: 8000, seconds: 3, base: 0.3, stallMs: 100, stallEvery: 1, interval: 0.1, seed: 1}),
		craft(t, fixture{name: "GET (open loop at 4000 req/s)", mode: "open", rate: 4000, seconds: 3, base: 0.1, stallMs: 100, stallEvery: 1, interval: 0.1, seed: 2}),
		craft(t, fixture{name: "GET (open loop at 6000 req/s)", mode: "open", rate: 6000, seconds: 3, base: 0.1, stallMs: 100, stallEvery: 1, interval: 0.1, seed: 3}),
	)
}
