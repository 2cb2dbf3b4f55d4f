// Package input reads what a command is given to read (the files named on
// its command line and its standard input) so that a cancelled context,
// the first Ctrl-C, ends a read that waits: a FIFO that no one writes, a
// pipe or a terminal that says nothing. Without it the first Ctrl-C only
// cancels a context that nobody is looking at while the command blocks in
// open(2) or read(2).
//
// Open and ReadFile read a file; Reader wraps a reader such as stdin. Once
// the context is done, their reads return ErrInterrupted at once.
package input

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/pacer-load/pacer/internal/bytesize"
)

// ErrInterrupted is what a read returns once its context is done.
var ErrInterrupted = errors.New("interrupted while waiting for input")

// ErrTooLarge is wrapped by ReadFile's error for a file above the limit.
var ErrTooLarge = errors.New("too large")

// File is a file opened by Open: an io.ReadCloser whose reads end with
// ErrInterrupted when the context Open was given is done.
type File struct {
	f   *os.File
	ctx context.Context
	// r is what Read reads: f itself where a read cannot wait for long
	// (a regular file) or the deadline interrupts it (a pollable file),
	// else a Reader over f.
	r io.Reader
	// stop unregisters the deadline's AfterFunc (nil when there is none).
	stop func() bool
	// fifo is set for a named pipe until its first writer has come.
	fifo bool
}

// Open opens path for reading. Opening never waits: a FIFO is opened
// without waiting for a writer, and its first Read waits for one (as
// cat(1) would wait in open), which ctx interrupts like any read.
func Open(ctx context.Context, path string) (*File, error) {
	if err := ctx.Err(); err != nil {
		return nil, ErrInterrupted
	}
	return open(ctx, path)
}

// Read reads from the file; once ctx is done it returns ErrInterrupted.
func (f *File) Read(p []byte) (int, error) {
	if f.ctx.Err() != nil {
		return 0, ErrInterrupted
	}
	if f.fifo {
		if err := f.awaitWriter(); err != nil {
			return 0, f.interrupted(err)
		}
		f.fifo = false
	}
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = f.interrupted(err)
	}
	return n, err
}

// interrupted returns ErrInterrupted for the error of a read that ctx
// ended (a deadline set by stop's AfterFunc), else err.
func (f *File) interrupted(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) && f.ctx.Err() != nil {
		return ErrInterrupted
	}
	return err
}

// Stat returns the file's FileInfo (a reader sizes its buffer from it).
func (f *File) Stat() (os.FileInfo, error) { return f.f.Stat() }

// Close closes the file.
func (f *File) Close() error {
	if f.stop != nil {
		f.stop()
	}
	return f.f.Close()
}

// ReadFile reads the file at path, at most limit bytes: a larger file (or
// /dev/zero, or a FIFO that never ends) is an error that wraps
// ErrTooLarge after limit+1 bytes, not an endless read.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(limit)
	}
	return b, nil
}

// tooLarge is ReadFile's error for a file above its limit.
type tooLarge int64

func (e tooLarge) Error() string {
	return "the file holds more than " + bytesize.Format(int64(e)) + " (the limit)"
}

func (e tooLarge) Is(target error) bool { return target == ErrTooLarge }

// maxChunk bounds one read of a Reader: the copy its goroutine reads into.
const maxChunk = 64 << 10

// Reader returns a reader of r whose reads return ErrInterrupted once ctx
// is done, even while r's read is blocked: r is read in a goroutine of
// its own, at most len(p) bytes per Read (so nothing past what the caller
// asked for is consumed). A read that ctx interrupted is left behind: it
// ends when r's read does, or with the process; its bytes are lost, and
// every later Read returns ErrInterrupted.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r, res: make(chan readResult, 1)}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	res chan readResult
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, ErrInterrupted
	}
	if len(p) == 0 {
		return 0, nil
	}
	// The goroutine reads into a buffer of its own: once abandoned, it
	// must not write into the caller's p.
	if len(p) > maxChunk {
		p = p[:maxChunk]
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	go func() {
		n, err := c.r.Read(buf)
		c.res <- readResult{n, err}
	}()
	select {
	case res := <-c.res:
		return copy(p, buf[:res.n]), res.err
	case <-c.ctx.Done():
		return 0, ErrInterrupted
	}
}
