package report

// The words of a test's JSON field "verdict": what the trust rule
// (verdict.Judge) concluded of the generator and the target, beside the
// test's outcome ("outcome": pass, fail, inconclusive, error).

// Verdicts.
const (
	VerdictOK              = "ok"
	VerdictGeneratorBehind = "generator_behind"
	// VerdictTargetLost: the server went away (every connection gone and
	// none back by the end of the timeline) or nothing completed.
	VerdictTargetLost = "target_lost"
	// VerdictInconclusive: the SLO failed, and the client's parts (its
	// send or receive lag) or its host's noise could explain every failing
	// clause: whether the server missed cannot be told (exit 4).
	VerdictInconclusive = "inconclusive"
)
