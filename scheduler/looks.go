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
	r := &Result{
		Name: proto.Name, Mode: proto.Mode, TargetRate: proto.TargetRate, Arrival: proto.Arrival, Pacing: proto.Pacing,
		PacingQuantum: proto.PacingQuantum, Connections: proto.Connections, T0: proto.T0, ReceiveClock: proto.ReceiveClock,
		HiccupInterval: proto.HiccupInterval, CPU: proto.CPU, TargetLocal: proto.TargetLocal, TargetInProcess: proto.TargetInProcess,
		LagLimit: proto.LagLimit, Started: proto.Started, Interval: proto.Interval, Intervals: ivs,
	}
	var sets [nSeries][]*hdrhistogram.Histogram
	var proc host.ProcUsage
	for _, iv := range ivs {
		r.Counts.Add(iv.Counts)
		r.Window += iv.Duration
		r.BytesSent += iv.BytesSent
		r.BytesReceived += iv.BytesReceived
		for k, p := range [nSeries]histo.Packed{iv.Response, iv.Service, iv.Lag, iv.Receive, iv.Hiccup} {
			if p.Empty() {
				continue
			}
			h, err := p.Histogram()
			if err != nil {
				return nil, err
			}
			sets[k] = append(sets[k], h)
		}
		if iv.ServerProcess != nil {
			proc.Add(*iv.ServerProcess)
		}
	}
	merged := func(hs []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
		if len(hs) == 0 {
			return histo.New()
		}
		h, _ := histo.Merge(hs...)
		return h
	}
	r.Response, r.Service, r.Lag, r.Receive = merged(sets[0]), merged(sets[1]), merged(sets[2]), merged(sets[3])
	if len(sets[4]) > 0 {
		r.Hiccups = merged(sets[4])
	}
	if proto.ServerProcess != nil || proc.Seconds > 0 {
		sp := &ServerProcess{Usage: proc}
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
