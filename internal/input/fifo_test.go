//go:build unix

package input

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestFIFOWaitsForItsWriter: a FIFO is read as a blocking open would read
// it: the read waits for a writer, takes all it writes, ends at its close.
func TestFIFOWaitsForItsWriter(t *testing.T) {
	path := testrun.Fifo(t, "fifo")
	ch := readAsync(func() ([]byte, error) { return ReadFile(context.Background(), path, 100) })
	time.Sleep(20 * time.Millisecond) // the reader waits first (the outcome is the same if not)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello "))
	time.Sleep(20 * time.Millisecond) // an empty FIFO with a writer is no EOF
	w.Write([]byte("world"))
	w.Close()
	if o := await(t, ch); o.err != nil || string(o.b) != "hello world" {
		t.Fatalf("ReadFile = %q, %v", o.b, o.err)
	}
	// A writer that comes and goes without a word: an empty file.
	ch = readAsync(func() ([]byte, error) { return ReadFile(context.Background(), path, 100) })
	time.Sleep(20 * time.Millisecond)
	w, err = os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if o := await(t, ch); o.err != nil || len(o.b) != 0 {
		t.Fatalf("ReadFile = %q, %v", o.b, o.err)
	}
}

// TestFIFOInterrupted: cancelling the context ends the wait for a writer
// that never comes, and a read of a writer that never writes.
func TestFIFOInterrupted(t *testing.T) {
	path := testrun.Fifo(t, "fifo")
	for _, writer := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		ch := readAsync(func() ([]byte, error) { return ReadFile(ctx, path, 100) })
		var w *os.File
		if writer {
			var err error
			if w, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
		if o := await(t, ch); !errors.Is(o.err, ErrInterrupted) {
			t.Errorf("writer %v: ReadFile = %q, %v; want ErrInterrupted", writer, o.b, o.err)
		}
		if w != nil {
			w.Close()
		}
	}
}

// TestFIFOAboveTheLimit: a FIFO that never ends costs the limit.
func TestFIFOAboveTheLimit(t *testing.T) {
	path := testrun.Fifo(t, "fifo")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := make([]byte, 4096)
		for ctx.Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}()
	if _, err := ReadFile(ctx, path, 64<<10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile = %v; want ErrTooLarge", err)
	}
	cancel()
	<-done // the writer fails with EPIPE once the reader has closed
}
