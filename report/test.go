package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
)

// A Test is the report's unit: what every renderer prints, what the SLO
// is checked on and what the trust rule judges, whether it was just
// measured (NewTest) or read back from a document (ReadDocument). Its JSON
// fields are the document's; its figures (below) are what the JSON keeps
// rounded, encoded or not at all, taken exactly from the run for a test
// just measured and rebuilt from the JSON on first use for one read back,
// so the two print through the same code.

// TestOptions are what a command knows of a test besides its result.
type TestOptions struct {
	// ID is the test's stable identifier (get, mix, custom, fill, ...).
	ID string
	// Percentiles adds response_percentiles (run, bench, sweep); CI adds
	// their confidence intervals (--ci).
	Percentiles, CI bool
	// Server is what the server counted during the test (nil: not asked).
	Server *serverinfo.Stats
	// Runs are, for a test pooled from repeated runs, each run's latency
	// (response time; a closed loop's from the send): the percentiles'
	// intervals then hold the spread between them. Nil for one run,
	// whose intervals come from its interval series.
	Runs []*hdrhistogram.Histogram
	// Unwritten is for a test judged and thrown away (a --decide-within
	// look): its histograms are left unencoded, which judging does not
	// read and which takes a third of a look's time.
	Unwritten bool
}

// NewTest makes a run's result into a report test: its JSON form and
// what the server counted. It does not judge it: verdict.NewTest checks
// its SLO and records the trust rule's judgement as its verdict and
// outcome. Nothing writes a verdict back into a scheduler result.
func NewTest(r *scheduler.Result, o TestOptions) (*Test, error) {
	t, err := fromResult(r, !o.Unwritten)
	if err != nil {
		return nil, err
	}
	t.ID = o.ID
	if o.Percentiles || o.CI {
		t.ResponsePercentiles = percentileStats(r.Response, o.CI, ciSource{runs: o.Runs, intervals: r.Intervals, closed: r.Mode == "closed"})
	}
	attachServer(&t, o.Server)
	return &t, nil
}

// attachServer gives a test made from a run (NewTest, NewMessagesTest)
// what the server counted during it (nil: not asked).
func attachServer(t *Test, s *serverinfo.Stats) {
	t.Server = s
	if s != nil {
		for k := range t.Nodes { // a cluster's primaries, each asked on its own
			t.Nodes[k].Server = s.Nodes[t.Nodes[k].Addr]
		}
	}
}

// figures are a test's exact facts beyond its JSON fields.
type figures struct {
	target                      timeline.Rate
	window, sendWindow, blocked time.Duration
	lagLimit, quantum, warmup   time.Duration
	interval                    time.Duration
	heldSent, heldUnsent        uint64
	targetGone                  bool
	// read: rebuilt from a document's JSON, not taken from a run.
	read bool
	// cpu and local are what the client host did, and whether the target
	// was on it.
	cpu       scheduler.HostCPU
	local     bool
	inProcess bool
	// server is the local server process's use of the CPUs (nil: not
	// watched).
	server *scheduler.ServerProcess
	// extension is how a run with a budget to decide in used it (nil:
	// none).
	extension              *scheduler.Extension
	response, service, lag *hdrhistogram.Histogram
	receive, hiccups       *hdrhistogram.Histogram
	// micros is a closed loop's latency as redis-benchmark records it.
	micros    *hdrhistogram.Histogram
	tls       *scheduler.TLSHandshakes
	stages    []timeline.Stage
	commands  []scheduler.CommandResult // in the run's order
	nodes     []*hdrhistogram.Histogram // each node's response time
	intervals []scheduler.Interval
}

// figuresOf takes a run's figures as they are.
func figuresOf(r *scheduler.Result) *figures {
	nodes := make([]*hdrhistogram.Histogram, len(r.Nodes))
	for i, n := range r.Nodes {
		nodes[i] = n.Response
	}
	return &figures{
		target: r.TargetRate, window: r.Window, sendWindow: r.SendWindow, blocked: r.Blocked,
		lagLimit: r.LagLimit, quantum: r.PacingQuantum, warmup: r.Warmup, interval: r.Interval,
		heldSent: r.HeldSent, heldUnsent: r.HeldUnsent, targetGone: r.TargetGone,
		response: r.Response, service: r.Service, lag: r.Lag, receive: r.Receive, hiccups: r.Hiccups, micros: r.Micros, tls: r.TLS,
		stages: r.Stages, commands: r.Commands, nodes: nodes, intervals: r.Intervals,
		cpu: r.CPU, local: r.TargetLocal, inProcess: r.TargetInProcess, server: r.ServerProcess, extension: r.Extension,
	}
}

// figures returns the test's figures, rebuilding them from the JSON for a
// test read back (and keeping them). The commands of a mix come back
// sorted by name (a JSON object has no order); redis-benchmark's
// microsecond histogram is rebuilt from the response histogram (each
// bucket at its lowest value), so a re-rendered closed p50 may differ
// from the printed one by a microsecond.
func (t *Test) figures() (*figures, error) {
	if t.fig != nil {
		return t.fig, nil
	}
	f := &figures{
		window:     exactSeconds(t.DurationS),
		blocked:    exactSeconds(t.BlockedS),
		warmup:     exactSeconds(t.WarmupS),
		interval:   exactSeconds(t.IntervalS),
		heldSent:   t.HeldSent,
		heldUnsent: t.HeldUnsent,
		read:       true,
		server:     serverProcessOf(t.ServerProcess),
		extension:  extensionOf(t.Decide),
	}
	if h := t.Host; h != nil {
		f.local, f.inProcess = h.TargetLocal, h.TargetInProcess
		if h.CPUs > 0 {
			f.cpu = scheduler.HostCPU{Available: true, Seconds: t.DurationS, Busy: h.BusyPct / 100, Steal: h.StealPct / 100, Self: h.PacerCores, CPUs: h.CPUs}
		}
	}
	if t.TargetRate != nil {
		f.target = timeline.RatePerSecond(*t.TargetRate)
	}
	if t.LagLimitMs != nil {
		f.lagLimit = time.Duration(math.Round(*t.LagLimitMs * 1e6))
	}
	if t.PacingQuantumUs != nil {
		f.quantum = time.Duration(math.Round(*t.PacingQuantumUs * 1e3))
	}
	set, err := t.Histograms.decode()
	if err != nil {
		return nil, err
	}
	f.response, f.service, f.lag, f.receive, f.hiccups = set.response, set.service, set.lag, set.receive, set.hiccup
	if t.Mode == "closed" && f.response != nil {
		f.micros = micros(f.response)
	}
	if f.tls, err = t.TLS.result(); err != nil {
		return nil, err
	}
	for _, s := range t.Stages {
		f.stages = append(f.stages, timeline.Stage{Duration: exactSeconds(s.DurationS), Target: timeline.RatePerSecond(s.TargetRate)})
	}
	for _, n := range slices.Sorted(maps.Keys(t.Commands)) {
		c := t.Commands[n]
		cr := scheduler.CommandResult{Name: n, Counts: c.Counts, ErrorCodes: c.Errors}
		cs, err := c.Histograms.decode()
		if err != nil {
			return nil, fmt.Errorf("command %q: %w", n, err)
		}
		cr.Response, cr.Service, cr.Lag, cr.Receive = cs.response, cs.service, cs.lag, cs.receive
		f.commands = append(f.commands, cr)
	}
	for _, n := range t.Nodes {
		h, err := n.response()
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.Addr, err)
		}
		f.nodes = append(f.nodes, h)
	}
	f.intervals = nil // decoded only when asked for (series)
	t.fig = f
	return f, nil
}

// exactSeconds turns seconds as the JSON keeps them into a duration,
// rounded to the nanosecond (the JSON's durations are exact to it).
func exactSeconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// series returns the interval series the SLO's windows are cut from: the
// run's, or rebuilt from the JSON (decoding every interval's histograms,
// so only when asked for).
func (t *Test) series() ([]scheduler.Interval, error) {
	f, err := t.figures()
	if err != nil {
		return nil, err
	}
	if f.intervals != nil || len(t.Intervals) == 0 {
		return f.intervals, nil
	}
	out := make([]scheduler.Interval, 0, len(t.Intervals))
	for _, iv := range t.Intervals {
		s := scheduler.Interval{
			Start: exactSeconds(iv.StartS), Duration: exactSeconds(iv.DurationS), Counts: iv.Counts,
		}
		if iv.ServerProcess != nil {
			u := iv.ServerProcess.usage()
			s.ServerProcess = &u
		}
		var err error
		if s.Response, err = packedOf(iv.Histograms.Response); err != nil {
			return nil, err
		}
		if s.Service, err = packedOf(iv.Histograms.Service); err != nil {
			return nil, err
		}
		if iv.Histograms.SendLag != nil {
			if s.Lag, err = packedOf(*iv.Histograms.SendLag); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	f.intervals = out
	return out, nil
}

// packedOf reads an interval's encoded histogram ("" is empty).
func packedOf(enc string) (histo.Packed, error) {
	if enc == "" {
		return histo.Packed{}, nil
	}
	h, err := DecodeHistogram(enc)
	if err != nil {
		return histo.Packed{}, err
	}
	return histo.Pack(h)
}

// mustFigures is figures for the renderers, whose tests come from NewTest
// or from ReadInput, which checked that they decode.
func (t *Test) mustFigures() *figures {
	f, err := t.figures()
	if err != nil {
		return &figures{}
	}
	return f
}

// achieved is completed requests per second over the measured window,
// exact (AchievedRate is rounded to 3 digits).
func (t *Test) achieved() float64 {
	w := t.mustFigures().window
	if w <= 0 {
		return 0
	}
	return float64(t.Counts.Completed) / w.Seconds()
}

// Exact figures of a test, for what reads tests beyond this package (the
// experiments' tables and conclusions). A test read back gets them from
// its JSON.

// Achieved is completed requests per second over the measured window,
// exact (AchievedRate is rounded to 3 digits).
func (t *Test) Achieved() float64 { return t.achieved() }

// Window is the measured window.
func (t *Test) Window() time.Duration { return t.mustFigures().window }

// Target is the timeline's rate (zero for an unthrottled closed loop).
func (t *Test) Target() timeline.Rate { return t.mustFigures().target }

// LatencyHistograms are the response, service and send-lag histograms
// (nil when absent).
func (t *Test) LatencyHistograms() (response, service, lag *hdrhistogram.Histogram) {
	f := t.mustFigures()
	return f.response, f.service, f.lag
}

// Handshakes are the test's TLS handshakes (nil over plain TCP).
func (t *Test) Handshakes() *scheduler.TLSHandshakes { return t.mustFigures().tls }
