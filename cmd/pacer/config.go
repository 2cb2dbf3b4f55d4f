package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// commonConfig holds the settings every load command writes in its JSON
// config under the same keys (report.RunConfig, which defines them);
// what only one command has goes in its extra keys.
type commonConfig struct {
	target, embedded string
	dial             conn.Options
	conns, pipeline  int
	sizes            scenarios.Sizes
	keyspace         uint64
	keyDist          scenarios.KeyDist
	seed             uint64
	tests            []string
	rate             scheduler.Rate
	duration         time.Duration
	requests         uint64
}

// echo returns the config: the common keys over the command's extra keys,
// with the user's text (target, command, test) redacted.
func (cc commonConfig) echo(ctx context.Context, extra map[string]any) map[string]any {
	return report.RunConfig{Target: cc.target, Embedded: cc.embedded, Dial: cc.dial, Conns: cc.conns, Pipeline: cc.pipeline,
		Sizes: cc.sizes, Keyspace: cc.keyspace, KeyDist: cc.keyDist, Seed: cc.seed, Tests: cc.tests, Rate: cc.rate,
		Duration: cc.duration, Requests: cc.requests}.Echo(extra, secretsFrom(ctx).Redact)
}

// testIDs lists the IDs of a workload's tests.
func testIDs(w *workload) []string {
	ids := make([]string, len(w.tests))
	for i, t := range w.tests {
		ids[i] = t.id()
	}
	return ids
}

// faultsOf describes the embedded target's faults for the config ("" when
// srv is nil: the target is not embedded).
func faultsOf(srv *embedded.Server) string {
	if srv == nil {
		return ""
	}
	return srv.Faults().String()
}

// printSeed ends a human summary with the seed, so the run can be
// repeated exactly.
func printSeed(w io.Writer, seed uint64) {
	fmt.Fprintf(w, "seed %d (--seed to repeat)\n", seed)
}
