package bench_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/bench"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// Run sends each test's requests in redis-benchmark's closed loop and
// writes its report as redis-benchmark would (here -q's line, to Out);
// Result.Tests pools each test's runs for a result document.
func ExampleRun() {
	srv, err := embedded.Start(embedded.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr()) // the embedded target shares this process: for the verdict's attribution
	get := bench.Test{Test: experiment.Command("get", "GET", "GET", "key")}
	res, err := bench.Run(context.Background(), env, bench.Config{
		Tests: []bench.Test{get}, Clients: 2, Requests: 1000, Pipeline: 1, Repeat: 2, Quiet: true, Keep: true,
	}, bench.Output{
		Out: io.Discard, // os.Stdout prints "GET: 48123.45 requests per second, p50=0.031 msec" per run
		Err: io.Discard, // the repeats' median and min–max
		Judged: func(t *report.Test, j verdict.Judgement) {
			fmt.Println("a run of", t.Counts.Completed, "requests:", j.Verdict)
		},
	})
	if err != nil || res.Err != nil {
		log.Fatal(err, res.Err)
	}
	tests, err := res.Tests()
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tests {
		fmt.Println(t.Name, t.Counts.Completed, "requests in", t.Repeats.N, "runs")
	}
	// Output:
	// a run of 1000 requests: ok
	// a run of 1000 requests: ok
	// GET 2000 requests in 2 runs
}
