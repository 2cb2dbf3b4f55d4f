//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package conn

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
)

// Hub: see hub.go.
type Hub struct {
	f       *os.File // the epoll instance, waited on in the netpoller
	raw     syscall.RawConn
	epfd    int
	members []*member // by id, the events' data; nil once gone
	events  [64]syscall.EpollEvent
	err     error
	started bool
	closing atomic.Bool
	done    chan struct{}
}

type member struct {
	c     *Conn
	fd    int
	ready func() bool
}

// NewHub makes a hub; errors.ErrUnsupported where there is none (not
// Linux).
func NewHub() (*Hub, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	// Non-blocking, os.NewFile hands it to the netpoller: it is readable
	// while any member's socket is.
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(epfd), "hub")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Hub{f: f, raw: raw, epfd: epfd, done: make(chan struct{})}, nil
}

// Join makes c a member, before Start: on the hub's goroutine, ready is called
// whenever c's socket holds bytes, and again while it still does (the
// epoll instance is level-triggered), so ready may read once and return.
// ready returns false when c is done with the hub (its connection ended,
// or it Left). ErrUnsupported when c cannot be a member (see hub.go).
func (h *Hub) Join(c *Conn, ready func() bool) error {
	if !c.hubbable() {
		return errors.ErrUnsupported
	}
	fd := -1
	if err := c.stamps.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return err
	}
	id := len(h.members)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(id)}
	if err := syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	c.rd.try = true
	h.members = append(h.members, &member{c: c, fd: fd, ready: ready})
	return nil
}

// Leave ends c's membership from its ready function: its reads wait
// again, and a goroutine of its own may read it from now on.
func (h *Hub) Leave(c *Conn) {
	for id, m := range h.members {
		if m != nil && m.c == c {
			h.remove(id)
		}
	}
}

func (h *Hub) remove(id int) {
	m := h.members[id]
	h.members[id] = nil
	// The connection may be closed already: the kernel dropped it then.
	_ = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_DEL, m.fd, nil)
	m.c.rd.try = false
}

// Start starts the hub's goroutine, which calls the members' ready
// functions until Close: every member's reads happen on it.
func (h *Hub) Start() {
	h.started = true
	go h.run()
}

func (h *Hub) run() {
	defer close(h.done)
	err := h.raw.Read(h.poll)
	if h.err == nil && err != nil && !h.closing.Load() {
		h.err = err
	}
}

// poll serves what is ready; false asks the netpoller to wait for the
// epoll instance to be readable again.
func (h *Hub) poll(uintptr) bool {
	for {
		n, err := syscall.EpollWait(h.epfd, h.events[:], 0)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			h.err = fmt.Errorf("hub: %w", os.NewSyscallError("epoll_wait", err))
			return true
		case n == 0:
			return false
		}
		for _, ev := range h.events[:n] {
			id := int(ev.Fd)
			if id < 0 || id >= len(h.members) || h.members[id] == nil {
				continue
			}
			if !h.members[id].ready() && h.members[id] != nil {
				h.remove(id)
			}
		}
	}
}

// Close stops the hub's goroutine and waits for it; the members'
// connections stay open. It returns what stopped the goroutine before
// Close did (an epoll error), if anything.
func (h *Hub) Close() error {
	h.closing.Store(true)
	h.f.Close()
	if h.started {
		<-h.done
	}
	return h.err
}
