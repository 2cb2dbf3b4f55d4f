package replay_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/replay"
	"github.com/pacer-load/pacer/scheduler/openloop"
)

// A replay reads a trace more than once: Scan checks it and plans (what
// --dry-run prints), Run sends it on its own timeline, request i at
// t0 + (tᵢ − t₀)/speed, whatever the server does.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "replay")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	trace := filepath.Join(dir, "monitor.txt") // what redis-cli MONITOR printed
	err = os.WriteFile(trace, []byte(`1700000000.000000 [0 127.0.0.1:50000] "SET" "a" "1"
1700000000.010000 [0 127.0.0.1:50000] "SET" "b" "2"
1700000000.020000 [0 127.0.0.1:50001] "GET" "a"
1700000000.040000 [0 127.0.0.1:50001] "GET" "b"
`), 0o600)
	if err != nil {
		log.Fatal(err)
	}

	cfg := replay.Config{Path: trace, Speed: 2, Loops: 1, Conns: 2}
	plan, err := replay.Scan(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close()
	// plan.Text() is the plan in words, as --dry-run prints it.
	fmt.Println(plan.Requests, "requests over", plan.Span, "at speed", plan.Speed, plan.Names)

	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	env := experiment.InProcessEnv(srv.Addr()) // the embedded target shares this process: for the verdict's attribution
	res, _, err := replay.Run(context.Background(), env, cfg, plan, "monitor.txt", openloop.Config{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Counts.Completed, "completed")
	// Output:
	// 4 requests over 20ms at speed 2 [GET SET]
	// 4 completed
}
