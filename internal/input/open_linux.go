package input

import (
	"context"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// open opens path with O_NONBLOCK, which makes open(2) of a FIFO return
// at once, and lets the runtime poll what can be polled (FIFOs, pipes,
// terminals): a read of those waits in the poller, and a deadline set
// when ctx is done ends it. Regular files ignore O_NONBLOCK and never
// wait; anything else (a device the poller cannot watch) is put back in
// blocking mode and read through a Reader.
func open(ctx context.Context, path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	file := &File{f: f, ctx: ctx, r: f}
	switch {
	case st.Mode().IsRegular():
	case f.SetReadDeadline(time.Time{}) == nil:
		// Pollable. The deadline in the past ends the read in progress
		// and every later one.
		file.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
		file.fifo = st.Mode()&fs.ModeNamedPipe != 0
	default:
		if rc, err := f.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
		}
		file.r = Reader(ctx, f)
	}
	return file, nil
}

// awaitWriter waits until a FIFO opened with O_NONBLOCK has a writer: a
// read before one comes returns 0 bytes, which is EOF, where a blocking
// open would have waited. The kernel reports the FIFO neither readable
// nor hung up until a writer has come (then it holds data, or its writer
// has gone: EOF), so the wait is the poller's, which the deadline ends.
func (f *File) awaitWriter() error {
	rc, err := f.f.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		// The runtime has reset the readiness before calling: poll(2)
		// with no timeout sees a writer that came before.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			return false
		}
		if err != nil {
			perr = err
			return true
		}
		return n > 0
	})
	if err != nil {
		return err
	}
	return perr
}
