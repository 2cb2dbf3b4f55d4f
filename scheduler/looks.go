package scheduler

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
)

// Looks lets a run that has a verdict to reach look at what it measured
// while it runs, and end once it can tell (--decide-within): at the ends
// of the intervals From, From+Every, From+2·Every, … into the measured
// window, Look gets the intervals so far and says whether to end. The
// timeline then ends at once, where it is: one run, one continuous
// timeline, its intended times never paused (a look runs on a goroutine
// of the interval series, beside the pacer and the cutting of intervals,
// which a slow look does not delay), and the result holds everything sent
// until then. The look at the end of interval k judges the first k
// intervals, whenever it runs. openloop.Config.Duration is the most the
// run may last.
//
// A look whose verdict waits only on replies still to come says so
// (LookAgain): it is taken again at the end of each following interval,
// with everything measured by then, until it says otherwise or the next
// planned look is due. Look's planned is false for such a retake.
//
// The intervals a look gets carry their scheduled counts (what the
// timeline intended in each), as the result's do.
type Looks struct {
	From, Every time.Duration
	Look        func(ivs []Interval, planned bool) LookNext
}

// LookNext is what a look tells its run.
type LookNext uint8

const (
	// LookOn: undecided; the next planned look.
	LookOn LookNext = iota
	// LookEnd: decided; the run ends.
	LookEnd
	// LookAgain: undecided only for replies still to come; the look
	// is taken again at the next interval's end.
	LookAgain
)

// due reports whether the interval ending at end (from the measured
// window's start) is one the looks read.
func (l *Looks) due(end time.Duration) bool {
	if l == nil || l.Look == nil || end < l.From {
		return false
	}
	if end == l.From {
		return true
	}
	return l.Every > 0 && (end-l.From)%l.Every == 0
}

// Partial is a result made of proto's description (name, mode, rate,
// pacing, lag limit, connections, host, clocks) and the intervals ivs,
// whose counts, histograms and server process it adds up: what a run
// measured so far, for a look (Looks) to judge. Its CPU is proto's.
func Partial(proto *Result, ivs []Interval) (*Result, error) {
	return NewPartials(proto).Result(ivs)
}

// Partials adds up a run's intervals for one look after another, as
// Partial does: each look's intervals begin with the last look's, so only
// the intervals closed since are decoded and merged. Decoding every
// interval at every look made a look's CPU grow with the budget (60 ms
// at the sixtieth interval on the 2-CPU VM, taken from the pacer beside
// it). Not safe for concurrent use.
type Partials struct {
	proto *Result
	// n intervals are summed; start is the n-th one's start, to see that
	// the next intervals begin with them.
	n     int
	start time.Duration
	sum   Result // counts, window, bytes
	proc  host.ProcUsage
	hists [nSeries]*hdrhistogram.Histogram
}

// NewPartials returns a sum of no intervals of a run described by proto.
func NewPartials(proto *Result) *Partials { return &Partials{proto: proto} }

// Result returns what ivs measured (see Partial): the intervals summed
// before, when ivs begins with them, and those after. Its histograms are
// its own.
func (p *Partials) Result(ivs []Interval) (*Result, error) {
	if len(ivs) < p.n || p.n > 0 && ivs[p.n-1].Start != p.start {
		*p = Partials{proto: p.proto} // other intervals: sum them afresh
	}
	for _, iv := range ivs[p.n:] {
		if err := p.add(iv); err != nil {
			*p = Partials{proto: p.proto}
			return nil, err
		}
	}
	proto := p.proto
	r := &Result{
		Name: proto.Name, Mode: proto.Mode, TargetRate: proto.TargetRate, Arrival: proto.Arrival, Pacing: proto.Pacing,
		PacingQuantum: proto.PacingQuantum, Connections: proto.Connections, T0: proto.T0, ReceiveClock: proto.ReceiveClock,
		HiccupInterval: proto.HiccupInterval, CPU: proto.CPU, TargetLocal: proto.TargetLocal, TargetInProcess: proto.TargetInProcess,
		LagLimit: proto.LagLimit, Started: proto.Started, Interval: proto.Interval, Intervals: ivs,
		Counts: p.sum.Counts, Window: p.sum.Window, BytesSent: p.sum.BytesSent, BytesReceived: p.sum.BytesReceived,
	}
	own := func(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
		if h == nil {
			return histo.New()
		}
		return histo.Copy(h)
	}
	r.Response, r.Service, r.Lag, r.Receive = own(p.hists[0]), own(p.hists[1]), own(p.hists[2]), own(p.hists[3])
	if p.hists[4] != nil {
		r.Hiccups = histo.Copy(p.hists[4])
	}
	if proto.ServerProcess != nil || p.proc.Seconds > 0 {
		sp := &ServerProcess{Usage: p.proc}
		if proto.ServerProcess != nil {
			sp.ServerProcess = proto.ServerProcess.ServerProcess
		}
		r.ServerProcess = sp
	}
	r.Replies, r.Stamped = r.Counts.Completed, 0
	if r.ReceiveClock == ReceiveKernel {
		r.Stamped = r.Replies
	}
	return r, nil
}

// add adds one interval to the sum.
func (p *Partials) add(iv Interval) error {
	p.sum.Counts.Add(iv.Counts)
	p.sum.Window += iv.Duration
	p.sum.BytesSent += iv.BytesSent
	p.sum.BytesReceived += iv.BytesReceived
	for k, pk := range [nSeries]histo.Packed{iv.Response, iv.Service, iv.Lag, iv.Receive, iv.Hiccup} {
		if pk.Empty() {
			continue
		}
		h, err := pk.Histogram()
		if err != nil {
			return err
		}
		if p.hists[k] == nil {
			p.hists[k] = histo.New()
		}
		p.hists[k], _ = histo.Add(p.hists[k], h)
	}
	if iv.ServerProcess != nil {
		p.proc.Add(*iv.ServerProcess)
	}
	p.n, p.start = p.n+1, iv.Start
	return nil
}
