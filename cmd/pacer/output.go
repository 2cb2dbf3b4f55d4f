package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/pacer-load/pacer/report"
)

// The output layer. Everything pacer prints goes through a guardedWriter,
// and every result file through writeOutput, so that:
//
//   - a closed stdout (pacer run … | head -1) or a terminal that went away
//     never kills pacer and never changes its exit code: the write fails
//     with EPIPE or EIO (SIGPIPE is caught, see signals.go), the writer
//     remembers the error, drops what follows, and Main notes it once on
//     stderr;
//   - result files are written before the human output of the same test,
//     so whatever happens to stdout the file is there;
//   - messages on stderr never show a password (see secrets.go).

// guardedWriter wraps stdout or stderr. Its writes never fail: the first
// error is kept and everything after it is dropped (a closed pipe stays
// closed). It is safe for concurrent use, so progress lines and messages
// from several goroutines never interleave within a line.
type guardedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	name   string              // "stdout" or "stderr", for the note
	redact func(string) string // applied to every write when set
	err    error
}

func newGuardedWriter(w io.Writer, name string, redact func(string) string) *guardedWriter {
	return &guardedWriter{w: w, name: name, redact: redact}
}

// Write writes p (redacted when the writer redacts) and reports success
// whatever happened, so that no caller stops because its output is gone.
func (g *guardedWriter) Write(p []byte) (int, error) {
	if g.redact != nil {
		return len(p), g.write([]byte(g.redact(string(p))))
	}
	return len(p), g.write(p)
}

// writeUnredacted writes p as is: for the goroutine dump of SIGQUIT, which
// holds no strings, only addresses that redaction could mangle.
func (g *guardedWriter) writeUnredacted(p []byte) { _ = g.write(p) }

func (g *guardedWriter) write(p []byte) error {
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
func (g *guardedWriter) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Fd returns the descriptor of the underlying file, so terminal detection
// sees through the wrapper; ^uintptr(0) (-1 as an int) when there is none.
func (g *guardedWriter) Fd() uintptr {
	if f, ok := g.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// noteLostOutput says once on stderr that stdout could not be written
// (when stderr itself still works), so a truncated report is explained.
func noteLostOutput(stdout, stderr *guardedWriter) {
	if err := stdout.Err(); err != nil {
		fmt.Fprintf(stderr, "pacer: %s could not be written (%v); the output after that point was dropped\n", stdout.name, err)
	}
}

// stdoutPath is the output path meaning standard output.
const stdoutPath = "-"

// checkOutputPath verifies before anything runs that an output file can be
// written ("" means none, "-" standard output): the report package's rules
// (a directory is an error, a missing or read-only directory too).
func checkOutputPath(path string) error {
	if path == "" || path == stdoutPath {
		return nil
	}
	return report.CheckOutput(path)
}

// writeOutput writes data to path: "-" is stdout, anything else a file
// written through report.WriteOutput (never half a file, never a device
// or a link replaced).
func writeOutput(stdout io.Writer, path string, data []byte) error {
	if path == stdoutPath {
		if _, err := stdout.Write(data); err != nil {
			return err
		}
		// The guarded stdout never fails a write: a result lost to a
		// closed pipe is a failed command all the same.
		if g, ok := stdout.(interface{ Err() error }); ok && g.Err() != nil {
			return fmt.Errorf("the result was not written to stdout: %w", g.Err())
		}
		return nil
	}
	return report.WriteOutput(path, data)
}

// writeJSON writes the result document to path ("-": stdout).
func writeJSON(stdout io.Writer, path string, doc *report.Document) error {
	b, err := doc.Marshal()
	if err != nil {
		return err
	}
	return writeOutput(stdout, path, b)
}

// checkpointJSON writes the document so far to a result file before the
// test's human output, so the file exists whatever becomes of stdout. With
// no file, or with stdout as the file, it does nothing: stdout gets the
// document once, at the end.
func checkpointJSON(path string, doc *report.Document) error {
	if path == "" || path == stdoutPath {
		return nil
	}
	return writeJSON(nil, path, doc)
}

// resultFiles are the files a load command writes from its result
// document: --json, --hdr-log and --hdr-spectrum ("" for none, "-" for
// stdout). All follow the output rules above; at most one can be stdout.
type resultFiles struct {
	json, hdrLog, hdrSpectrum string
}

// check verifies the paths before anything runs: each can be written, at
// most one is stdout, and no two name the same file.
func (f resultFiles) check() error {
	named := []struct{ flag, path string }{{"--json", f.json}, {"--hdr-log", f.hdrLog}, {"--hdr-spectrum", f.hdrSpectrum}}
	for i, a := range named {
		if a.path == "" {
			continue
		}
		if err := checkOutputPath(a.path); err != nil {
			return usageErrorf("%s: %v", a.flag, err)
		}
		for _, b := range named[:i] {
			if b.path == "" {
				continue
			}
			if a.path == stdoutPath && b.path == stdoutPath {
				return usageErrorf("%s - and %s -: only one output can go to stdout", b.flag, a.flag)
			}
			if a.path != stdoutPath && sameOutput(a.path, b.path) {
				return usageErrorf("%s and %s both name %s: give each its own file", b.flag, a.flag, a.path)
			}
		}
	}
	return nil
}

// sameOutput reports whether two output paths are the same file (a device
// such as /dev/null may take several outputs).
func sameOutput(a, b string) bool {
	if a == os.DevNull || b == os.DevNull {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && sa.Mode().IsRegular() && os.SameFile(sa, sb)
}

// any reports whether a result file was asked for.
func (f resultFiles) any() bool { return f.json != "" || f.hdrLog != "" || f.hdrSpectrum != "" }

// stdout reports whether one of them goes to stdout, which then carries
// nothing else (the text moves to stderr).
func (f resultFiles) stdout() bool {
	return f.json == stdoutPath || f.hdrLog == stdoutPath || f.hdrSpectrum == stdoutPath
}

// write writes every result file from doc: the JSON, the interval log and
// the spectrum ("-": stdout).
func (f resultFiles) write(stdout io.Writer, doc *report.Document) error {
	if f.json != "" {
		if err := writeJSON(stdout, f.json, doc); err != nil {
			return err
		}
	}
	if f.hdrLog != "" {
		var b bytes.Buffer
		if err := report.WriteHdrLog(&b, doc); err != nil {
			return err
		}
		if err := writeOutput(stdout, f.hdrLog, b.Bytes()); err != nil {
			return err
		}
	}
	if f.hdrSpectrum != "" {
		outs, err := report.SpectrumOutputs(f.hdrSpectrum, doc)
		if err != nil {
			return fmt.Errorf("--hdr-spectrum: %w", err)
		}
		for _, o := range outs {
			if err := writeOutput(stdout, o.Path, o.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkpoint writes the result files that are files (not stdout) from the
// document so far, before the test's human output (see checkpointJSON).
func (f resultFiles) checkpoint(doc *report.Document) error {
	g := f
	for _, p := range []*string{&g.json, &g.hdrLog, &g.hdrSpectrum} {
		if *p == stdoutPath {
			*p = ""
		}
	}
	return g.write(nil, doc)
}
