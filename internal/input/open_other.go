//go:build !linux

package input

import (
	"context"
	"os"
)

// open opens path in a goroutine, so that ctx interrupts an open(2) that
// waits (a FIFO without a writer); what is not a regular file is read
// through a Reader. An open left behind closes its file when it returns.
func open(ctx context.Context, path string) (*File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ErrInterrupted
	}
	if o.err != nil {
		return nil, o.err
	}
	file := &File{f: o.f, ctx: ctx, r: o.f}
	if st, err := o.f.Stat(); err != nil || !st.Mode().IsRegular() {
		file.r = Reader(ctx, o.f)
	}
	return file, nil
}

// awaitWriter has nothing to do: open waited for the writer.
func (f *File) awaitWriter() error { return nil }
