//go:build unix

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestFirstCtrlCEndsAWaitForInput: the first Ctrl-C ends a command that
// waits for its input, at once with exit 130: a FIFO that no one writes
// (report, merge, --commands, --cacert), one whose writer says nothing,
// and a stdin pipe that stays open and silent (report -, --askpass,
// bench -x). It used to print "stopping" and go on waiting.
func TestFirstCtrlCEndsAWaitForInput(t *testing.T) {
	testrun.SkipShort(t, "builds and runs the binary")
	t.Parallel()   // it signals the binaries it starts, not the test
	pacerBinary(t) // built once, before the parallel cases
	for _, tc := range []struct {
		name string
		args func(fifo string) []string
		// writer opens the FIFO for writing and keeps it open, silent.
		writer bool
		// stdin is an open pipe that nothing is written to.
		stdin bool
	}{
		{name: "report FIFO", args: func(f string) []string { return []string{"report", f} }},
		{name: "report FIFO with a silent writer", args: func(f string) []string { return []string{"report", f} }, writer: true},
		{name: "merge FIFO", args: func(f string) []string { return []string{"merge", f, "-o", "-"} }},
		{name: "report stdin", args: func(string) []string { return []string{"report", "-"} }, stdin: true},
		{name: "--commands FIFO", args: func(f string) []string {
			return []string{"run", "-h", "127.0.0.1", "-p", "1", "--rate", "10", "-n", "1", "--commands", f}
		}},
		{name: "--cacert FIFO", args: func(f string) []string {
			return []string{"run", "-h", "127.0.0.1", "-p", "1", "--rate", "10", "-n", "1", "-t", "get", "--tls", "--cacert", f}
		}},
		{name: "--askpass from an open pipe", args: func(string) []string {
			return []string{"run", "-h", "127.0.0.1", "-p", "1", "--rate", "10", "-n", "1", "-t", "get", "--askpass"}
		}, stdin: true},
		{name: "bench -x from an open pipe", args: func(string) []string {
			return []string{"bench", "-h", "127.0.0.1", "-p", "1", "-n", "1", "-x", "set", "k"}
		}, stdin: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fifo := testrun.Fifo(t, "fifo")
			cmd, _, stderr := startBinary(t, func(cmd *exec.Cmd) {
				if tc.stdin {
					pr, w, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					cmd.Stdin = pr // w stays open and silent until the test ends
					t.Cleanup(func() { pr.Close(); w.Close() })
				}
			}, tc.args(fifo)...)
			if tc.writer {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for pacer to open it
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}
			// Time for pacer to start and block (its signal handling is in
			// place within milliseconds; it would wait forever).
			time.Sleep(time.Second)
			cmd.Process.Signal(syscall.SIGINT)
			code, _ := waitFor(t, cmd, 15*time.Second)
			if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("%v: exit %d, stderr %q; want 130", cmd.Args[1:], code, stderr.String())
			}
		})
	}
}

// TestReplayRefusesAFIFO: replay reads its trace more than once, so a
// FIFO is a usage error at once; it used to wait for a writer, deaf to
// the first Ctrl-C.
func TestReplayRefusesAFIFO(t *testing.T) {
	testrun.SkipShort(t, "builds and runs the binary")
	t.Parallel()
	fifo := testrun.Fifo(t, "trace")
	cmd, _, stderr := startBinary(t, nil, "replay", "-h", "127.0.0.1", "-p", "1", fifo)
	code, _ := waitFor(t, cmd, 15*time.Second)
	if code != exitUsage || !strings.Contains(stderr.String(), "not a regular file (a FIFO)") {
		t.Errorf("exit %d, stderr %q; want 2, not a regular file", code, stderr.String())
	}
}
