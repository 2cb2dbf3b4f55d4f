package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/report"
)

// failingWriter accepts n writes, then fails every one with err.
type failingWriter struct {
	mu     sync.Mutex
	n      int
	err    error
	writes []string
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return 0, f.err
	}
	f.n--
	f.writes = append(f.writes, string(p))
	return len(p), nil
}

func TestGuardedWriterAbsorbsErrors(t *testing.T) {
	for _, err := range []error{syscall.EPIPE, syscall.EIO, errors.New("disk on fire")} {
		w := &failingWriter{n: 1, err: err}
		g := newGuardedWriter(w, "stdout", nil)
		for i, s := range []string{"one\n", "two\n", "three\n"} {
			if n, werr := g.Write([]byte(s)); n != len(s) || werr != nil {
				t.Errorf("%v: write %d returned %d, %v: want success whatever happens", err, i, n, werr)
			}
		}
		if !errors.Is(g.Err(), err) {
			t.Errorf("Err() = %v, want the first error %v", g.Err(), err)
		}
		if w.n != 0 || len(w.writes) != 1 {
			t.Errorf("%v: after the first failure writes must stop, got %q", err, w.writes)
		}
	}
}

func TestGuardedWriterRedactsAndNotesOnce(t *testing.T) {
	var errb syncBuffer
	stderr := newGuardedWriter(&errb, "stderr", secret.Find([]string{"pacer", "-a", "hunter2"}, func(string) string { return "" }).Redact)
	stdout := newGuardedWriter(&failingWriter{err: syscall.EPIPE}, "stdout", nil)
	stdout.Write([]byte("lost\n"))
	stdout.Write([]byte("lost too\n"))
	stderr.Write([]byte("AUTH failed: WRONGPASS hunter2\n"))
	noteLostOutput(stdout, stderr)
	got := errb.String()
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "WRONGPASS ***") {
		t.Errorf("stderr not redacted: %q", got)
	}
	if strings.Count(got, "stdout could not be written") != 1 || !strings.Contains(got, "broken pipe") {
		t.Errorf("want one note naming the error, got %q", got)
	}
	// An unbroken stdout gets no note.
	var quiet syncBuffer
	noteLostOutput(newGuardedWriter(&syncBuffer{}, "stdout", nil), newGuardedWriter(&quiet, "stderr", nil))
	if quiet.String() != "" {
		t.Errorf("note without a failure: %q", quiet.String())
	}
	// The SIGQUIT dump is written as is.
	stderr.writeUnredacted([]byte("hunter2 0x1\n"))
	if !strings.HasSuffix(errb.String(), "hunter2 0x1\n") {
		t.Errorf("writeUnredacted changed the text: %q", errb.String())
	}
}

// TestGuardedWriterSeesTheTerminal: terminal detection (progress lines)
// looks through the wrapper.
func TestGuardedWriterSeesTheTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := fdOf(newGuardedWriter(f, "stdout", nil)); got != int(f.Fd()) {
		t.Errorf("fdOf = %d, want the file's %d", got, f.Fd())
	}
	if got := fdOf(newGuardedWriter(&syncBuffer{}, "stdout", nil)); got != -1 {
		t.Errorf("fdOf of a buffer = %d, want -1", got)
	}
}

func TestOutputPaths(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{"", stdoutPath, filepath.Join(dir, "ok.json")} {
		if err := checkOutputPath(path); err != nil {
			t.Errorf("checkOutputPath(%q) = %v", path, err)
		}
	}
	for _, path := range []string{dir, filepath.Join(dir, "missing", "x.json")} {
		if err := checkOutputPath(path); err == nil {
			t.Errorf("checkOutputPath(%q) accepted", path)
		}
	}
	doc := &report.Document{Schema: report.Schema, Tests: []report.Test{}}
	var stdout syncBuffer
	if err := writeJSON(&stdout, stdoutPath, doc); err != nil || !strings.Contains(stdout.String(), report.Schema) {
		t.Errorf("writeJSON to stdout: %v %q", err, stdout.String())
	}
	file := filepath.Join(dir, "r.json")
	if err := checkpointJSON(file, doc); err != nil || !strings.Contains(string(readFile(t, file)), report.Schema) {
		t.Errorf("checkpointJSON: %v", err)
	}
	if err := checkpointJSON(stdoutPath, doc); err != nil {
		t.Errorf("checkpointJSON to stdout must wait for the end: %v", err)
	}
}
