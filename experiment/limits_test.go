package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
)

// setTest is redis-benchmark's SET with values of size bytes.
func setTest(t *testing.T, size int) Test {
	t.Helper()
	s, err := scenarios.Workload{Tests: "set", TestsGiven: true, Sizes: scenarios.FixedSize(size)}.Build(context.Background())
	if err != nil || len(s.Tests) != 1 {
		t.Fatalf("%v, %d tests", err, len(s.Tests))
	}
	return Test{ID: "set", Title: s.Tests[0].Title, Recipe: s.Tests[0].Recipe}
}

// TestLimits: a closed loop that could hold more than MaxClosedInFlight
// bytes, and a command larger than the write buffer, are usage errors
// naming the settings; a fixed command (no recipe) and what fits pass.
func TestLimits(t *testing.T) {
	t.Parallel()
	big, small := setTest(t, 100000), setTest(t, 100)
	fixed := Command("ping", "PING", "PING")
	if err := CheckClosedBudget([]Test{small, fixed}, 50, 16); err != nil {
		t.Errorf("50 × 16 × ~150 B refused: %v", err)
	}
	err := CheckClosedBudget([]Test{small, big}, 1000, 100)
	if !usage.Is(err) || !strings.HasPrefix(err.Error(), "Conns 1000 × Pipeline 100 × 100047 (the largest command of SET)") {
		t.Errorf("1000 × 100 × 100 KB: %v, want a usage error naming the settings", err)
	}
	if err := CheckMaxBuffer([]Test{small, fixed}, 64<<10); err != nil {
		t.Errorf("150 B in a 64 KiB buffer refused: %v", err)
	}
	if err := CheckMaxBuffer([]Test{big}, 64<<10); !usage.Is(err) || !strings.Contains(err.Error(), "MaxBuffer") {
		t.Errorf("100 KB in a 64 KiB buffer: %v, want a usage error naming MaxBuffer", err)
	}
}
