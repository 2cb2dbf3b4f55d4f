package guarded

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
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

func TestWriterAbsorbsErrors(t *testing.T) {
	for _, err := range []error{syscall.EPIPE, syscall.EIO, errors.New("disk on fire")} {
		w := &failingWriter{n: 1, err: err}
		g := New(w, "stdout", nil)
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

func TestWriterRedacts(t *testing.T) {
	var b bytes.Buffer
	g := New(&b, "stderr", func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") })
	g.Write([]byte("AUTH failed: WRONGPASS hunter2\n"))
	if got := b.String(); got != "AUTH failed: WRONGPASS ***\n" {
		t.Errorf("not redacted: %q", got)
	}
	// The SIGQUIT dump is written as is.
	g.WriteUnredacted([]byte("hunter2 0x1\n"))
	if !strings.HasSuffix(b.String(), "hunter2 0x1\n") {
		t.Errorf("WriteUnredacted changed the text: %q", b.String())
	}
	if g.Name() != "stderr" || g.Err() != nil {
		t.Errorf("Name %q, Err %v", g.Name(), g.Err())
	}
}

func TestWriterFd(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := New(f, "stdout", nil).Fd(); got != f.Fd() {
		t.Errorf("Fd = %d, want the file's %d", got, f.Fd())
	}
	if got := int(New(&bytes.Buffer{}, "stdout", nil).Fd()); got != -1 {
		t.Errorf("Fd of a buffer = %d, want -1", got)
	}
}
