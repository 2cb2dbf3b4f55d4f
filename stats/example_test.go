package stats_test

import (
	"fmt"

	"github.com/pacer-load/pacer/stats"
)

// Three runs of a baseline and three of a candidate, each run's p99 in
// milliseconds: the candidate is about 30% slower, and the spread between
// runs is small enough to say so.
func ExampleChangeOverRuns() {
	base := []float64{1.02, 0.97, 1.05}
	cand := []float64{1.31, 1.36, 1.28}
	c, err := stats.ChangeOverRuns(base, cand, stats.Relative, stats.Level)
	if err != nil {
		panic(err)
	}
	word, _ := c.Classify(0.05, stats.HigherIsWorse)
	fmt.Printf("p99 %.3f → %.3f ms: %+.1f%% [%+.1f%%, %+.1f%%] %s (%s, %d runs)\n",
		c.Base, c.Cand, 100*c.Estimate, 100*c.Lo, 100*c.Hi, word, c.Method, c.N)
	// Output: p99 1.013 → 1.316 ms: +30.0% [+19.6%, +41.2%] worse (runs, 6 runs)
}
