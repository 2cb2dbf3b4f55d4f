package main

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/pacer-load/pacer/internal/guarded"
	"github.com/pacer-load/pacer/internal/secret"
)

// brokenPipe is a stdout whose reader went away.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestGuardedWriterRedactsAndNotesOnce(t *testing.T) {
	t.Parallel()
	var errb syncBuffer
	stderr := guarded.New(&errb, "stderr", secret.Find([]string{"pacer", "-a", "hunter2"}, func(string) string { return "" }).Redact)
	stdout := guarded.New(brokenPipe{}, "stdout", nil)
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
