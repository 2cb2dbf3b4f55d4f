package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pacer-load/pacer/internal/usage"
)

// StdoutPath is the output path meaning standard output.
const StdoutPath = "-"

// CheckOutputPath verifies before anything runs that an output can be
// written: "" means none and "-" standard output, anything else follows
// checkOutput's rules (a directory is an error, a missing or read-only
// directory too).
func CheckOutputPath(path string) error {
	if path == "" || path == StdoutPath {
		return nil
	}
	return checkOutput(path)
}

// WriteOutputTo writes data to path: "-" is stdout, anything else a file
// written through writeOutput (never half a file, never a device or a link
// replaced).
func WriteOutputTo(stdout io.Writer, path string, data []byte) error {
	if path == StdoutPath {
		if _, err := stdout.Write(data); err != nil {
			return err
		}
		// A guarded stdout never fails a write: a result lost to a closed
		// pipe is a failed command all the same.
		if g, ok := stdout.(interface{ Err() error }); ok && g.Err() != nil {
			return fmt.Errorf("the result was not written to stdout: %w", g.Err())
		}
		return nil
	}
	return writeOutput(path, data)
}

// WriteJSON writes the result document to path ("-": stdout).
func WriteJSON(stdout io.Writer, path string, doc *Document) error {
	b, err := doc.Marshal()
	if err != nil {
		return err
	}
	return WriteOutputTo(stdout, path, b)
}

// Files are the files a load command writes from its result document:
// --json, --hdr-log and --hdr-spectrum ("" for none, "-" for stdout). All
// follow the output rules; at most one can be stdout. They are written
// before the human output of the same test, so whatever becomes of stdout
// the files are there.
type Files struct {
	JSON, HdrLog, HdrSpectrum string
}

// Check verifies the paths before anything runs: each can be written, at
// most one is stdout, and no two name the same file. Its errors are usage
// errors that name the flags.
func (f Files) Check() error {
	named := []struct{ flag, path string }{{"json", f.JSON}, {"hdr-log", f.HdrLog}, {"hdr-spectrum", f.HdrSpectrum}}
	for i, a := range named {
		if a.path == "" {
			continue
		}
		if err := CheckOutputPath(a.path); err != nil {
			return usage.Flagf(a.flag, "%v: %v", usage.Name(a.flag), err)
		}
		for _, b := range named[:i] {
			if b.path == "" {
				continue
			}
			if a.path == StdoutPath && b.path == StdoutPath {
				return usage.Flagf(a.flag, "%v - and %v -: only one output can go to stdout", usage.Name(b.flag), usage.Name(a.flag))
			}
			if a.path != StdoutPath && sameOutput(a.path, b.path) {
				return usage.Flagf(a.flag, "%v and %v both name %s: give each its own file", usage.Name(b.flag), usage.Name(a.flag), a.path)
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

// Any reports whether a result file was asked for.
func (f Files) Any() bool { return f.JSON != "" || f.HdrLog != "" || f.HdrSpectrum != "" }

// Stdout reports whether one of them goes to stdout, which then carries
// nothing else (the text moves to stderr).
func (f Files) Stdout() bool {
	return f.JSON == StdoutPath || f.HdrLog == StdoutPath || f.HdrSpectrum == StdoutPath
}

// Write writes every result file from doc: the JSON, the interval log and
// the spectrum ("-": stdout).
func (f Files) Write(stdout io.Writer, doc *Document) error {
	if f.JSON != "" {
		if err := WriteJSON(stdout, f.JSON, doc); err != nil {
			return err
		}
	}
	if f.HdrLog != "" {
		var b bytes.Buffer
		if err := writeHdrLog(&b, doc); err != nil {
			return err
		}
		if err := WriteOutputTo(stdout, f.HdrLog, b.Bytes()); err != nil {
			return err
		}
	}
	if f.HdrSpectrum != "" {
		outs, err := spectrumOutputs(f.HdrSpectrum, doc)
		if err != nil {
			return usage.Option("hdr-spectrum", "{hdr-spectrum}: %w", err)
		}
		for _, o := range outs {
			if err := WriteOutputTo(stdout, o.Path, o.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// Checkpoint writes the result files that are files (not stdout) from
// the document so far, before the test's human output, so they exist
// whatever becomes of stdout. Those going to stdout wait for Write at the
// end: stdout gets the document once.
func (f Files) Checkpoint(doc *Document) error {
	for _, p := range []*string{&f.JSON, &f.HdrLog, &f.HdrSpectrum} {
		if *p == StdoutPath {
			*p = ""
		}
	}
	return f.Write(nil, doc)
}
