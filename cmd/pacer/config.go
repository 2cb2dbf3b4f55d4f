package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/report"
)

// echoConfig is the JSON config of a command: the keys every load
// command writes the same way (report.RunConfig, which defines them) over
// the command's own extra keys, with the user's text (target, command,
// test) redacted.
func echoConfig(ctx context.Context, rc report.RunConfig, extra map[string]any) map[string]any {
	return rc.Echo(extra, secretsFrom(ctx).Redact)
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
