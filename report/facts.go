package report

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/scheduler"
)

// Facts are a test's exact facts beyond its JSON fields, for what renders
// tests outside this package (report/text, report/peers): taken exactly
// from the run for a test just measured, rebuilt from the JSON for one
// read back, so the two print through the same code.
type Facts struct {
	Target                      scheduler.Rate
	Window, SendWindow, Blocked time.Duration
	LagLimit, Quantum, Warmup   time.Duration
	Interval                    time.Duration
	HeldSent, HeldUnsent        uint64
	TargetGone                  bool
	// Read: rebuilt from a document's JSON, not taken from a run.
	Read bool
	// CPU and Local are what the client host did, and whether the target
	// was on it.
	CPU       scheduler.HostCPU
	Local     bool
	InProcess bool
	// Server is the local server process's use of the CPUs (nil: not
	// watched).
	Server *scheduler.ServerProcess
	// Extension is how a run with a budget to decide in used it (nil:
	// none).
	Extension              *scheduler.Extension
	Response, Service, Lag *hdrhistogram.Histogram
	Receive, Hiccups       *hdrhistogram.Histogram
	// Micros is a closed loop's latency as redis-benchmark records it.
	Micros   *hdrhistogram.Histogram
	TLS      *scheduler.TLSHandshakes
	Stages   []scheduler.Stage
	Commands []scheduler.CommandResult // in the run's order
	Nodes    []*hdrhistogram.Histogram // each node's response time
}

// Facts returns the test's exact facts, rebuilding them from the JSON for
// a test read back (see figures): an error when its histograms do not
// decode.
func (t *Test) Facts() (*Facts, error) {
	f, err := t.figures()
	if err != nil {
		return nil, err
	}
	return f.facts(), nil
}

// FactsOrZero is Facts for the renderers, whose tests come from NewTest or
// from ReadInput, which checked that they decode: zero facts if they do
// not.
func (t *Test) FactsOrZero() *Facts { return t.mustFigures().facts() }

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
