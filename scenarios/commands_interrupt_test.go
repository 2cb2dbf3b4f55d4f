//go:build unix

package scenarios

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestLoadCommandsFileInterrupted: a --commands FIFO that no one writes
// waits until the context is cancelled, then ends with ErrInterrupted.
func TestLoadCommandsFileInterrupted(t *testing.T) {
	fifo := testrun.Fifo(t, "fifo")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := loadCommandsFile(ctx, fifo)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // it waits first (the outcome is the same if not)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, input.ErrInterrupted) {
			t.Errorf("loadCommandsFile = %v; want ErrInterrupted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loadCommandsFile still waits after the cancel")
	}
}
