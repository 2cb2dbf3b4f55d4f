package closedloop

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/testrun"
)

// The tests that judge only exact counts or how a fault is accounted for
// (and no allocation count, which is process-wide) call t.Parallel: they
// mostly wait on servers. Every goroutine a run starts ends with it.
func TestMain(m *testing.M) {
	flag.Parse()
	testrun.ParallelByDefault(6)
	goleak.VerifyTestMain(m)
}
