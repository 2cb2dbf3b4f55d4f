package text

import (
	"fmt"
	"strings"

	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// writeServerProcess writes the server process's line of the text
// report.
func writeServerProcess(b *strings.Builder, sp *scheduler.ServerProcess) {
	if sp == nil {
		return
	}
	u := sp.Usage
	name := ""
	if sp.Name != "" {
		name = " (" + safetext.Escape(sp.Name) + ")"
	}
	fmt.Fprintf(b, "  server process pid %d%s: CPU %.3f s; waited for a CPU %s (%s of the time, %s per time slice over %d slices); %d involuntary switches\n",
		sp.PID, name, u.CPU.Seconds(), report.WaitText(u.Wait), report.ShareText(u.WaitShare()), report.WaitText(u.MeanWait()), u.Slices, u.Involuntary)
	if u.Threads > 1 && u.ThreadWait > 0 && u.ThreadWait < u.Wait*9/10 {
		fmt.Fprintf(b, "                 %d threads; the one that waited most waited %s (%s of the time): what a request meets, and the verdict weighs\n",
			u.Threads, report.WaitText(u.ThreadWait), report.ShareText(u.ThreadWaitShare()))
	}
	if u.Looks > 0 {
		fmt.Fprintf(b, "                 its busiest thread was waiting for the disk in %d of %d looks at its state, every %s (%s of the time)\n",
			u.DiskLooks, u.Looks, host.StateLookEvery, report.ShareText(u.DiskWaitShare()))
	}
	fmt.Fprintf(b, "                 found as %s\n", safetext.Escape(sp.How))
}
