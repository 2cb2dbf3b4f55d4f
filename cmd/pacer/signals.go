package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/pacer-load/pacer/internal/guarded"
	"github.com/pacer-load/pacer/report"
)

// interruptSignals stop a run early. The first one stops the timeline,
// drains for at most 2 s, prints and writes the partial results (marked
// interrupted) and exits 130; a second one exits 130 at once. SIGHUP (the
// terminal went away) is one of them: the results still reach the file.
var interruptSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// exitQuit is the exit code after SIGQUIT (128 + 3, as a shell reports a
// process killed by it). Go's own SIGQUIT handler exits 2, which pacer
// uses for usage errors.
const exitQuit = 128 + int(syscall.SIGQUIT)

// maxDump bounds the goroutine dump of SIGQUIT.
const maxDump = 64 << 20

// signalName is how the interruption message names each signal.
var signalName = map[os.Signal]string{syscall.SIGINT: "Ctrl-C", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}

// watchSignals returns a context cancelled by the first interrupt signal
// (or with parent) and installs the rest of pacer's signal handling until
// stop is called:
//
//   - a second interrupt signal exits 130 at once;
//   - SIGQUIT prints every goroutine's stack on stderr, as Go's default
//     handler does, and exits 131 (not Go's 2, the usage code);
//   - SIGPIPE is caught, so a write to a closed stdout or stderr fails with
//     EPIPE (which the guarded writers absorb) instead of killing pacer
//     before its results are written.
func watchSignals(parent context.Context, stderr *guarded.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	intr := make(chan os.Signal, 2)
	quit := make(chan os.Signal, 1)
	pipe := make(chan os.Signal, 1)
	signal.Notify(intr, interruptSignals...)
	signal.Notify(quit, syscall.SIGQUIT)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		interrupted := false
		for {
			select {
			case sig := <-intr:
				if interrupted {
					report.RemoveTemps() // a result file half written is not left behind
					os.Exit(exitInterrupted)
				}
				interrupted = true
				fmt.Fprintf(stderr, "pacer: interrupted by %s: stopping and writing the results (again to exit now)\n", signalName[sig])
				cancel()
			case <-quit:
				stderr.WriteUnredacted(goroutineDump())
				report.RemoveTemps()
				os.Exit(exitQuit)
			case <-pipe:
				// The failed write reports EPIPE itself.
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(intr)
		signal.Stop(quit)
		signal.Stop(pipe)
		close(done)
		cancel()
	}
}

// goroutineDump is the stack of every goroutine, headed like Go's own dump.
func goroutineDump() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxDump {
			return append([]byte("SIGQUIT: quit\n\n"), buf[:n]...)
		}
		buf = make([]byte, 2*len(buf))
	}
}
