package sweep

import (
	"fmt"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/verdict"
)

// document fills the result's tests (one per point) and the sweep's
// summary.
func (o *openSweep) document(res *Result) error {
	cfg := o.cfg
	sloSet := !cfg.SLO.IsZero()
	for i, p := range o.points {
		t := *p.test
		info := &report.StepInfo{Index: i, TargetRate: p.rate, Pass: p.Pass, Aborted: p.aborted, SettleS: cfg.Settle.Seconds(),
			JudgedWith: p.judgedWith, InsufficientSamples: p.short, PlannedS: p.planned.Seconds(),
			Decision: string(p.Decision), Why: p.Why, Intervals: p.Intervals, Lengthened: p.lengthened, Trend: p.Trend}
		if sloSet {
			info.Basis = "response"
		}
		for _, st := range p.steps {
			info.Expired += st.Expired
			if st.Aborted && info.AbortReason == "" {
				info.AbortReason = st.AbortReason
			}
		}
		t.Step = info
		if cfg.Repeat > 1 {
			var err error
			if t.Repeats, err = verdict.Repeats(stepResults(p.steps), report.TestOptions{ID: cfg.Test.ID, Percentiles: true, CI: cfg.CI}, cfg.SLO); err != nil {
				return err
			}
		}
		res.Tests = append(res.Tests, t)
	}
	sw := &report.Sweep{Mode: "open", Search: o.search != nil, Steps: len(o.points)}
	if sloSet {
		sw.SLO = cfg.SLO.Spec
	}
	var best, fails float64
	switch s := o.search; {
	case s != nil:
		sw.Precision = cfg.Precision
		best, fails = s.sustainable(), s.hi
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
	if sloSet {
		passedAt, failedAt := map[float64][]int{}, map[float64][]int{}
		for i, p := range o.points {
			switch {
			case p.Pass == nil:
			case *p.Pass:
				passedAt[p.rate] = append(passedAt[p.rate], i)
			default:
				failedAt[p.rate] = append(failedAt[p.rate], i)
			}
		}
		if o.search == nil {
			for r := range failedAt {
				if len(passedAt[r]) == 0 && r > best && (fails == 0 || r < fails) {
					fails = r
				}
			}
		}
		sw.SustainableInterval = []*float64{nil, nil}
		if best > 0 {
			sw.SustainableRate = &best
			sw.SustainableInterval[0] = &best
		}
		if fails > 0 {
			sw.SustainableInterval[1] = &fails
		}
		sw.Contradictions = contradictionsOf(passedAt, failedAt, false)
	}
	res.Sweep = sw
	return nil
}

func stepResults(steps []*openloop.Step) []*scheduler.Result {
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
	rows := make([]text.OpenRow, len(o.points))
	for i, p := range o.points {
		rows[i] = text.NewOpenRow(p.test, p.Pass, p.aborted)
		rows[i].JudgedWith, rows[i].Unjudged = p.judgedWith, p.short
		// Seconds per repeat: a lengthened point's are all its steps'.
		rows[i].Seconds /= float64(max(1, min(len(p.steps), cfg.Repeat)))
		rows[i].Decision = string(p.Decision)
		if p.Shown >= 0 && p.Shown < len(p.Intervals) {
			rows[i].Interval = &p.Intervals[p.Shown]
		}
		if p.Note != "" {
			rows[i].Notes = append(rows[i].Notes, p.Note)
		}
		if p.lengthened > 0 {
			rows[i].Notes = append(rows[i].Notes, "lengthened")
		}
	}
	if err := text.WriteOpenSweep(&b, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Interval != nil {
			fmt.Fprintf(&b, "  slo: [lo, hi] is the 95%% interval of the percentile in ms; a step passes when hi is within the bound, fails when lo is beyond it\n")
			break
		}
	}
	for i, p := range o.points {
		if p.Why != "" && p.Decision != verdict.StepUnjudged {
			fmt.Fprintf(&b, "  step %d at %s/s: %s\n", i, formatRate(p.rate), safetext.Escape(p.Why))
		}
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
			if err := text.WriteNotes(&b, p.test, cfg.CI, rep); err != nil {
				return err
			}
		}
		if nodes {
			if err := text.WriteNodes(&b, p.test); err != nil {
				return err
			}
		}
	}
	sw := res.Sweep
	if sloSet {
		b.WriteString(sustainableLine(sw, cfg.SLO.Spec))
		if line := contradictionLine(sw.Contradictions); line != "" {
			b.WriteString(line)
		}
	}
	b.WriteString("\n")
	res.Text = b.String()
	return nil
}

// sustainableLine states the sustainable rate as an interval: "
// sustainable rate: 1,800/s surely passes, 2,200/s surely fails
// (p99<=1ms): converged: …".
func sustainableLine(sw *report.Sweep, spec string) string {
	var lo, hi float64
	if iv := sw.SustainableInterval; len(iv) == 2 {
		if iv[0] != nil {
			lo = *iv[0]
		}
		if iv[1] != nil {
			hi = *iv[1]
		}
	}
	var s string
	switch {
	case lo > 0 && hi > 0:
		s = fmt.Sprintf("%s/s surely passes, %s/s surely fails (%s)", groupRate(lo), groupRate(hi), spec)
	case lo > 0:
		s = fmt.Sprintf("%s/s surely passes, no rate above it surely failed (%s)", groupRate(lo), spec)
	case hi > 0:
		s = fmt.Sprintf("none: no step met %s; %s/s surely fails", spec, groupRate(hi))
	default:
		s = fmt.Sprintf("none: no step met %s", spec)
	}
	return fmt.Sprintf("  sustainable rate: %s: %s\n", s, sw.Reason)
}

// contradictionLine says in one line which rates failed below one that
// passed ("" for none).
func contradictionLine(cs []report.Contradiction) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		times := "once, not measured again"
		if c.Persisting {
			times = fmt.Sprintf("%d times", len(c.FailedSteps))
		}
		parts[i] = fmt.Sprintf("%s/s failed (%s) below %s/s, which passed", groupRate(c.LowerRate), times, groupRate(c.HigherRate))
	}
	return "  contradicting results: " + strings.Join(parts, "; ") + "\n"
}

// groupRate prints a rate with thousands separators: 1,800; 2.5.
func groupRate(r float64) string {
	s := formatRate(r)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
