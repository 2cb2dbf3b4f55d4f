package main

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pacer-load/pacer/internal/guarded"
	"github.com/pacer-load/pacer/internal/secret"
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

func TestGuardedWriterRedactsAndNotesOnce(t *testing.T) {
	var errb syncBuffer
	stderr := guarded.New(&errb, "stderr", secret.Find([]string{"pacer", "-a", "hunter2"}, func(string) string { return "" }).Redact)
	stdout := guarded.New(&failingWriter{err: syscall.EPIPE}, "stdout", nil)
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
	noteLostOutput(guarded.New(&syncBuffer{}, "stdout", nil), guarded.New(&quiet, "stderr", nil))
	if quiet.String() != "" {
		t.Errorf("note without a failure: %q", quiet.String())
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
	if got := fdOf(guarded.New(f, "stdout", nil)); got != int(f.Fd()) {
		t.Errorf("fdOf = %d, want the file's %d", got, f.Fd())
	}
	if got := fdOf(guarded.New(&syncBuffer{}, "stdout", nil)); got != -1 {
		t.Errorf("fdOf of a buffer = %d, want -1", got)
	}
}
