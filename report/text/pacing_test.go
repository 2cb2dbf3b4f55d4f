package text

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// A test whose auto pacing stepped back says so on its open model line and
// on a line of its own, with the idle CPU that decided; one that kept its
// pacing has no such line.
func TestPacingStepIsShown(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample()
	r.Pacing, r.PacingQuantum = "auto", 0
	var b strings.Builder
	if err := Text(&b, reporttest.AsTest(t, r), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "auto pacing (precise)") || strings.Contains(out, "pacing step") {
		t.Fatalf("kept its pacing:\n%s", out)
	}
	r.PacingSteps = []scheduler.PacingStep{
		{At: 201 * time.Millisecond, To: 300 * time.Microsecond, HostIdleCPUs: 0.29, HostBusy: 0.855, Self: 0.64, Window: 200 * time.Millisecond},
		{At: 402 * time.Millisecond, From: 300 * time.Microsecond, To: 600 * time.Microsecond, HostIdleCPUs: 0.1, HostBusy: 0.95, Self: 0.3, Window: 200 * time.Millisecond},
	}
	b.Reset()
	if err := Text(&b, reporttest.AsTest(t, r), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"auto pacing (precise, then from 0.201 s a 300 µs quantum, from 0.402 s a 600 µs quantum)",
		"  pacing step    from precise to a 300 µs quantum at 0.201 s: the host's CPUs had 0.29 of a CPU idle over 0.2 s (86% busy; pacer 0.64 CPUs)",
		"  pacing step    from 300 µs quantum to a 600 µs quantum at 0.402 s: the host's CPUs had 0.10 of a CPU idle over 0.2 s (95% busy; pacer 0.30 CPUs)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
