//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package rxstamp

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Why SO_TIMESTAMPNS rather than SO_TIMESTAMPING with
// SOF_TIMESTAMPING_RX_SOFTWARE|SOF_TIMESTAMPING_SOFTWARE: both report the
// same software stamp (the skb's, taken when the packet entered the
// receive path), but SO_TIMESTAMPNS delivers it alone, one timespec in a
// 32-byte control message instead of three in 64, with no flags whose
// meaning changes across kernels (SO_TIMESTAMPING also governs transmit
// stamps). Hardware stamps, its only extra, need a NIC configured for
// them, which loopback and most test hosts are not.

// oobSize holds the timestamp's control message and a few descriptors
// that a hostile AF_UNIX peer could pass (closed on receipt).
const oobSize = 64

// Reader reads a connected socket with recvmsg(2) through the socket's
// syscall.RawConn, so the goroutine still parks in the netpoller while
// nothing is queued. Its recvmsg is bound once and its buffers are its
// own: a read allocates nothing. One goroutine reads at a time.
type Reader struct {
	raw     syscall.RawConn
	nc      net.Conn
	now     func() int64
	call    func(fd uintptr) bool
	msg     syscall.Msghdr
	iov     syscall.Iovec
	oob     [oobSize / 8]uint64 // aligned for the control messages
	n       int
	errno   syscall.Errno
	arrival int64
	// again: the last attempt found nothing queued (TryRead).
	again bool
	try   func(fd uintptr)
}

// New turns on software receive timestamps (SO_TIMESTAMPNS) on nc's
// socket and returns a Reader of it whose Arrival is on the clock of now.
// It returns nil when nc has no file descriptor or the socket refuses the
// option.
func New(nc net.Conn, now func() int64) *Reader {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil || !enable(raw) {
		return nil
	}
	r := &Reader{raw: raw, nc: nc, now: now}
	r.call = r.recv
	r.try = func(fd uintptr) { r.again = !r.recv(fd) }
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	return r
}

// Enable turns on software receive timestamps on a socket, a listener's
// (its accepted connections inherit them, so data that arrives before New
// is called on them is stamped too). It reports whether it could.
func Enable(sc syscall.Conn) bool {
	raw, err := sc.SyscallConn()
	return err == nil && enable(raw)
}

func enable(raw syscall.RawConn) bool {
	keepOnce.Do(keepStamping)
	var serr error
	err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	})
	return err == nil && serr == nil
}

// Linux stamps received packets only while some socket of the host wants
// stamps: the first such socket turns stamping on, the last one to close
// turns it off, each time in a deferred work item (net_enable_timestamp),
// which on a busy machine runs milliseconds later. Between a run's
// connections closing and the next run's dialing, stamping would go off,
// and the next run's first replies come unstamped. keeper is a socket that
// wants stamps for the life of the process, so stamping, once on, stays on.
var (
	keepOnce sync.Once
	keeper   int
)

func keepStamping() {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) != nil {
		syscall.Close(fd)
		return
	}
	keeper = fd
}

// recv makes one recvmsg attempt; false asks the netpoller to wait.
func (r *Reader) recv(fd uintptr) bool {
	for {
		r.msg.Control = (*byte)(unsafe.Pointer(&r.oob[0]))
		r.msg.SetControllen(oobSize)
		r.msg.Flags = 0
		n, _, errno := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), syscall.MSG_CMSG_CLOEXEC)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.n, r.errno = int(n), errno
		return true
	}
}

// Read reads into b with one recvmsg, waiting for data as net.Conn.Read
// does (deadlines included). After it returns, Arrival describes the
// bytes it read.
func (r *Reader) Read(b []byte) (int, error) { return r.recvInto(b, true) }

// TryRead is Read that never waits: when nothing is queued it returns
// ErrWouldBlock at once, and the caller learns of new data its own way (a
// Hub's epoll instance). It leaves the netpoller's state of the socket
// alone.
func (r *Reader) TryRead(b []byte) (int, error) { return r.recvInto(b, false) }

// recvInto makes one recvmsg into b, through the netpoller when wait (it
// parks while nothing is queued), else at once.
func (r *Reader) recvInto(b []byte, wait bool) (int, error) {
	r.arrival, r.again = 0, false
	if len(b) == 0 {
		return 0, nil
	}
	r.iov.Base = &b[0]
	r.iov.SetLen(len(b))
	var err error
	if wait {
		err = r.raw.Read(r.call)
	} else {
		err = r.raw.Control(r.try)
	}
	r.iov.Base = nil
	r.msg.Control = nil
	switch {
	case err != nil:
		return 0, r.opErr(err)
	case r.again:
		return 0, ErrWouldBlock
	case r.errno != 0:
		return 0, r.opErr(os.NewSyscallError("recvmsg", r.errno))
	case r.n == 0:
		return 0, io.EOF
	}
	if kernel := r.kernelStamp(); kernel != 0 {
		r.arrival = toMono(kernel, r.now)
	}
	return r.n, nil
}

// Control calls f with the socket's file descriptor (see
// syscall.RawConn.Control): a Hub registers it with its epoll instance.
func (r *Reader) Control(f func(fd uintptr)) error { return r.raw.Control(f) }

// opErr words a read error as net.Conn.Read would: the op, the network
// and both addresses, around the cause (a RawConn's closed-connection or
// deadline error, or recvmsg's errno), which errors.Is still finds.
func (r *Reader) opErr(err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: "read", Net: r.nc.LocalAddr().Network(), Source: r.nc.LocalAddr(), Addr: r.nc.RemoteAddr(), Err: err}
}

// kernelStamp returns the receive timestamp the last recvmsg delivered
// (CLOCK_REALTIME ns), 0 when none. For TCP it is the stamp of the last
// segment the read consumed. Descriptors a peer passed are closed: the
// connection never asked for any.
func (r *Reader) kernelStamp() int64 {
	oob := unsafe.Slice((*byte)(unsafe.Pointer(&r.oob[0])), oobSize)
	end := min(int(r.msg.Controllen), oobSize)
	const align = int(unsafe.Sizeof(uintptr(0)))
	var stamp int64
	for off := 0; off+syscall.SizeofCmsghdr <= end; {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[off]))
		l := int(h.Len)
		if l < syscall.SizeofCmsghdr || off+l > end {
			break
		}
		data := oob[off+syscall.SizeofCmsghdr : off+l]
		switch {
		case h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS &&
			len(data) >= int(unsafe.Sizeof(syscall.Timespec{})):
			ts := (*syscall.Timespec)(unsafe.Pointer(&data[0]))
			stamp = ts.Nano()
		case h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_RIGHTS:
			for i := 0; i+4 <= len(data); i += 4 {
				syscall.Close(int(*(*int32)(unsafe.Pointer(&data[i]))))
			}
		}
		off += (l + align - 1) &^ (align - 1)
	}
	return stamp
}

// Arrival returns when the bytes of the last read reached the kernel, on
// the clock of New's now, or 0 when that read carried no timestamp.
// Check it with Plausible against the read's own instant.
func (r *Reader) Arrival() int64 { return r.arrival }
