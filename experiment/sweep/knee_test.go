package sweep

import (
	"testing"

	"github.com/pacer-load/pacer/report"
)

func TestLittle(t *testing.T) {
	for _, c := range []struct {
		name               string
		clients, pipeline  int
		throughput, meanMs float64
		littleMs, ratio    float64
		mismatch           bool
		rxLagMs            float64
	}{
		// 10 clients, 10k req/s: each request spends 1 ms in flight.
		{"server-bound", 10, 1, 10000, 1.0, 1.0, 1.0, false, 0},
		{"within 10%", 10, 1, 10000, 0.92, 1.0, 1.0 / 0.92, false, 0},
		// Half the time is spent between a reply and the next send.
		{"client-bound", 10, 1, 5000, 1.0, 2.0, 2.0, true, 0},
		// 4 × 16 = 64 in flight at 64k req/s: 1 ms.
		{"pipelined", 4, 16, 64000, 1.0, 1.0, 1.0, false, 0},
		{"nothing completed", 10, 1, 0, 1.0, 0, 0, false, 0},
		// Replies waited 0.5 ms in the socket for pacer to read them
		// (receive lag): in flight for Little's law, not the server's.
		{"receive lag", 10, 1, 10000, 0.5, 1.0, 1.0, false, 0.5},
		{"receive lag not counted", 10, 1, 10000, 0.5, 1.0, 2.0, true, 0},
	} {
		p := report.ClosedPoint{Clients: c.clients, Pipeline: c.pipeline, Throughput: c.throughput, MeanMs: c.meanMs}
		little(&p, c.rxLagMs)
		if !near(p.LittleMs, c.littleMs) || !near(p.LittleRatio, c.ratio) || p.LittleMismatch != c.mismatch {
			t.Errorf("%s: little %.4f ms, ratio %.4f, mismatch %v; want %.4f, %.4f, %v",
				c.name, p.LittleMs, p.LittleRatio, p.LittleMismatch, c.littleMs, c.ratio, c.mismatch)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestFindKnee(t *testing.T) {
	pt := func(x, p99 float64) report.ClosedPoint { return report.ClosedPoint{Throughput: x, P99Ms: p99} }
	for _, c := range []struct {
		name string
		pts  []report.ClosedPoint
		want int
	}{
		{"none: throughput keeps rising", []report.ClosedPoint{pt(10, 1), pt(50, 1.1), pt(100, 1.5)}, -1},
		// +2% throughput, +100% p99 at the third point.
		{"saturation", []report.ClosedPoint{pt(10, 1), pt(50, 1.1), pt(51, 2.2), pt(51, 9)}, 2},
		// Flat throughput but p99 only +10%: not yet.
		{"flat and calm", []report.ClosedPoint{pt(100, 1), pt(101, 1.1), pt(102, 1.5)}, 2},
		{"exactly 5% gain is still a gain", []report.ClosedPoint{pt(100, 1), pt(105, 2)}, -1},
		{"exactly 20% growth is not the knee", []report.ClosedPoint{pt(100, 1), pt(100, 1.2)}, -1},
		{"a point with nothing measured is skipped", []report.ClosedPoint{pt(0, 0), pt(100, 1), pt(100, 5)}, 2},
		{"one point", []report.ClosedPoint{pt(100, 1)}, -1},
	} {
		if got := FindKnee(c.pts); got != c.want {
			t.Errorf("%s: knee %d, want %d", c.name, got, c.want)
		}
	}
}
