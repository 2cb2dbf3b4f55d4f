package merge

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/report"
)

// BenchmarkMergeNodes measures matching the nodes of three shards.
func BenchmarkMergeNodes(b *testing.B) {
	t := &testing.T{}
	in := reporttest.Shards[Input](t, 3)
	for k := range in {
		in[k].Doc.Config["cluster"] = true
		list := make([]report.Node, 10000)
		for i := range list {
			list[i] = report.Node{Addr: "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250) + ":7000", ID: fmt.Sprintf("%040d", i)}
		}
		in[k].Doc.Tests[0].Nodes = list
	}
	b.ResetTimer()
	for range b.N {
		if _, err := mergeNodes([]report.Test{in[0].Doc.Tests[0], in[1].Doc.Tests[0], in[2].Doc.Tests[0]}, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeIntervals measures merging the intervals of three shards,
// per interval.
func BenchmarkMergeIntervals(b *testing.B) {
	t := &testing.T{}
	var parts []report.Test
	for k := 1; k <= 3; k++ {
		parts = append(parts, reporttest.Craft(t, report.SyntheticRun{Name: "GET", Mode: "open", Rate: 3000, Seconds: 20, Base: 0.1 * float64(k), Interval: 0.1, Seed: uint64(k)}))
	}
	b.ResetTimer()
	for range b.N {
		if _, err := mergeIntervals(parts, func(p report.Test) []report.Interval { return p.Intervals }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(parts[0].Intervals)), "ns/interval")
}
