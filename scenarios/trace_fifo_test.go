//go:build unix

package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestOpenTraceRefusesAFIFO: a replay reads its trace more than once
// (checked, then replayed, once per loop), which a FIFO cannot give; and
// opening one that no one writes waited for a writer, deaf to the first
// Ctrl-C. It is refused at once.
func TestOpenTraceRefusesAFIFO(t *testing.T) {
	fifo := testrun.Fifo(t, "trace")
	done := make(chan error, 1)
	go func() {
		r, err := OpenTrace(fifo, TraceOptions{})
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("OpenTrace(FIFO) = %v; want 'not a regular file'", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenTrace waits for the FIFO's writer")
	}
}
