package sweep

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacer-load/pacer/report"
)

// A closed sweep's reading: Little's law at each point (how much of the
// latency the server's queue explains) and the knee of the curve.

// LittleTolerance is the relative difference between Little's law and the
// measured mean latency above which a closed point is flagged.
const LittleTolerance = 0.10

// little fills p's Little's-law fields from its clients, pipeline,
// throughput and mean latency. For Little's law a request is in flight
// from its send until pacer reads its reply, so the ratio is taken
// against the mean latency (to the kernel's receive timestamp) plus
// rxLagMs, the mean receive lag (zero under the read clock).
func little(p *report.ClosedPoint, rxLagMs float64) {
	p.LittleMs, p.LittleRatio, p.LittleMismatch = 0, 0, false
	if p.Throughput <= 0 || p.MeanMs <= 0 {
		return
	}
	p.LittleMs = float64(p.Clients*p.Pipeline) / p.Throughput * 1000
	p.LittleRatio = p.LittleMs / (p.MeanMs + rxLagMs)
	p.LittleMismatch = math.Abs(p.LittleRatio-1) > LittleTolerance
}

// Knee thresholds: the knee is the first point whose throughput rose by
// less than KneeThroughputGain over the point before while its p99 grew
// by more than KneeP99Growth.
const (
	KneeThroughputGain = 0.05
	KneeP99Growth      = 0.20
)

// FindKnee returns the index in pts of the knee, -1 when there is none.
// pts are in the order of increasing load.
func FindKnee(pts []report.ClosedPoint) int {
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if a.Throughput <= 0 || a.P99Ms <= 0 {
			continue
		}
		if b.Throughput < a.Throughput*(1+KneeThroughputGain) && b.P99Ms > a.P99Ms*(1+KneeP99Growth) {
			return i
		}
	}
	return -1
}

// writeClosedSweep writes a closed sweep's table and names its knee.
func writeClosedSweep(w io.Writer, pts []report.ClosedPoint, knee int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "  %7s %8s %12s %9s %9s %9s %10s %7s  %s\n",
		"clients", "pipeline", "req/s", "mean ms", "p50 ms", "p99 ms", "little ms", "ratio", "")
	for _, p := range pts {
		note := ""
		if p.LittleMismatch {
			note = "little: mismatch"
		}
		if p.Knee {
			note = strings.TrimSpace("knee " + note)
		}
		fmt.Fprintf(&b, "  %7d %8d %12.1f %9.3f %9.3f %9.3f %10.3f %7.3f  %s\n",
			p.Clients, p.Pipeline, p.Throughput, p.MeanMs, p.P50Ms, p.P99Ms, p.LittleMs, p.LittleRatio, note)
	}
	if knee >= 0 {
		p := pts[knee]
		fmt.Fprintf(&b, "  knee: -c %d -P %d (throughput %+.1f%%, p99 %+.1f%% over the point before)\n",
			p.Clients, p.Pipeline, 100*(p.Throughput/pts[knee-1].Throughput-1), 100*(p.P99Ms/pts[knee-1].P99Ms-1))
	} else {
		fmt.Fprintf(&b, "  knee: none in this range (no point gained < %.0f%% throughput while p99 grew > %.0f%%)\n",
			100*KneeThroughputGain, 100*KneeP99Growth)
	}
	fmt.Fprintf(&b, "  little ms = clients × pipeline ÷ throughput; ratio = little ÷ (mean + receive lag), flagged beyond ±%.0f%%\n", 100*LittleTolerance)
	_, err := io.WriteString(w, b.String())
	return err
}
