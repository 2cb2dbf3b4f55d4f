package sweep

import (
	"fmt"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// document fills the result's tests (one per point) and the sweep's
// summary.
func (o *openSweep) document(res *Result) error {
	cfg := o.cfg
	sloSet := !cfg.SLO.IsZero()
	for i, p := range o.points {
		t := *p.test
		info := &report.StepInfo{Index: i, TargetRate: p.rate, Pass: p.pass, Aborted: p.aborted, SettleS: cfg.Settle.Seconds(),
			Basis: basis(sloSet, p.onService), JudgedWith: p.judgedWith, InsufficientSamples: p.short, PlannedS: p.planned.Seconds()}
		for _, st := range p.steps {
			info.Expired += st.Expired
			if st.Aborted && info.AbortReason == "" {
				info.AbortReason = st.AbortReason
			}
		}
		t.Step = info
		if cfg.Repeat > 1 {
			var err error
			if t.Repeats, err = report.RepeatsOf(stepResults(p.steps), report.TestOptions{ID: cfg.Test.ID, SLO: cfg.SLO, Percentiles: true, CI: cfg.CI}); err != nil {
				return err
			}
		}
		res.Tests = append(res.Tests, t)
	}
	sw := &report.Sweep{Mode: "open", Search: o.search != nil, Steps: len(o.points)}
	if sloSet {
		sw.SLO = cfg.SLO.Spec
	}
	var best float64
	switch s := o.search; {
	case s != nil:
		sw.Precision = cfg.Precision
		best = s.sustainable()
		sw.Converged = s.converged
		sw.Reason = s.reason
		if !s.done {
			sw.Reason = "interrupted"
		}
	default:
		best = sustainable(o.points)
		sw.Converged = len(o.points) == len(cfg.Rates)
		sw.Reason = fmt.Sprintf("%d of %d rates measured", len(o.points), len(cfg.Rates))
	}
	if sloSet && best > 0 {
		sw.SustainableRate = &best
	}
	res.Sweep = sw
	return nil
}

func stepResults(steps []*scheduler.Step) []*scheduler.Result {
	rs := make([]*scheduler.Result, len(steps))
	for k, st := range steps {
		rs[k] = st.Result
	}
	return rs
}

// text writes the step table, each point's notes and the conclusion.
func (o *openSweep) text(res *Result) error {
	cfg := o.cfg
	sloSet := !cfg.SLO.IsZero()
	var b strings.Builder
	what := "sweep"
	if o.search != nil {
		what = "search"
	}
	steps := cfg.StepDuration.String()
	if rule := newSampleRule(cfg.SLO, cfg.StepDuration); sloSet && rule.metric != "" && rule.window == 0 && rule.cap > cfg.StepDuration {
		steps += fmt.Sprintf(" (up to %s where %s needs the samples)", rule.cap, rule.metric)
	}
	conns := fmt.Sprintf("%d connections", cfg.Conns)
	if o.env.Target.Cluster {
		conns += " per primary"
	}
	fmt.Fprintf(&b, "====== %s: %s, %s, steps of %s after a %s settle ======\n",
		what, safetext.Escape(cfg.Test.Title), conns, steps, cfg.Settle)
	rows := make([]report.OpenRow, len(o.points))
	for i, p := range o.points {
		rows[i] = report.NewOpenRow(p.test, p.pass, p.aborted)
		rows[i].OnService, rows[i].JudgedWith, rows[i].Unjudged = p.onService, p.judgedWith, p.short
		rows[i].Seconds /= float64(max(1, len(p.steps)))
	}
	if err := report.WriteOpenSweep(&b, rows); err != nil {
		return err
	}
	for i, p := range o.points {
		// A cluster's per-node table, as run prints it (not with -q).
		nodes := !cfg.Quiet && len(p.pooled.Nodes) > 0
		if !cfg.CI && cfg.Repeat == 1 && !nodes {
			continue
		}
		fmt.Fprintf(&b, "  step %d at %s/s:\n", i, formatRate(p.rate))
		if cfg.CI || cfg.Repeat > 1 {
			var rep *report.Repeats
			if cfg.Repeat > 1 {
				rep = res.Tests[i].Repeats
			}
			if err := report.WriteNotes(&b, p.test, cfg.CI, rep); err != nil {
				return err
			}
		}
		if nodes {
			if err := report.WriteNodes(&b, p.test); err != nil {
				return err
			}
		}
	}
	sw := res.Sweep
	switch {
	case !sloSet:
	case sw.SustainableRate != nil:
		fmt.Fprintf(&b, "  sustainable rate: %s/s meets %s (%s)\n", formatRate(*sw.SustainableRate), cfg.SLO.Spec, sw.Reason)
	default:
		fmt.Fprintf(&b, "  sustainable rate: none: no step met %s (%s)\n", cfg.SLO.Spec, sw.Reason)
	}
	b.WriteString("\n")
	res.Text = b.String()
	return nil
}
