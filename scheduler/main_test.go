package scheduler

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/testrun"
)

// The tests here are arithmetic on results and series; those that count
// allocations (process-wide) or memory run one at a time, the others may
// call t.Parallel. Every goroutine a series starts ends with it.
func TestMain(m *testing.M) {
	flag.Parse()
	testrun.ParallelByDefault(6)
	goleak.VerifyTestMain(m)
}
