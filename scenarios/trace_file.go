package scenarios

// A trace file, opened once and read as often as a replay reads it: the
// check and every pass read the file that was opened, never its path
// again.

import (
	"io"
	"os"
	"syscall"
	"time"
)

// OpenTrace opens the trace file at path, gzip-compressed or not (told by
// its first bytes, not its name), and detects its format unless opt
// forces one. Close closes the file. The trace must be a regular file
// (see OpenTraceFile).
func OpenTrace(path string, opt TraceOptions) (*TraceReader, error) {
	tf, err := OpenTraceFile(path)
	if err != nil {
		return nil, err
	}
	r, err := tf.Reader(opt)
	if err != nil {
		tf.Close()
		return nil, err
	}
	r.closer = tf
	return r, nil
}

// TraceFile is a trace file opened once, to be read as often as a replay
// reads it (checked, then sent, once per loop): each Reader reads the
// file opened, from its start to the size it had then, never the path
// again, so a file put in its place later is not read. A change made to
// the file itself shows in its digest (TraceStats.SHA256).
type TraceFile struct {
	f     *os.File
	name  string
	size  int64
	mtime time.Time
}

// OpenTraceFile opens the trace at path. It must be a regular file: a
// replay reads it more than once, which a FIFO or a pipe cannot give.
func OpenTraceFile(path string) (*TraceFile, error) {
	// O_NONBLOCK: opening a FIFO that no one writes would wait for a
	// writer, deaf to Ctrl-C; a regular file's reads ignore the flag.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &TraceError{Name: path, Msg: "not a regular file (" + fileKind(fi.Mode()) + "): a replay reads its trace more than once"}
	}
	return &TraceFile{f: f, name: path, size: fi.Size(), mtime: fi.ModTime()}, nil
}

// Changed reports whether the file opened was written to since (its size
// or its modification time differ from the open's), as its metadata say:
// a change within the clock's tick may not show (the digest does).
func (t *TraceFile) Changed() bool {
	fi, err := t.f.Stat()
	return err != nil || fi.Size() != t.size || !fi.ModTime().Equal(t.mtime)
}

// Reader reads the file from its start; its Close leaves the file open.
// Readers may read side by side.
func (t *TraceFile) Reader(opt TraceOptions) (*TraceReader, error) {
	return NewTraceReader(io.NewSectionReader(t.f, 0, t.size), t.name, opt)
}

// Name is the file's path, as errors give it.
func (t *TraceFile) Name() string { return t.name }

// Close closes the file.
func (t *TraceFile) Close() error { return t.f.Close() }

// fileKind names a file mode that is not a regular file's.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a plain file"
}
