package experiment

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Decide gives an open run a budget to reach a verdict in
// (--decide-within): it waits for a quiet host (at most QuietMax), runs
// its planned duration and is judged; while the verdict is inconclusive
// it goes on, one continuous timeline, and is judged again on everything
// measured every Every (verdict.Judge's sequential rule), until a look
// decides or the budget is spent.
type Decide struct {
	// Budget bounds the whole test, the quiet wait included (not the
	// drain of the last replies).
	Budget time.Duration
	// Every is the time between looks after the first (0: the planned
	// duration, at least DefaultEvery).
	Every time.Duration
	// QuietMax bounds the wait for a quiet host (0: DefaultQuietMax; at
	// most a tenth of the budget).
	QuietMax time.Duration
	// Options make each look a test (its id); Server is unused.
	Options report.TestOptions
	// SLO is what each look checks (the zero SLO checks nothing).
	SLO verdict.SLO
}

// MaxBudget bounds a Decide's budget (--decide-within): a gate that may
// take longer than a CI job's hour is no gate.
const MaxBudget = time.Hour

// CheckBudget refuses a budget to decide in: one not positive or above
// MaxBudget, one without an SLO to decide, or one shorter than the test's
// planned measured length (warmup included; 0: not known). Its errors are
// usage errors naming --decide-within.
func CheckBudget(budget time.Duration, slo verdict.SLO, planned time.Duration) error {
	switch {
	case budget <= 0 || budget > MaxBudget:
		return usage.Flagf("decide-within", "{decide-within} %s: want a duration up to %s, such as 1m", budget, MaxBudget)
	case slo.IsZero():
		return usage.Flagf("decide-within", "{decide-within} needs {slo}: it measures until the SLO's verdict is decided")
	case planned > 0 && budget < planned:
		return usage.Flagf("decide-within", "{decide-within} %s is shorter than the test's planned %s", budget, planned)
	}
	return nil
}

// DecideFor is the Decide of a test judged with o and slo within budget
// (nil for none: no --decide-within).
func DecideFor(budget time.Duration, o report.TestOptions, slo verdict.SLO) *Decide {
	if budget <= 0 {
		return nil
	}
	return &Decide{Budget: budget, Options: o, SLO: slo}
}

// Defaults of Decide.
const (
	DefaultQuietMax = 2 * time.Second
	// DefaultEvery is the shortest step between looks by default: each
	// look judges everything measured, so a step only needs to add a
	// few intervals.
	DefaultEvery = 2 * time.Second
	// quietWindow is how long the hiccup meter measures the host at a
	// time while the run waits for it to be quiet.
	quietWindow = 500 * time.Millisecond
	// quietFloor is the least hiccup p99 taken as quiet, whatever the
	// SLO: an idle VM's wakes are about 0.1–0.2 ms late.
	quietFloor = 300 * time.Microsecond
)

// plan is a Decide's schedule for a run of planned duration after a
// quiet wait of waited: its looks and the timeline's longest duration.
type decidePlan struct {
	planned, every, longest time.Duration
	looks                   int
}

func (d Decide) plan(planned, waited time.Duration) decidePlan {
	every := d.Every
	if every <= 0 {
		every = max(planned, DefaultEvery)
	}
	p := decidePlan{planned: planned, every: every, looks: 1}
	if left := d.Budget - waited - planned; left > 0 {
		p.looks += int(left / every)
	}
	p.longest = planned + time.Duration(p.looks-1)*every
	return p
}

// quietMax is how long the run may wait for a quiet host.
func (d Decide) quietMax() time.Duration {
	q := d.QuietMax
	if q <= 0 {
		q = DefaultQuietMax
	}
	return min(q, d.Budget/10)
}

// quietBelow is the hiccup p99 under which the host counts as quiet: the
// share of the tightest latency bound the trust rule calls quiet
// (verdict.QuietShare), at least quietFloor.
func (d Decide) quietBelow() time.Duration {
	b := d.SLO.TightestLatency()
	if b <= 0 {
		return time.Millisecond
	}
	return max(time.Duration(verdict.QuietShare*float64(b)), quietFloor)
}

// waitQuiet measures the host's hiccups in windows of quietWindow until
// one's p99 is under below, or max has passed (or ctx ends): how long it
// waited, whether it found the host quiet, and the last window's p99.
func waitQuiet(ctx context.Context, maxWait, below time.Duration) (waited time.Duration, quiet bool, p99 time.Duration) {
	start := time.Now()
	for {
		m, err := host.NewMeter(host.MeterConfig{Interval: host.DefaultInterval})
		if err != nil {
			return time.Since(start), false, 0
		}
		m.Start()
		t := time.NewTimer(min(quietWindow, max(maxWait-time.Since(start), time.Millisecond)))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		r := m.Stop()
		if r.Total != nil && r.Total.TotalCount() > 0 {
			p99 = time.Duration(r.Total.ValueAtQuantile(99))
		}
		waited = time.Since(start)
		if p99 <= below && r.Total != nil && r.Total.TotalCount() > 0 {
			return waited, true, p99
		}
		if ctx.Err() != nil || waited >= maxWait {
			return waited, false, p99
		}
	}
}

// decider judges the looks of one run.
type decider struct {
	d     Decide
	plan  decidePlan
	proto *scheduler.Result
	// partials sums the intervals for the looks (each look's begin with
	// the last one's), made at the first look with the memo of their
	// decoded histograms that the sequential rule reads (ext.Hists).
	partials *scheduler.Partials
	cpu0     host.CPUSample
	cpuOK    bool
	ext      scheduler.Extension
	// looks counts the planned looks taken, retakes the times the
	// current one was taken again (scheduler.LookAgain); decided is set
	// when one ended the run.
	looks, retakes int
	decided        bool
	// outcome is what the look that decided said.
	outcome string
	// server reads what the server counted so far (its latency events,
	// its commandstats), for a look to judge with; nil: not asked.
	server func() *serverinfo.Stats
}

// look judges the intervals measured so far (see scheduler.Looks): the
// run ends when the verdict is no longer inconclusive. A pass that waits
// only on the replies still open at the look (holdsWithOpen) is taken
// again at the next interval's end (not planned: a retake), with those
// replies and everything else measured by then: a stall in progress at
// the look, or the look's own moment, no longer sends a run decided on
// what it measured to the next look, seconds later. A retake passes only
// what the look before it passed on its replies, once the replies it
// lacked came and were judged, so it adds no pass the rule would not give
// without the open requests.
func (k *decider) look(ivs []scheduler.Interval, planned bool) scheduler.LookNext {
	if planned || k.looks == 0 {
		k.looks, k.retakes = k.looks+1, 0
	} else {
		k.retakes++
	}
	if k.partials == nil {
		k.partials, k.ext.Hists = scheduler.NewPartials(k.proto), new(stats.HistMemo)
	}
	r, err := k.partials.Result(ivs)
	if err != nil {
		return scheduler.LookOn
	}
	if k.cpuOK {
		if s, err := host.ReadCPU(); err == nil {
			u := host.Usage(k.cpu0, s)
			r.CPU = scheduler.HostCPU{Available: u.Available, Seconds: u.Seconds, Busy: u.HostBusy, Steal: u.HostSteal, Self: u.Self, CPUs: u.CPUs}
		}
	}
	ext := k.ext
	ext.Looks, ext.Final = k.looks, k.looks >= k.plan.looks
	r.Extension = &ext
	opts := k.d.Options
	opts.Unwritten = true // judged, never written: a third of a look's time saved, which the requests sent meanwhile wait for
	if k.server != nil {
		opts.Server = k.server() // its latency events so far: a look sees the server's evidence too
	}
	_, j, err := verdict.NewTest(r, opts, k.d.SLO)
	if err != nil {
		return scheduler.LookOn
	}
	waiting := false
	if j.Outcome == verdict.Pass {
		j, waiting = k.holdsWithOpen(ivs, r, opts, j)
	}
	if k.looks == 1 && k.retakes == 0 && j.Outcome == verdict.Inconclusive {
		k.ext.WentOn = j.Reason
	}
	switch {
	case ext.Final:
		return scheduler.LookOn // the budget's end ends the run anyway
	case waiting:
		return scheduler.LookAgain
	case j.Outcome == verdict.Inconclusive:
		return scheduler.LookOn
	}
	k.decided, k.outcome, k.ext.Retakes = true, j.Outcome.String(), k.retakes
	return scheduler.LookEnd
}

// holdsWithOpen keeps a look's pass j only if it holds whatever the
// requests still open at the look (intended so far, with no outcome yet:
// in flight, or not yet sent) turn out to take. The intervals hold what
// completed, and the open requests are the slowest: a look that left them
// out could pass, and end, a run that its complete data does not pass (a
// stall in progress at the look hides every request it holds; at 1k/s
// against a bound coarse pacing nearly met, first looks passed runs that,
// judged whole, were inconclusive). So the look is judged again with them
// as response times beyond any bound; if it no longer passes, it is
// inconclusive, waiting on them (waiting), and the look is taken again. A
// failure, which the service times decide, owes them nothing.
func (k *decider) holdsWithOpen(ivs []scheduler.Interval, r *scheduler.Result, opts report.TestOptions, j verdict.Judgement) (_ verdict.Judgement, waiting bool) {
	open := r.Counts.Open()
	if open == 0 {
		return j, false
	}
	undecided := verdict.Judgement{Outcome: verdict.Inconclusive, Verdict: report.VerdictInconclusive, Owners: j.Owners,
		Reason: fmt.Sprintf("%d of the %d requests intended so far had no reply yet at the look; what was measured passes, but not whatever those take", open, r.Counts.Scheduled)}
	with, err := withOpenRequests(ivs, open)
	if err != nil {
		return undecided, false
	}
	// r with them: its response times, and its intervals for the
	// sequential rule's bootstrap; the rest as summed (not again).
	r2 := *r
	r2.Intervals, r2.Response = with, histo.Copy(r.Response)
	if err := r2.Response.RecordValues(r2.Response.HighestTrackableValue(), int64(open)); err != nil {
		return undecided, false
	}
	if _, j2, err := verdict.NewTest(&r2, opts, k.d.SLO); err != nil || j2.Outcome != verdict.Pass {
		return undecided, err == nil
	}
	return j, false
}

// withOpenRequests returns ivs with open more response times, beyond any
// bound, in the last interval.
func withOpenRequests(ivs []scheduler.Interval, open uint64) ([]scheduler.Interval, error) {
	if len(ivs) == 0 {
		return ivs, nil
	}
	last := ivs[len(ivs)-1]
	h := histo.New()
	if !last.Response.Empty() {
		var err error
		if h, err = last.Response.Histogram(); err != nil {
			return nil, err
		}
	}
	if err := h.RecordValues(h.HighestTrackableValue(), int64(open)); err != nil {
		return nil, err
	}
	p, err := histo.Pack(h)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(ivs)
	last.Response = p
	out[len(out)-1] = last
	return out, nil
}

// quiet is what the wait for a quiet host found.
type quiet struct {
	waited, p99 time.Duration
	ok          bool
}

// waitQuiet waits, before a run with a budget to decide in, for a quiet
// host (nothing without d).
func (d *Decide) waitQuiet(ctx context.Context) quiet {
	if d == nil || d.Budget <= 0 {
		return quiet{}
	}
	w, ok, p99 := waitQuiet(ctx, d.quietMax(), d.quietBelow())
	return quiet{waited: w, p99: p99, ok: ok}
}

// StepLooks plans the looks of a step of planned measured length with a
// budget to decide in (a sweep's step: no quiet wait, its settle plays
// that part): the step's longest measured length, the looks to give the
// driver, and what completes the step's result once it returns.
func (e *Env) StepLooks(d Decide, cfg openloop.Config, conns int, name string, tl timeline.Timeline, planned time.Duration) (time.Duration, *scheduler.Looks, func(*scheduler.Result)) {
	cfg.Duration, cfg.Warmup, cfg.Name, cfg.Timeline = planned, 0, name, tl
	finish := e.withDecide(&d, quiet{}, &cfg, conns, nil)
	return cfg.Duration, cfg.Looks, finish
}

// withDecide prepares cfg for a run with a budget to decide in, after
// the wait for a quiet host q: it plans the looks (each judged with what
// server, when given, says the server counted so far), and returns what
// to call with the result once the run returns (nothing without d).
func (e *Env) withDecide(d *Decide, q quiet, cfg *openloop.Config, conns int, server func() *serverinfo.Stats) func(*scheduler.Result) {
	if d == nil || d.Budget <= 0 || cfg.Duration <= 0 {
		return func(*scheduler.Result) {}
	}
	waited, quiet, p99 := q.waited, q.ok, q.p99
	planned := cfg.Duration - cfg.Warmup // the measured part; looks count from its start
	k := &decider{d: *d, plan: d.plan(planned, waited+cfg.Warmup), server: server}
	k.ext = scheduler.Extension{Planned: planned, Budget: d.Budget, Every: k.plan.every, PlannedLooks: k.plan.looks,
		QuietWait: waited, Quiet: quiet, QuietHiccups: p99}
	proto := &scheduler.Result{Name: cfg.Name, Mode: "open", TargetRate: cfg.Rate, Arrival: cfg.Timeline.Name(), Pacing: cfg.Pacing.String(),
		PacingQuantum: cfg.Pacing.Quantum(cfg.LagLimit), LagLimit: cfg.LagLimit, Connections: conns, Interval: cfg.Interval,
		HiccupInterval: cfg.HiccupInterval, TargetLocal: host.IsLocal(e.Target.Options.Network, e.Target.Options.Addr),
		TargetInProcess: e.InProcess, ReceiveClock: scheduler.ReceiveRead}
	if rc := e.Target.Options.ReceiveClock; rc == "" || rc == conn.ReceiveKernel {
		proto.ReceiveClock = scheduler.ReceiveKernel // replies mostly carry the kernel's stamps where it gives them
	}
	if proto.Interval <= 0 {
		proto.Interval = scheduler.DefaultInterval
	}
	if cfg.ServerProcess != nil {
		proto.ServerProcess = &scheduler.ServerProcess{ServerProcess: *cfg.ServerProcess}
	}
	k.proto = proto
	s, err := host.ReadCPU()
	k.cpu0, k.cpuOK = s, err == nil
	cfg.Duration = cfg.Warmup + k.plan.longest
	cfg.Looks = &scheduler.Looks{From: planned, Every: k.plan.every, Look: k.look}
	return func(res *scheduler.Result) {
		if res == nil {
			return
		}
		ext := k.ext
		ext.Looks, ext.Decided, ext.LookOutcome = max(k.looks, 1), k.decided, k.outcome
		ext.Hists = nil // the looks': the result keeps no decoded intervals
		if !k.decided && !res.Interrupted {
			ext.Looks, ext.Final = k.plan.looks, true
		}
		res.Extension = &ext
	}
}
