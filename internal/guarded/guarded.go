// Package guarded wraps pacer's stdout and stderr so that output that
// cannot be written never stops a command: a closed stdout (pacer run … |
// head -1) or a terminal that went away fails its write with EPIPE or EIO
// (the CLI catches SIGPIPE), the writer remembers the first error and
// drops what follows, and the CLI notes it once on stderr.
package guarded

import (
	"io"
	"sync"
)

// Writer wraps stdout or stderr. Its writes never fail: the first error is
// kept and everything after it is dropped (a closed pipe stays closed). It
// is safe for concurrent use, so progress lines and messages from several
// goroutines never interleave within a line.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	name   string
	redact func(string) string
	err    error
}

// New wraps w, named name ("stdout" or "stderr") in the note about lost
// output; redact, when not nil, is applied to every write.
func New(w io.Writer, name string, redact func(string) string) *Writer {
	return &Writer{w: w, name: name, redact: redact}
}

// Write writes p (redacted when the writer redacts) and reports success
// whatever happened, so that no caller stops because its output is gone.
func (g *Writer) Write(p []byte) (int, error) {
	if g.redact != nil {
		return len(p), g.write([]byte(g.redact(string(p))))
	}
	return len(p), g.write(p)
}

// WriteUnredacted writes p as is: for the goroutine dump of SIGQUIT, which
// holds no strings, only addresses that redaction could mangle.
func (g *Writer) WriteUnredacted(p []byte) { _ = g.write(p) }

func (g *Writer) write(p []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return nil
	}
	if _, err := g.w.Write(p); err != nil {
		g.err = err
	}
	return nil
}

// Err returns the first write error, if any.
func (g *Writer) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Name is the name New was given.
func (g *Writer) Name() string { return g.name }

// Fd returns the descriptor of the underlying file, so terminal detection
// sees through the wrapper; ^uintptr(0) (-1 as an int) when there is none.
func (g *Writer) Fd() uintptr {
	if f, ok := g.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
