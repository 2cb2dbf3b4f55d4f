package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pacer-load/pacer/report"
)

// echoConfig is the JSON config of a command: the keys every load
// command writes the same way (report.RunConfig, which defines them) over
// the command's own extra keys, with the user's text (target, command,
// test) redacted.
func echoConfig(ctx context.Context, rc report.RunConfig, extra map[string]any) map[string]any {
	return rc.Echo(extra, secretsFrom(ctx).Redact)
}

// echoWork is echoConfig of a command that sends a workload: rc with the
// workload's sizes, keyspace, key distribution and tests, and for a lone
// custom command or mix its title as "command".
func echoWork(ctx context.Context, rc report.RunConfig, w *workload, extra map[string]any) map[string]any {
	rc.Sizes, rc.Keyspace, rc.KeyDist = w.opts.Sizes, w.opts.Keyspace, w.keys
	for _, t := range w.tests {
		rc.Tests = append(rc.Tests, t.ID)
	}
	if len(w.tests) == 1 && (w.tests[0].custom || w.mixed) {
		extra["command"] = w.tests[0].Title
	}
	return echoConfig(ctx, rc, extra)
}

// printSeed ends a human summary with the seed, so the run can be
// repeated exactly.
func printSeed(w io.Writer, seed uint64) {
	fmt.Fprintf(w, "seed %d (--seed to repeat)\n", seed)
}
