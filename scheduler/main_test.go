package scheduler

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/sink"
)

func TestMain(m *testing.M) {
	if sink.IsChild() { // the test binary as the latency referee
		os.Exit(sink.RunChild())
	}
	goleak.VerifyTestMain(m)
}
