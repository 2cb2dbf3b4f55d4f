package merge_test

import (
	"fmt"
	"log"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
)

// Merge adds up the shards of one run: two halves of a 2000/s timeline
// make one test of twice the requests.
func ExampleMerge() {
	var in []merge.Input
	for k := 1; k <= 2; k++ {
		test, err := report.Synthetic(report.SyntheticRun{Name: "GET", Mode: "open", Rate: 1000, Seconds: 1, Base: 0.1, Interval: 0.5, Seed: uint64(k)})
		if err != nil {
			log.Fatal(err)
		}
		test.ID = "get"
		d := report.SyntheticDocument("open", test)
		d.Config = map[string]any{"rate": 2000.0, "tests": []any{"get"}, "seed_str": "7", "duration_s": 1.0}
		d.Shard = &report.Shard{K: k, N: 2}
		in = append(in, merge.Input{Label: fmt.Sprintf("shard-%d.json", k), Doc: d})
	}
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		log.Fatal(err)
	}
	t := doc.Tests[0]
	fmt.Printf("%s: %d completed of %d scheduled, %d intervals\n", t.Name, t.Counts.Completed, t.Counts.Scheduled, len(t.Intervals))
	// Output: GET: 2000 completed of 2000 scheduled, 2 intervals
}
