package scheduler

import (
	"maps"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
)

// Merge adds o, a later run of the same test (a --repeat run, a -l loop,
// a sweep step at the same rate), to r: counts, windows and byte counts
// summed, histograms and error codes merged, interval series continued,
// per-command and per-node results matched by name and address. What
// describes the test (name, mode, rate, pacing, start, first write) stays
// r's. r's histograms, maps and slices must be its own (see Clone); o is
// left unchanged.
//
// A run's PacingSteps are the first run's that stepped back. A run's Extension stays the first run's (a run given a budget to decide
// in is not repeated).
//
// Every field of Result has its rule here: TestMergeCoversEveryField fails
// when a field is added without one.
func (r *Result) Merge(o *Result) {
	if o == nil {
		return
	}
	r.Counts.Add(o.Counts)
	r.WarmupCounts.Add(o.WarmupCounts)
	r.Window += o.Window
	r.SendWindow += o.SendWindow
	r.Blocked += o.Blocked
	r.Clamped += o.Clamped
	r.ClockErrors += o.ClockErrors
	r.ConnsLost += o.ConnsLost
	r.Reconnects += o.Reconnects
	r.HeldSent += o.HeldSent
	r.HeldUnsent += o.HeldUnsent
	r.DroppedBacklog += o.DroppedBacklog
	r.Unsolicited += o.Unsolicited
	r.BytesSent += o.BytesSent
	r.BytesReceived += o.BytesReceived
	r.Stamped += o.Stamped
	r.Replies += o.Replies
	if o.ReceiveClock != ReceiveKernel {
		r.ReceiveClock = o.ReceiveClock // kernel only when every run's was
	}
	r.Connections = max(r.Connections, o.Connections)
	r.Interrupted = r.Interrupted || o.Interrupted
	r.TargetGone = r.TargetGone || o.TargetGone
	r.TargetLocal = r.TargetLocal || o.TargetLocal
	r.TargetInProcess = r.TargetInProcess && o.TargetInProcess
	r.CPU.add(o.CPU)
	r.ServerProcess = r.ServerProcess.add(o.ServerProcess)
	if r.FirstError == "" {
		r.FirstError = o.FirstError
	}
	if len(r.PacingSteps) == 0 {
		r.PacingSteps = o.PacingSteps // the first run that stepped back, its offsets its own
	}
	if o.TLS != nil {
		if r.TLS == nil {
			r.TLS = &TLSHandshakes{}
		}
		r.TLS.Merge(o.TLS)
	}
	r.ErrorCodes = mergeErrorCodes(r.ErrorCodes, o.ErrorCodes)
	shared := r.shares()
	r.Response, _ = histo.Add(r.Response, o.Response)
	r.Service = mergeUnshared(r.Service, o.Service, shared.service, r.Response)
	r.Lag, _ = histo.Add(r.Lag, o.Lag)
	r.Receive, _ = histo.Add(r.Receive, o.Receive)
	r.Hiccups, _ = histo.Add(r.Hiccups, o.Hiccups)
	r.Micros, _ = histo.Add(r.Micros, o.Micros)
	r.Events = continueEvents(r.Events, o.Events, seriesEnd(r.Intervals))
	r.EventBound = max(r.EventBound, o.EventBound)
	r.EventsDropped += o.EventsDropped
	r.Wait = r.Wait.merge(o.Wait)
	if o.Visibility != nil {
		if r.Visibility == nil {
			r.Visibility = o.Visibility.Clone()
		} else {
			r.Visibility.Merge(o.Visibility)
		}
	}
	r.Intervals = continueSeries(r.Intervals, o.Intervals)
	r.mergeCommands(o, shared)
	r.Nodes = mergeNodes(r.Nodes, o.Nodes)
}

// sharing records which histograms of a result are another of its own:
// a closed loop's service time is its response time, and the one command
// of a single-command test holds the test's histograms.
type sharing struct {
	service  bool
	commands []commandSharing
}

type commandSharing struct{ response, service, lag, receive bool }

func (r *Result) shares() sharing {
	s := sharing{service: r.Service != nil && r.Service == r.Response}
	for _, c := range r.Commands {
		s.commands = append(s.commands, commandSharing{
			response: c.Response != nil && c.Response == r.Response,
			service:  c.Service != nil && c.Service == r.Service,
			lag:      c.Lag != nil && c.Lag == r.Lag,
			receive:  c.Receive != nil && c.Receive == r.Receive,
		})
	}
	return s
}

// mergeUnshared merges from into into, unless into is another histogram
// of the result (shared), which was merged already: then it is merged.
func mergeUnshared(into, from *hdrhistogram.Histogram, shared bool, merged *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if shared {
		return merged
	}
	h, _ := histo.Add(into, from)
	return h
}

// mergeCommands merges o's per-command results into r's by name; a
// command r has not seen is added (a copy).
func (r *Result) mergeCommands(o *Result, shared sharing) {
	index := make(map[string]int, len(r.Commands))
	for i, c := range r.Commands {
		index[c.Name] = i
	}
	for _, fc := range o.Commands {
		i, ok := index[fc.Name]
		if !ok {
			r.Commands = append(r.Commands, fc.clone())
			continue
		}
		ic := &r.Commands[i]
		sh := shared.commands[i]
		ic.Counts.Add(fc.Counts)
		ic.ErrorCodes = mergeErrorCodes(ic.ErrorCodes, fc.ErrorCodes)
		ic.Intervals = continueSeries(ic.Intervals, fc.Intervals)
		ic.Response = mergeUnshared(ic.Response, fc.Response, sh.response, r.Response)
		ic.Service = mergeUnshared(ic.Service, fc.Service, sh.service, r.Service)
		ic.Lag = mergeUnshared(ic.Lag, fc.Lag, sh.lag, r.Lag)
		ic.Receive = mergeUnshared(ic.Receive, fc.Receive, sh.receive, r.Receive)
	}
}

// mergeNodes adds the per-node results of another run, node by address.
func mergeNodes(into, from []NodeResult) []NodeResult {
	index := make(map[string]int, len(into))
	for i, n := range into {
		index[n.Addr] = i
	}
	for _, fn := range from {
		i, ok := index[fn.Addr]
		if !ok {
			fn = fn.clone()
			index[fn.Addr] = len(into)
			into = append(into, fn)
			continue
		}
		in := &into[i]
		in.Counts.Add(fn.Counts)
		in.Redirects += fn.Redirects
		in.Moved += fn.Moved
		in.Ask += fn.Ask
		in.Joined = in.Joined && fn.Joined // in the slot map at the start of a run
		in.Connections = max(in.Connections, fn.Connections)
		shared := in.Service != nil && in.Service == in.Response
		in.Response, _ = histo.Add(in.Response, fn.Response)
		in.Service = mergeUnshared(in.Service, fn.Service, shared, in.Response)
		in.Receive, _ = histo.Add(in.Receive, fn.Receive)
		in.Intervals = continueSeries(in.Intervals, fn.Intervals)
	}
	return into
}

// clone copies a node's result: its histograms its own (a service
// histogram that is its response histogram stays so).
func (n NodeResult) clone() NodeResult {
	shared := n.Service != nil && n.Service == n.Response
	n.Response, n.Receive = histo.Copy(n.Response), histo.Copy(n.Receive)
	n.Service = cloneUnshared(histo.Copy(n.Service), shared, n.Response)
	n.Intervals = slices.Clone(n.Intervals)
	return n
}

// continueSeries continues a run's interval series with the next run's,
// shifted to start where the first ends, so the merged test's intervals
// still add up to it.
func continueSeries(into, from []Interval) []Interval {
	end := seriesEnd(into)
	for _, iv := range from {
		iv.Start += end
		into = append(into, iv)
	}
	return into
}

// seriesEnd is where an interval series ends (0 for none).
func seriesEnd(ivs []Interval) time.Duration {
	if n := len(ivs); n > 0 {
		return ivs[n-1].Start + ivs[n-1].Duration
	}
	return 0
}

// continueEvents continues a run's events with the next run's, shifted
// as its interval series is (by end, where the first run's ends).
func continueEvents(into, from []events.Event, end time.Duration) []events.Event {
	for _, e := range from {
		into = append(into, e.Shift(int64(end)))
	}
	return into
}

// Clone returns a copy of r that shares nothing a Merge into it changes:
// histograms, maps and slices are its own, and a histogram that was
// another of r's (see sharing) is the same one of the copy's.
func (r *Result) Clone() *Result {
	if r == nil {
		return nil
	}
	shared := r.shares()
	c := *r
	c.Response, c.Lag, c.Receive, c.Micros = histo.Copy(r.Response), histo.Copy(r.Lag), histo.Copy(r.Receive), histo.Copy(r.Micros)
	c.Hiccups = histo.Copy(r.Hiccups)
	c.Service = cloneUnshared(histo.Copy(r.Service), shared.service, c.Response)
	c.ErrorCodes = maps.Clone(r.ErrorCodes)
	if r.ServerProcess != nil {
		sp := *r.ServerProcess
		c.ServerProcess = &sp
	}
	if r.TLS != nil {
		c.TLS = &TLSHandshakes{}
		c.TLS.Merge(r.TLS)
	}
	c.Intervals = slices.Clone(r.Intervals)
	c.Stages = slices.Clone(r.Stages)
	c.Events = nil
	for _, e := range r.Events {
		c.Events = append(c.Events, e.Shift(0))
	}
	c.Wait, c.Visibility = r.Wait.clone(), r.Visibility.Clone()
	c.Commands = nil
	for i, cr := range r.Commands {
		cc := cr.clone()
		sh := shared.commands[i]
		cc.Response = cloneUnshared(cc.Response, sh.response, c.Response)
		cc.Service = cloneUnshared(cc.Service, sh.service, c.Service)
		cc.Lag = cloneUnshared(cc.Lag, sh.lag, c.Lag)
		cc.Receive = cloneUnshared(cc.Receive, sh.receive, c.Receive)
		c.Commands = append(c.Commands, cc)
	}
	c.Nodes = slices.Clone(r.Nodes)
	for i := range c.Nodes {
		c.Nodes[i] = r.Nodes[i].clone()
	}
	return &c
}

// cloneUnshared is the copy's histogram: the copy's own shared one, or a
// copy of h (a clone already made copies itself: cloneUnshared keeps it).
func cloneUnshared(h *hdrhistogram.Histogram, shared bool, sharedCopy *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if shared {
		return sharedCopy
	}
	return h
}

// clone copies a command's result: histograms, codes and series its own.
func (c CommandResult) clone() CommandResult {
	c.Response, c.Service, c.Lag, c.Receive = histo.Copy(c.Response), histo.Copy(c.Service), histo.Copy(c.Lag), histo.Copy(c.Receive)
	c.ErrorCodes = maps.Clone(c.ErrorCodes)
	c.Intervals = slices.Clone(c.Intervals)
	return c
}

// Pool merges the runs of one test into one result; the runs are left
// unchanged. One run is returned as it is; none is nil.
func Pool(runs []*Result) *Result {
	switch len(runs) {
	case 0:
		return nil
	case 1:
		return runs[0]
	}
	p := runs[0].Clone()
	for _, r := range runs[1:] {
		p.Merge(r)
	}
	return p
}
