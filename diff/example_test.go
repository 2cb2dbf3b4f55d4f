package diff_test

import (
	"fmt"

	"github.com/pacer-load/pacer/diff"
)

// A gate of two clauses held to a comparison's intervals: the p99 is
// surely more than 10% worse (its interval's better end is +12%), so the
// gate fails, whatever the throughput's clause says.
func ExampleGate_Decide() {
	g, err := diff.ParseGate("p99:10%,throughput:5%")
	if err != nil {
		panic(err)
	}
	pct := func(v float64) *float64 { return &v }
	d := &diff.Document{Tests: []diff.Test{{Name: "GET", Figures: []diff.Figure{
		{Figure: "p99", Unit: "ms", ChangePct: pct(20), IntervalPct: diff.Ends(12, 28)},
		{Figure: "throughput", Unit: "req/s", ChangePct: pct(-1), IntervalPct: diff.Ends(-3, 2)},
	}}}}
	out := g.Decide(d)
	fmt.Println(out.Outcome+":", out.Reason)
	fmt.Println("exit", diff.Outcome(&diff.Document{Gate: &out}).ExitCode())
	// Output:
	// fail: p99 of GET: +20.0% [+12.0%, +28.0%] is surely beyond the 10% allowance
	// exit 3
}
