package report

// StepInfo places one test of an open sweep in the sweep (tests[].step).
type StepInfo struct {
	// Index counts the sweep's points from 0, in the order they ran.
	Index      int     `json:"index"`
	TargetRate float64 `json:"target_rate"`
	// Pass is the point's verdict against --slo (null without one, or
	// when InsufficientSamples left it unjudged): the SLO met, the load
	// delivered, and the step not aborted.
	Pass *bool `json:"pass"`
	// InsufficientSamples lists the SLO's percentile clauses (p99.9) the
	// point had too few samples for (fewer than histo.MinTailSamples
	// beyond the percentile): it is then neither passed nor failed.
	InsufficientSamples []string `json:"insufficient_samples,omitempty"`
	// PlannedS is the measured duration planned for each of its steps in
	// seconds: --step-duration, or longer when a percentile clause needs
	// the samples (the test's duration_s is what was measured).
	PlannedS float64 `json:"planned_s"`
	// Aborted: the step stopped early because its oldest unanswered
	// request waited longer than --abort-after (it then fails).
	Aborted     bool   `json:"aborted"`
	AbortReason string `json:"abort_reason,omitempty"`
	// Basis is what the verdict rests on: "response" times (absent
	// without an SLO). A step that would pass on service times only (the
	// send lag failed it) is inconclusive by the trust rule's attribution
	// (see Decision); documents of earlier versions may say "service".
	Basis string `json:"basis,omitempty"`
	// JudgedWith lists the earlier steps at the same rate (a search's
	// second look): Pass is then set when any of them or this one passed
	// (noise only adds latency), while the test's own figures and slo are
	// this step's.
	JudgedWith []int `json:"judged_with,omitempty"`
	// SettleS is the settle window sent before the measured part.
	SettleS float64 `json:"settle_s"`
	// Expired counts connections still awaiting replies after the step's
	// drain: closed (their requests are timeouts) and redialled.
	Expired int `json:"expired"`

	// Decision is how the point was judged against the SLO (absent
	// without one): "pass" (every clause met, and the 95% interval of
	// every percentile clause within its bound), "fail" (a clause the
	// server missed beyond doubt: the interval of a percentile clause
	// wholly above its bound), "unsustainable" (a failure: its latency
	// and its requests in flight rose through a step, see Trend),
	// "aborted" (a failure), "saturated" (a failure of the setup: the
	// test had the host to itself and needed more of it, see
	// verdict.OwnerCapacity),
	// "uncertain" (an interval straddled its
	// bound, even after lengthening), "inconclusive" (the miss was the
	// client's or its host's, or the load was not delivered) or
	// "unjudged" (too few samples). Pass is set for pass and the
	// failures, null for the others.
	Decision string `json:"decision,omitempty"`
	// Why says in a sentence what made a decision other than a plain
	// pass or fail.
	Why string `json:"why,omitempty"`
	// Intervals holds, for each clause that bounds a latency percentile
	// from above (p99<=5ms), the 95% confidence interval of that
	// percentile (order statistics, as --ci computes it) the decision
	// read.
	Intervals []StepInterval `json:"percentile_intervals,omitempty"`
	// Lengthened counts the steps added at its rate, beyond --repeat,
	// because an interval straddled its bound: the test's figures pool
	// them all.
	Lengthened int `json:"lengthened,omitempty"`
	// Trend is the test for a queue that grows through a step (absent
	// without an SLO, or when no step had two measured intervals).
	Trend *StepTrend `json:"trend,omitempty"`
}

// StepInterval is the 95% confidence interval of a percentile clause's
// percentile, in ms, at a step (tests[].step.percentile_intervals[]).
type StepInterval struct {
	// Clause is the clause as written; Metric its percentile (p99) and
	// Bound its bound in ms.
	Clause string  `json:"clause"`
	Metric string  `json:"metric"`
	Bound  float64 `json:"bound"`
	// Lo and Hi bound the percentile with 95% confidence; null where the
	// sample has no order statistic far enough out on that side.
	Lo *float64 `json:"lo"`
	Hi *float64 `json:"hi"`
	// Decision is "pass" (Hi within the bound), "fail" (Lo beyond it) or
	// "uncertain" (the bound lies inside the interval).
	Decision string `json:"decision"`
	// WindowS is, with --slo-window, the start in seconds of the window
	// the interval belongs to: the first that failed, or else the first
	// that was uncertain, or else the one nearest its bound.
	WindowS *float64 `json:"window_s,omitempty"`
}

// StepTrend is a one-sided Mann–Kendall test for an increasing trend,
// at Alpha, on the per-interval response p50 and on the requests in
// flight at each interval's end, over the measured intervals of each of
// a point's steps (the settle and the drain's tail left out): the step
// whose series come closest to a trend in both. A step is unsustainable
// when both rise (each p-value below Alpha, divided by the point's
// number of steps).
type StepTrend struct {
	// Intervals is how many intervals the test read (fewer than 5 cannot
	// reach α = 1%).
	Intervals int `json:"intervals"`
	// P50S and InFlightS are Kendall's S of the two series, P50P and
	// InFlightP their one-sided p-values (exact up to 10 intervals).
	P50S      int     `json:"p50_s"`
	P50P      float64 `json:"p50_p"`
	InFlightS int     `json:"in_flight_s"`
	InFlightP float64 `json:"in_flight_p"`
	Alpha     float64 `json:"alpha"`
	Rising    bool    `json:"rising"`
}

// Sweep is the document-level summary of `pacer sweep` (sweep).
type Sweep struct {
	// Mode is "open" (rates) or "closed" (connections × pipeline).
	Mode string `json:"mode"`
	// Search is set for --search.
	Search bool   `json:"search"`
	SLO    string `json:"slo,omitempty"`
	// SustainableRate is the highest target rate whose step met the SLO
	// (null when none did, or without an SLO): SustainableInterval[0].
	SustainableRate *float64 `json:"sustainable_rate"`
	// SustainableInterval is [lo, hi] with an SLO: lo the highest rate
	// that surely passed, hi the lowest above it that surely failed
	// (null: none).
	SustainableInterval []*float64 `json:"sustainable_interval,omitempty"`
	// Contradictions lists lower rates that failed while a higher one
	// passed (a search measures such a failure again before it claims
	// to have converged).
	Contradictions []Contradiction `json:"contradictions,omitempty"`
	// Precision is the search's relative precision (0.05 for 5%).
	Precision float64 `json:"precision,omitempty"`
	// Steps counts the points measured; Converged is set when the
	// search bracketed the sustainable rate within Precision (a plain
	// sweep that ran every point also converged).
	Steps     int    `json:"steps"`
	Converged bool   `json:"converged"`
	Reason    string `json:"reason"`
	// Outcome is the sweep's outcome (pass, fail, inconclusive, error),
	// the one its exit code reads; absent from older documents.
	Outcome string `json:"outcome,omitempty"`
	// Points and Knee describe a closed sweep.
	Points []ClosedPoint `json:"points,omitempty"`
	Knee   *ClosedPoint  `json:"knee,omitempty"`
}

// Contradiction is a rate that failed below one that passed.
type Contradiction struct {
	// LowerRate failed at the steps FailedSteps (and never passed);
	// HigherRate, the lowest rate above it that passed, passed at
	// PassedSteps. Persisting is set once the lower rate failed twice.
	LowerRate   float64 `json:"lower_rate"`
	FailedSteps []int   `json:"failed_steps"`
	HigherRate  float64 `json:"higher_rate"`
	PassedSteps []int   `json:"passed_steps"`
	Persisting  bool    `json:"persisting"`
}

// ClosedPoint is one point of a closed sweep (sweep.points[]).
type ClosedPoint struct {
	Index    int `json:"index"`
	Clients  int `json:"clients"`
	Pipeline int `json:"pipeline"`
	// Throughput is completed requests per second; the latencies are the
	// closed loop's (from the batch's send), in ms.
	Throughput float64 `json:"throughput"`
	MeanMs     float64 `json:"mean_ms"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	// LittleMs is what Little's law makes of the mean latency if every
	// request were always in flight: clients × pipeline ÷ throughput.
	// LittleRatio is LittleMs ÷ (MeanMs + the mean receive lag: for
	// Little's law a request is in flight until pacer reads its reply);
	// LittleMismatch is set when they differ by more than
	// LittleTolerance: time is spent outside the server's queue (on the
	// client, between a reply's read and the next send).
	LittleMs       float64 `json:"little_ms"`
	LittleRatio    float64 `json:"little_ratio"`
	LittleMismatch bool    `json:"little_mismatch"`
	// Knee marks the sweep's knee.
	Knee bool `json:"knee"`
	// Decision and Intervals are the point's judgement against the SLO
	// and the 95% intervals of its percentile clauses, as a step's (see
	// StepInfo); absent without an SLO.
	Decision  string         `json:"decision,omitempty"`
	Intervals []StepInterval `json:"percentile_intervals,omitempty"`
}
