package input

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLong bounds what a test waits for a read that must end: far above
// any honest delay, so it only fails a test that would otherwise hang.
const waitLong = 10 * time.Second

// readAsync runs read in a goroutine and returns its result channel.
func readAsync(read func() ([]byte, error)) <-chan readOutcome {
	ch := make(chan readOutcome, 1)
	go func() {
		b, err := read()
		ch <- readOutcome{b, err}
	}()
	return ch
}

type readOutcome struct {
	b   []byte
	err error
}

func await(t *testing.T, ch <-chan readOutcome) readOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(waitLong):
		t.Fatal("the read did not end")
		return readOutcome{}
	}
}

func TestReadFileRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(context.Background(), path, 5)
	if err != nil || string(b) != "hello" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(context.Background(), path, 4); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 4 (the limit)") {
		t.Errorf("a file above the limit: %v", err)
	}
	if _, err := ReadFile(context.Background(), filepath.Join(t.TempDir(), "none"), 4); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFile(ctx, path, 5); !errors.Is(err, ErrInterrupted) {
		t.Errorf("a done context: %v", err)
	}
}

// TestReadFileDevZero: an endless file costs the limit, not the machine.
func TestReadFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := ReadFile(context.Background(), "/dev/zero", 1<<20); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestReaderInterrupted: a read of a pipe that says nothing returns
// ErrInterrupted once the context is cancelled, and so does every later
// one; a Read never takes more than it was asked for.
func TestReaderInterrupted(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close() // ends the read left behind
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, pr)
	go pw.Write([]byte("abc"))
	var one [1]byte
	if n, err := r.Read(one[:]); n != 1 || err != nil || one[0] != 'a' {
		t.Fatalf("Read = %d %q, %v", n, one[:n], err)
	}
	rest := make([]byte, 10)
	if n, err := r.Read(rest); err != nil || string(rest[:n]) != "bc" {
		t.Fatalf("Read = %q, %v", rest[:n], err)
	}
	ch := readAsync(func() ([]byte, error) { return io.ReadAll(r) })
	time.Sleep(10 * time.Millisecond) // let it block (the outcome is the same if not)
	cancel()
	if o := await(t, ch); !errors.Is(o.err, ErrInterrupted) {
		t.Fatalf("ReadAll after cancel = %q, %v", o.b, o.err)
	}
	if _, err := r.Read(rest); !errors.Is(err, ErrInterrupted) {
		t.Errorf("a later Read: %v", err)
	}
}

func TestReaderPassesEOFAndErrors(t *testing.T) {
	b, err := io.ReadAll(Reader(context.Background(), strings.NewReader(strings.Repeat("x", 3*maxChunk+5))))
	if err != nil || len(b) != 3*maxChunk+5 {
		t.Errorf("ReadAll = %d bytes, %v", len(b), err)
	}
	broken := errors.New("broken")
	if _, err := io.ReadAll(Reader(context.Background(), io.MultiReader(strings.NewReader("x"), errReader{broken}))); !errors.Is(err, broken) {
		t.Errorf("a failing reader: %v", err)
	}
	if n, err := Reader(context.Background(), bytes.NewReader(nil)).Read(nil); n != 0 || err != nil {
		t.Errorf("Read(nil) = %d, %v", n, err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
