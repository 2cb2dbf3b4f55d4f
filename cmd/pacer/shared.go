package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/safetext"
)

// Helpers every command uses: result files, dialing, error printing and
// terminal detection.

// dialPool opens n connections. If none opens, the run fails with one line;
// if some do not, the run goes on with the rest (the open loop keeps
// retrying the others) and says so on stderr.
func dialPool(ctx context.Context, o conn.Options, n int, stderr io.Writer) ([]*conn.Conn, error) {
	conns, failed, first := conn.DialSome(ctx, o, n)
	if failed == n {
		return nil, fmt.Errorf("cannot connect to %s: %v", o.Addr, first)
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "pacer: %d of %d connections to %s could not be opened (%v); going on with %d\n",
			failed, n, o.Addr, first, n-failed)
	}
	return conns, nil
}

// errorsTo returns a printer of error replies (at most one a second) when
// on, nil otherwise.
func errorsTo(w io.Writer, on bool) func([]byte) {
	if !on {
		return nil
	}
	return newErrorPrinter(w).print
}

// liveConns drops the connections that could not be opened.
func liveConns(all []*conn.Conn) []*conn.Conn {
	out := all[:0]
	for _, c := range all {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// closeAll closes the connections that were opened.
func closeAll(all []*conn.Conn) {
	for _, c := range all {
		if c != nil {
			c.Close()
		}
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
