// Package sweep steps a load and reads what the server did at each step:
// an open sweep over listed rates, a capacity search for the highest rate
// that meets an SLO (search.go, and what it may claim: claims.go), and a
// closed sweep over clients × pipeline (closed.go) with Little's law and
// the knee (knee.go). It judges each step (judge.go: the 95% interval of each
// percentile clause, whose a miss was, and whether its queue grew:
// trend.go), lengthens steps for the SLO's percentiles (samples.go) and
// uncertain ones (sweep.go), and returns a test per point, the sweep's
// summary and its table; it never prints but through Config.Print, as
// steps finish.
//
// It runs its steps through an experiment.Env and judges them with
// package report; only the command (cmd/pacer) is above it.
package sweep

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Limits of a sweep.
const (
	// MaxPoints bounds the points of a sweep (rates, or clients ×
	// pipelines).
	MaxPoints = 1000
	// DefaultMaxSteps is --max-steps: the points a search may measure.
	// Without noise a search from 1k/s needs at most 12 for any limit
	// from 1k/s to 256k/s; a burst of noise over two steps costs two to
	// five more, and with 12 a fifth of such searches ran out before
	// they found the limit (TestRateSearchNoiseEpisode). A search on a
	// shared machine meets such bursts: 16 leaves room for one.
	DefaultMaxSteps = 16
	// DefaultSearchFrom is where a search starts without --from, in
	// requests per second.
	DefaultSearchFrom = 1000
	// minAbortAfter is the shortest default --abort-after: 10× a tight
	// latency bound would otherwise cut a step at a single scheduling
	// hiccup of the machine, which the SLO itself may well survive.
	minAbortAfter = 100 * time.Millisecond
)

// Config is a sweep: its test, its points and how each is measured.
type Config struct {
	Test experiment.Test
	// Rates lists an open sweep's rates (req/s); with Search the search
	// chooses them, from From (raised to what can be judged) up to To (0:
	// no bound), to Precision, in at most MaxSteps points.
	Rates                []float64
	Search               bool
	From, To, Precision  float64
	MaxSteps             int
	StepDuration, Settle time.Duration
	// AbortAfter stops a step once its oldest unanswered request has
	// waited that long (0: never); DefaultAbortAfter gives its default.
	AbortAfter time.Duration
	Arrival    string // "uniform" or "poisson"
	Seed       uint64
	// Open is the open driver's settings (pacing, drain, lag limit,
	// timeout, interval, backlog); Conns its connections (per primary in
	// a cluster, routed by Keys).
	Open  openloop.Config
	Conns int
	Keys  endpoint.Keys
	// Clients and Pipelines are a closed sweep's points (Closed); Drain
	// and Interval its driver's.
	Clients, Pipelines []int
	Drain, Interval    time.Duration
	// SLO is what a step must meet (the zero SLO: none); a search needs
	// one.
	SLO verdict.SLO
	// Repeat measures each point Repeat times; CI adds the confidence
	// intervals of its percentiles.
	Repeat int
	CI     bool
	// Decide gives a search's steps a budget to reach a verdict in
	// (--decide-within): a step goes on while it is inconclusive, up to
	// it (experiment.Decide). Without it a step that measures a rate
	// again (a contradiction, an inconclusive rate) gets three times its
	// length.
	Decide time.Duration
	// Quiet leaves out the cluster's per-node tables.
	Quiet bool
	// Print receives the lines a sweep shows as it goes (each step's
	// line); nil: none.
	Print func(string)
}

// DefaultAbortAfter is --abort-after's default: 10× the SLO's largest
// latency bound, at least 100 ms; 1 s without one.
func DefaultAbortAfter(slo verdict.SLO) time.Duration {
	b := slo.LoosestLatency()
	if b <= 0 {
		return time.Second
	}
	return max(10*b, minAbortAfter)
}

// Result is what a sweep measured and concluded.
type Result struct {
	// Tests holds a test per point, in the order measured.
	Tests []report.Test
	Sweep *report.Sweep
	// Text is the step table with its notes and the conclusion.
	Text string
	// Outcome is the sweep's judgement by the trust rule; Notes say why it
	// is not Trusted, one line each.
	Outcome verdict.Outcome
	Notes   []string
	// Interrupted is set when the sweep stopped before its end.
	Interrupted bool
}

func (c *Config) print(s string) {
	if c.Print != nil {
		c.Print(s)
	}
}

// openPoint is a rate of an open sweep and the steps (repeats) it ran.
type openPoint struct {
	rate   float64
	steps  []*openloop.Step
	pooled *scheduler.Result
	test   *report.Test
	// StepJudgement is its judgement against the SLO (see verdict.Step).
	verdict.StepJudgement
	// aborted: a step of it was cut by --abort-after; atOnce: within its
	// first interval.
	aborted, atOnce bool
	// server is what the server counted during the point's steps.
	server *serverinfo.Stats
	// judgedWith are the earlier points at the same rate whose
	// measurements its verdict pooled (a search's second look).
	judgedWith []int
	// planned is the measured duration planned for each of its steps
	// (--step-duration, or longer for a percentile's samples: see
	// sampleRule); short are the SLO's percentile clauses its samples
	// could not support, which leave it unjudged (pass nil).
	planned time.Duration
	short   []string
	// want is how many steps it runs before it is judged: --repeat, and
	// one more for each lengthening; lengthened counts those, extend is
	// the measured duration of the next one, measured the measured time
	// planned for all its steps so far.
	want             int
	lengthened       int
	extend, measured time.Duration
}

// Open runs an open sweep (or search) over one set of connections.
func Open(ctx context.Context, env *experiment.Env, cfg Config) (*Result, error) {
	j := cfg.Test
	stream, err := j.Stream(env.Place.StreamSeed(cfg.Seed))
	if err != nil {
		return nil, usage.Errorf("%w", err)
	}
	if err := env.Place.Wait(ctx, env.WaitNotes()); err != nil {
		return &Result{Interrupted: true}, nil
	}
	env.Target.TakeHandshakes() // the sweep's own handshakes only
	var conns []*conn.Conn
	ocfg := cfg.Open
	ocfg.Reads = env.Target.Reads(ctx, j.Recipe)
	addr, epoch := env.Target.Options.Addr, uint64(0)
	var nodes []scheduler.Node
	if env.Target.Cluster {
		conns, ocfg.Cluster, err = env.Target.OpenCluster(ctx, cfg.Conns, cfg.Keys, ocfg.ReadFrom != openloop.ReadPrimary)
	} else {
		conns, addr, epoch, nodes, err = env.DialStandalone(ctx, &ocfg, cfg.Conns)
	}
	if err != nil {
		return nil, err
	}
	env.Topology(&ocfg, addr, epoch)
	o := &openSweep{cfg: &cfg, env: env, byRate: map[float64][]*openPoint{}, index: map[*openPoint]int{},
		stats: map[*openloop.Step]*serverinfo.Stats{}, clusterNodes: nodes}
	if ocfg.Cluster != nil {
		o.clusterNodes = ocfg.Cluster.Nodes
	}
	// Steps long enough for the SLO's percentiles (sampleRule).
	if !cfg.SLO.IsZero() {
		o.rule = newSampleRule(cfg.SLO, cfg.StepDuration)
	} else {
		o.rule = sampleRule{base: cfg.StepDuration, cap: cfg.StepDuration}
	}
	rate := 0.0
	if cfg.Search {
		o.search = newRateSearch(cfg.From, cfg.To, cfg.Precision, cfg.MaxSteps)
		o.search.floor, o.search.floorWhat, o.search.floorHow = o.rule.floor(), o.rule.metric, o.rule.how()
		rate = o.search.first()
	} else {
		rate = cfg.Rates[0]
	}
	o.cur = o.newPoint(rate)
	ocfg.CommandNames = j.Names
	ocfg.Redial = env.Target.Redial
	ocfg.OnErrorReply = env.OnErrorReply
	ocfg.HiccupInterval = env.HiccupInterval
	ocfg.ServerProcess = env.ServerProcess()
	ocfg.OnStart = func(l *scheduler.Live) {
		if o.onStart != nil {
			o.onStart(l)
		}
	}
	steps, runErr := openloop.RunSteps(ctx, conns, stream, ocfg, o.next)
	if o.endStep != nil {
		o.endStep()
	}
	// The steps next never saw: the last one, interrupted or failed.
	for _, st := range steps[o.seen:] {
		o.finishStep(st)
	}
	interrupted := ctx.Err() != nil
	if o.cur != nil && len(o.cur.steps) > 0 {
		o.closePoint(false) // cut short: measured, not judged by the search
	}
	for _, st := range steps {
		interrupted = interrupted || st.Interrupted
	}
	res := &Result{Interrupted: interrupted}
	if err := o.document(res); err != nil {
		return nil, err
	}
	if err := o.text(res); err != nil {
		return nil, err
	}
	if runErr != nil {
		return res, runErr
	}
	if o.judgeErr != nil {
		return res, o.judgeErr
	}
	best := 0.0
	if r := res.Sweep.SustainableRate; r != nil {
		best = *r
	}
	res.Outcome, res.Notes = openOutcome(o.points, !cfg.SLO.IsZero(), best, interrupted)
	if s := o.search; s != nil && s.done && !interrupted {
		if ok, why := s.trusted(); !ok {
			res.Outcome = verdict.Worse(res.Outcome, verdict.Inconclusive)
			res.Notes = append(res.Notes, "pacer: inconclusive: "+why)
		}
	}
	return res, nil
}

// openSweep is an open sweep under way: the points measured, the point
// whose steps run now, and the search choosing the rates.
type openSweep struct {
	cfg    *Config
	env    *experiment.Env
	rule   sampleRule
	search *rateSearch
	points []*openPoint
	cur    *openPoint
	// byRate holds the points measured at each rate; index each point's
	// place in points.
	byRate    map[float64][]*openPoint
	index     map[*openPoint]int
	stats     map[*openloop.Step]*serverinfo.Stats
	listIndex int
	seen      int // steps handed back by next
	judgeErr  error
	// The step under way: its live view, its whole timeline and length
	// (a shard plans the next step's start from them) and the server's
	// counters before it.
	onStart func(*scheduler.Live)
	endStep func()
	stepTL  timeline.Timeline
	stepDur time.Duration
	since   func() *serverinfo.Stats
	// looked completes the step's result with how it used its budget to
	// decide (nil: none).
	looked func(*scheduler.Result)
	// clusterNodes are a cluster's primaries (or a primary and its
	// replicas), asked around each step.
	clusterNodes []scheduler.Node
}

// next is the driver's StepPlanner: it finishes the step that ended and
// plans the next one, closing a point once its repeats are measured.
func (o *openSweep) next(i int, prev *openloop.Step) (openloop.StepPlan, bool) {
	cfg, env, j := o.cfg, o.env, o.cfg.Test
	if o.endStep != nil {
		o.endStep()
	}
	if prev != nil {
		o.seen++
		o.finishStep(prev)
		// An aborted step ends its point, unless shards must keep
		// running the same steps.
		if len(o.cur.steps) >= o.cur.want || prev.Aborted && !env.Place.Sharded() {
			if d := o.lengthen(); d > 0 {
				o.cur.want++
				o.cur.lengthened++
				o.cur.extend = d
			} else {
				r, ok := o.closePoint(true)
				if !ok {
					o.cur = nil
					return openloop.StepPlan{}, false
				}
				o.cur = o.newPoint(r)
			}
		}
	}
	r := timeline.RatePerSecond(o.cur.rate)
	name := experiment.RunName(fmt.Sprintf("%s at %s/s", j.Title, formatRate(o.cur.rate)), len(o.cur.steps), cfg.Repeat)
	if o.cur.lengthened > 0 {
		name = fmt.Sprintf("%s at %s/s, lengthened (%d)", j.Title, formatRate(o.cur.rate), o.cur.lengthened)
	}
	var tl timeline.Timeline = timeline.Uniform{Rate: r}
	if cfg.Arrival == "poisson" {
		tl = timeline.NewPoisson(r, cfg.Seed+uint64(i))
	}
	o.stepTL = tl
	// Every shard plans the same durations: from the step's whole rate,
	// not its own share.
	if o.cur.lengthened > 0 {
		o.stepDur = o.cur.extend
	} else {
		o.stepDur = o.rule.duration(o.cur.rate)
		o.cur.planned = o.stepDur
	}
	o.cur.measured += o.stepDur
	tl, err := env.Place.Timeline(tl)
	if err != nil {
		o.judgeErr = usage.Flagf("shard", "{shard}: %v", err)
		return openloop.StepPlan{}, false
	}
	o.since = env.Server.MarkNodes(context.Background(), o.clusterNodes) // the seed's counters are not the cluster's
	if len(o.clusterNodes) == 0 {
		o.since = env.Server.Mark(context.Background())
	}
	stepDur, looks := o.stepDur, (*scheduler.Looks)(nil)
	o.looked = nil
	if budget := o.decideBudget(); budget > 0 {
		d := experiment.Decide{Budget: budget, Options: report.TestOptions{ID: j.ID}, SLO: cfg.SLO}
		stepDur, looks, o.looked = env.StepLooks(d, cfg.Open, cfg.Conns, name, tl, o.stepDur)
		o.cur.measured += stepDur - o.stepDur
	}
	var stop func()
	if env.Watch != nil {
		o.onStart, stop = env.Watch(experiment.Watched{Name: name, Test: j.Title, Mode: "open", Label: name})
	} else {
		o.onStart, stop = nil, func() {}
	}
	o.endStep = func() {
		stop()
		o.endStep = nil
	}
	return openloop.StepPlan{Name: name, Timeline: tl, Rate: r, Duration: stepDur, Settle: cfg.Settle,
		AbortAfter: cfg.AbortAfter, Start: env.Place.Instant(), Looks: looks}, true
}

// decideBudget is the budget the next step of a search gets to reach a
// verdict in (0: none): --decide-within; else, for a rate measured
// before (a contradiction, a failure to repeat, an inconclusive rate),
// three times its length. Not for a plain sweep, a lengthened point or
// shards (every shard must plan the same steps).
func (o *openSweep) decideBudget() time.Duration {
	cfg := o.cfg
	switch {
	case o.search == nil || cfg.SLO.IsZero() || o.env.Place.Sharded() || o.cur.lengthened > 0:
		return 0
	case cfg.Decide > 0:
		return max(cfg.Decide, o.stepDur)
	case len(o.byRate[o.cur.rate]) > 0:
		return 3 * o.stepDur
	}
	return 0
}

// finishStep completes a step's result and shows its line.
func (o *openSweep) finishStep(st *openloop.Step) {
	env := o.env
	env.Finish(st.Result) // as a run's: its handshakes, where the target runs, redacted
	env.Place.Started(st.Result)
	env.Place.Next(o.stepTL, o.cfg.Settle+o.stepDur, 0, o.cfg.Open.Drain)
	if o.looked != nil {
		o.looked(st.Result)
		o.looked = nil
	}
	if o.since != nil {
		o.stats[st] = o.since()
	}
	o.cur.steps = append(o.cur.steps, st)
	o.stepLine(st)
}

// stepLine shows a finished step's one-line summary. The step is judged
// alone (its verdict by the trust rule); its point is judged when its
// steps are pooled.
func (o *openSweep) stepLine(st *openloop.Step) {
	t, _, err := verdict.NewTest(st.Result, report.TestOptions{}, o.cfg.SLO)
	if err != nil { // said when the point is judged
		t, _, err = verdict.NewTest(st.Result, report.TestOptions{}, verdict.SLO{})
		if err != nil {
			return
		}
	}
	var b strings.Builder
	_ = text.Quiet(&b, t, report.TextOptions{})
	if st.Aborted {
		fmt.Fprintf(&b, "  aborted: %s\n", st.AbortReason)
	}
	o.cfg.print(b.String())
}

// newPoint starts a point at rate.
func (o *openSweep) newPoint(rate float64) *openPoint {
	return &openPoint{rate: rate, want: o.cfg.Repeat, StepJudgement: verdict.Unjudged()}
}

// lengthen decides whether the current point, its steps measured, runs
// one more step at its rate, and for how long (0: no). An uncertain
// point is lengthened (an open sweep with an SLO, not sharded: every
// shard must plan the same steps), doubling its measured time each time,
// to at most --repeat × the longest step (stepCap): then it is left
// uncertain. With --slo-window it is not: a longer step adds windows, not
// samples to a window.
func (o *openSweep) lengthen() time.Duration {
	p := o.cur
	if o.cfg.SLO.IsZero() || o.env.Place.Sharded() || o.rule.window > 0 || o.rule.metric == "" {
		return 0
	}
	if err := o.assess(p); err != nil || p.Decision != verdict.StepUncertain {
		return 0
	}
	d := min(p.measured, time.Duration(o.cfg.Repeat)*o.rule.cap-p.measured)
	d = d.Truncate(100 * time.Millisecond)
	if d < 100*time.Millisecond {
		return 0
	}
	return d
}

// closePoint judges the current point; with decide, it also picks the
// next rate (false: the sweep is over).
func (o *openSweep) closePoint(decide bool) (float64, bool) {
	cfg, p := o.cfg, o.cur
	if err := o.assess(p); err != nil {
		if o.judgeErr == nil {
			o.judgeErr = err
		}
		// Said when the sweep ends; the point is shown without its SLO.
		p.StepJudgement = verdict.Unjudged()
		p.test, _, _ = verdict.NewTest(p.pooled, report.TestOptions{ID: cfg.Test.ID}, verdict.SLO{})
	}
	if p.Decision == verdict.StepUncertain && p.Why != "" {
		switch {
		case o.rule.window > 0:
			p.Why += "; with --slo-window a longer step adds windows, not samples to a window"
		case p.lengthened > 0:
			p.Why += fmt.Sprintf(", after %s of steps at this rate", p.measured)
		}
	}
	o.index[p] = len(o.points)
	o.points = append(o.points, p)
	if !decide {
		return 0, false
	}
	if o.search != nil && len(o.byRate[p.rate]) > 0 {
		judgeAgain(p, o.byRate[p.rate], o.index)
	}
	o.byRate[p.rate] = append(o.byRate[p.rate], p)
	if o.search != nil {
		v := stepFail
		switch {
		case p.Pass != nil && *p.Pass:
			v = stepPass
		case p.Pass != nil && p.atOnce:
			v = stepSureFail
		case p.Pass != nil:
		case p.Decision == verdict.StepUncertain:
			v = stepUncertain
		case p.Decision == verdict.StepInconclusive:
			v = stepInconclusive
		default:
			v = stepUnjudged
		}
		return o.search.record(p.rate, v)
	}
	o.listIndex++
	if o.listIndex < len(cfg.Rates) {
		return cfg.Rates[o.listIndex], true
	}
	return 0, false
}

// assess pools a point's steps (and the server's counters over them) and
// judges it: judge.
func (o *openSweep) assess(p *openPoint) error {
	rs := make([]*scheduler.Result, len(p.steps))
	p.aborted, p.atOnce = false, false
	for k, st := range p.steps {
		rs[k] = st.Result
		p.aborted = p.aborted || st.Aborted
		p.atOnce = p.atOnce || st.Aborted && verdict.AbortedAtOnce(st.Result, o.cfg.AbortAfter)
	}
	p.pooled = scheduler.Pool(rs)
	p.server = nil
	for _, st := range p.steps {
		if s := o.stats[st]; s != nil {
			if p.server == nil {
				p.server = &serverinfo.Stats{}
			}
			p.server.Merge(s)
		}
	}
	p.pooled.Name = fmt.Sprintf("%s at %s/s", o.cfg.Test.Title, formatRate(p.rate))
	return o.judge(p)
}

// judge judges a point's pooled steps (verdict.Step): its SLO, the
// intervals of its percentile clauses, its samples and its trend.
func (o *openSweep) judge(p *openPoint) error {
	cfg := o.cfg
	opts := report.TestOptions{ID: cfg.Test.ID, Percentiles: true, CI: cfg.CI, Server: p.server}
	if len(p.steps) > 1 {
		for _, st := range p.steps {
			opts.Runs = append(opts.Runs, st.Response)
		}
	}
	t, j, err := verdict.NewTest(p.pooled, opts, cfg.SLO)
	if err != nil {
		return err
	}
	p.test = t
	f := verdict.StepFacts{Aborted: p.aborted}
	if t.SLO != nil {
		var wins []verdict.Window
		if cfg.SLO.Window > 0 {
			if wins, err = verdict.LatencyWindows(t, cfg.SLO.Window); err != nil {
				return err
			}
		}
		f.Intervals = verdict.PercentileIntervals(t.SLO, p.pooled.Response, wins)
		f.Short = o.rule.short(p.pooled, t.SLO)
		steps := make([]*scheduler.Result, len(p.steps))
		for k, st := range p.steps {
			steps[k] = st.Result
		}
		if f.Trend, err = pointTrend(steps); err != nil {
			return err
		}
	}
	p.StepJudgement = verdict.Step(t, j, f)
	p.short = nil
	if p.Decision == verdict.StepUnjudged {
		p.short = f.Short
	}
	return nil
}

// sustainable is the highest rate that met the SLO below the lowest that
// did not, in a plain sweep (0: none).
func sustainable(points []*openPoint) float64 {
	lowestFail := math.Inf(1)
	for _, p := range points {
		if p.Pass != nil && !*p.Pass {
			lowestFail = min(lowestFail, p.rate)
		}
	}
	best := 0.0
	for _, p := range points {
		if p.Pass != nil && *p.Pass && p.rate < lowestFail {
			best = max(best, p.rate)
		}
	}
	return best
}
