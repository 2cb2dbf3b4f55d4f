package verdict_test

import (
	"fmt"

	"github.com/pacer-load/pacer/verdict"
)

// A command that judged two tests exits with the worse of their outcomes:
// a run that cannot be trusted outranks a server that missed.
func ExampleWorse() {
	o := verdict.Worse(verdict.Fail, verdict.Inconclusive)
	fmt.Println(o, o.ExitCode())
	// Output: inconclusive 4
}
