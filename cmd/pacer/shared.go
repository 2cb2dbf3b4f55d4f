package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacer-load/pacer/internal/safetext"
)

// Helpers every command uses: result files, dialing, error printing and
// terminal detection.

// errorsTo returns a printer of error replies (at most one a second) when
// on, nil otherwise.
func errorsTo(w io.Writer, on bool) func([]byte) {
	if !on {
		return nil
	}
	return newErrorPrinter(w).print
}

// errorPrinter shows error replies on stdout, at most one per second, as
// redis-benchmark 6 did with -e.
type errorPrinter struct {
	out  io.Writer
	last chan int64
}

func newErrorPrinter(out io.Writer) *errorPrinter {
	p := &errorPrinter{out: out, last: make(chan int64, 1)}
	p.last <- 0
	return p
}

func (p *errorPrinter) print(text []byte) {
	now := time.Now().Unix()
	last := <-p.last
	if now != last {
		// Escaped: a server's text must not drive the terminal.
		fmt.Fprintf(p.out, "Error from server: %s\n", safetext.Escape(string(text)))
		last = now
	}
	p.last <- last
}

// fdOf returns the file descriptor behind w, or -1.
func fdOf(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok { // *os.File, and the guarded stdout
		return int(f.Fd())
	}
	return -1
}
