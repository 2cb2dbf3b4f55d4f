package report

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Facts are a test's exact figures beyond its JSON fields, for the rules
// that judge it (package verdict) and what renders it outside this
// package (report/text, report/peers): taken from the run for a test just
// measured, rebuilt from the JSON for one read back, so the two are
// judged and printed through the same code. The histograms are the
// test's own, not copies: read them, never record into them.
type Facts struct {
	// Target is the timeline's rate; Window the measured window,
	// SendWindow the time requests were sent in (zero for a test read
	// back), Blocked how long the target held the timeline back.
	Target                      timeline.Rate
	Window, SendWindow, Blocked time.Duration
	// LagLimit is the send-lag budget, Quantum the pacing's quantum,
	// Warmup the run's warm-up; Interval the interval series' length.
	LagLimit, Quantum, Warmup time.Duration
	Interval                  time.Duration
	// HeldSent and HeldUnsent count the requests the target held back.
	HeldSent, HeldUnsent uint64
	// TargetGone: every connection was lost and none came back.
	TargetGone bool
	// Read: rebuilt from a document's JSON, not taken from a run.
	Read bool
	// CPU is what the client host's CPUs did; Local and InProcess say
	// whether the target ran on it, and in pacer's process.
	CPU              scheduler.HostCPU
	Local, InProcess bool
	// Server is what the server's own process did during the test.
	Server    *scheduler.ServerProcess
	Extension *scheduler.Extension
	// The latency histograms (nil when absent).
	Response, Service, Lag, Receive, Hiccups *hdrhistogram.Histogram
	// Micros is a closed loop's latency as redis-benchmark records it.
	Micros   *hdrhistogram.Histogram
	TLS      *scheduler.TLSHandshakes
	Stages   []timeline.Stage
	Commands []scheduler.CommandResult // in the run's order
	Nodes    []*hdrhistogram.Histogram // each node's response time
}

// Facts returns the test's exact figures, rebuilding them from the JSON
// for a test read back (an error when they do not decode).
func (t *Test) Facts() (*Facts, error) {
	f, err := t.figures()
	if err != nil {
		return nil, err
	}
	return f.facts(), nil
}

// MustFacts is Facts for a test from NewTest or ReadInput, which checked
// that its figures decode (zero Facts otherwise).
func (t *Test) MustFacts() *Facts { return t.mustFigures().facts() }

func (f *figures) facts() *Facts {
	return &Facts{
		Target: f.target, Window: f.window, SendWindow: f.sendWindow, Blocked: f.blocked,
		LagLimit: f.lagLimit, Quantum: f.quantum, Warmup: f.warmup, Interval: f.interval,
		HeldSent: f.heldSent, HeldUnsent: f.heldUnsent, TargetGone: f.targetGone, Read: f.read,
		CPU: f.cpu, Local: f.local, InProcess: f.inProcess, Server: f.server, Extension: f.extension,
		Response: f.response, Service: f.service, Lag: f.lag, Receive: f.receive, Hiccups: f.hiccups,
		Micros: f.micros, TLS: f.tls, Stages: f.stages, Commands: f.commands, Nodes: f.nodes,
	}
}

// Series returns the interval series of the test: the run's, or rebuilt
// from the JSON (decoding every interval's histograms, so only when
// asked for).
func (t *Test) Series() ([]scheduler.Interval, error) { return t.series() }
