package peers_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/pacer-load/pacer/report/peers"
)

// ReadInput reads redis-benchmark's --csv as closed-loop tests matched to
// pacer's own by name, and says what the format does not carry.
func ExampleReadInput() {
	csv := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"GET","48780.49","0.537","0.296","0.495","0.847","1.423","1.775"
`
	in, err := peers.ReadInput("bench.csv", []byte(csv))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range in.Doc.Tests {
		fmt.Printf("%s (%s, %s): %.2f req/s, p99 %.3f ms\n", t.Name, t.ID, t.Mode, t.AchievedRate, t.ResponseMs.P99)
	}
	fmt.Println("lacks", strings.Join(in.Lacks, ", "))
	// Output:
	// GET (get, closed): 48780.49 req/s, p99 1.423 ms
	// lacks p90, p99.9, p99.99, counts, histograms, intervals, service time, send lag, verdicts
}
