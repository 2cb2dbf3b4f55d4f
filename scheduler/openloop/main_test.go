package openloop

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/internal/testrun"
)

// Most tests here judge pacing, lag or how many requests a fault caught
// in flight, and run one at a time. Those that judge only exact counts,
// routing or how a fault is accounted for (and no allocation count,
// which is process-wide) call t.Parallel: they mostly wait on servers,
// and go test runs them side by side after the others.
func TestMain(m *testing.M) {
	if sink.IsChild() { // the test binary as the latency referee
		os.Exit(sink.RunChild())
	}
	flag.Parse()
	testrun.ParallelByDefault(6)
	goleak.VerifyTestMain(m)
}
