package main

import (
	"fmt"
	"io"

	"github.com/pacer-load/pacer/internal/guarded"
	"github.com/pacer-load/pacer/report"
)

// The output layer. Everything pacer prints goes through a guarded.Writer
// and every result file through report's output rules, so that:
//
//   - a closed stdout (pacer run … | head -1) or a terminal that went away
//     never kills pacer and never changes its exit code: the write fails
//     with EPIPE or EIO (SIGPIPE is caught, see signals.go), the writer
//     remembers the error, drops what follows, and Main notes it once on
//     stderr;
//   - result files are written before the human output of the same test
//     (report.Files), so whatever happens to stdout the file is there;
//   - messages on stderr never show a password (see secrets.go).

// stdoutPath is the output path meaning standard output.
const stdoutPath = report.StdoutPath

// resultFiles are the --json, --hdr-log and --hdr-spectrum files.
type resultFiles = report.Files

// noteLostOutput says once on stderr that stdout could not be written
// (when stderr itself still works), so a truncated report is explained.
func noteLostOutput(stdout, stderr *guarded.Writer) {
	if err := stdout.Err(); err != nil {
		fmt.Fprintf(stderr, "pacer: %s could not be written (%v); the output after that point was dropped\n", stdout.Name(), err)
	}
}

// fdOf returns the file descriptor behind w, or -1: a terminal is drawn
// on, a file or a pipe is not.
func fdOf(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok { // *os.File, and the guarded stdout
		return int(f.Fd())
	}
	return -1
}
