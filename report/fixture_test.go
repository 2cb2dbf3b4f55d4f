package report

import (
	"testing"
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

// craft builds the test a run of f would have written (Synthetic).
func craft(t *testing.T, f fixture) Test {
	t.Helper()
	test, err := Synthetic(SyntheticRun{Name: f.name, Mode: f.mode, Rate: f.rate, Seconds: f.seconds, Base: f.base,
		StallMs: f.stallMs, StallEvery: f.stallEvery, Interval: f.interval, Seed: f.seed})
	if err != nil {
		t.Fatal(err)
	}
	return test
}

// craftDoc wraps tests in a document.
func craftDoc(mode string, tests ...Test) *Document { return SyntheticDocument(mode, tests...) }

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
