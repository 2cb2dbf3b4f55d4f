//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package conn

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Hub: see hub.go.
type Hub struct {
	f    *os.File // the epoll instance, waited on in the netpoller
	raw  syscall.RawConn
	epfd int
	// wake is a pipe in the epoll set (wakeID): a member ended from
	// another goroutine writes to it, so the hub's goroutine finishes it.
	wake [2]int
	// members is by id, the events' data; an entry is nil once gone.
	// Join copies it under mu, so the hub's goroutine reads it without a
	// lock, and members may join while the hub runs.
	mu      sync.Mutex
	members atomic.Pointer[[]*member]
	ended   []*member // detached from another goroutine; under mu
	shut    bool      // Close began; under mu
	events  [64]syscall.EpollEvent
	err     error
	started bool
	closing atomic.Bool
	done    chan struct{}
}

// wakeID is the epoll data of the wake pipe.
const wakeID = -1

type member struct {
	h     *Hub
	id    int
	c     *Conn
	fd    int
	ready func() bool
	// reads: the hub is the connection's reader (StartOn), and closes its
	// Done when it stops reading it.
	reads bool
	// gone: out of the epoll set (detach); finished: the hub will not
	// call ready again (the hub's goroutine only).
	gone     atomic.Bool
	finished bool
}

// NewHub makes a hub; errors.ErrUnsupported where there is none (not
// Linux).
func NewHub() (*Hub, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	h := &Hub{epfd: epfd, done: make(chan struct{})}
	if err := syscall.Pipe2(h.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("pipe2", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: wakeID}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, h.wake[0], &ev); err != nil {
		h.closeFDs()
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	// Non-blocking, os.NewFile hands it to the netpoller: it is readable
	// while any member's socket is.
	if err := syscall.SetNonblock(epfd, true); err != nil {
		h.closeFDs()
		return nil, os.NewSyscallError("fcntl", err)
	}
	h.f = os.NewFile(uintptr(epfd), "hub")
	if h.raw, err = h.f.SyscallConn(); err != nil {
		h.f.Close()
		syscall.Close(h.wake[0])
		syscall.Close(h.wake[1])
		return nil, err
	}
	h.members.Store(&[]*member{})
	return h, nil
}

func (h *Hub) closeFDs() {
	syscall.Close(h.epfd)
	syscall.Close(h.wake[0])
	syscall.Close(h.wake[1])
}

// Join makes c a member: on the hub's goroutine, ready is called whenever
// c's socket holds bytes, and again while it still does (the epoll
// instance is level-triggered), so ready may read once and return. ready
// returns false when c is done with the hub (its connection ended, or it
// Left). A member may join before Start or while the hub runs.
// ErrUnsupported when c cannot be a member (see hub.go).
func (h *Hub) Join(c *Conn, ready func() bool) error {
	_, err := h.join(c, ready, false)
	return err
}

func (h *Hub) join(c *Conn, ready func() bool, reads bool) (*member, error) {
	if !c.hubbable() || c.member.Load() != nil {
		return nil, errors.ErrUnsupported
	}
	fd := -1
	if err := c.stamps.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return nil, err
	}
	c.rd.try = true
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		c.rd.try = false
		return nil, ErrClosed
	}
	old := *h.members.Load()
	m := &member{h: h, id: len(old), c: c, fd: fd, ready: ready, reads: reads}
	// Published before the socket is in the set: its first event finds it.
	h.members.Store(new(append(old[:len(old):len(old)], m)))
	c.member.Store(m)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(m.id)}
	if err := syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		c.member.Store(nil)
		c.rd.try = false
		h.drop(m.id)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return m, nil
}

// drop clears member id's entry; under mu.
func (h *Hub) drop(id int) {
	cur := *h.members.Load()
	next := make([]*member, len(cur))
	copy(next, cur)
	next[id] = nil
	h.members.Store(&next)
}

// Leave ends c's membership from its ready function: its reads wait
// again, and a goroutine of its own may read it from now on.
func (h *Hub) Leave(c *Conn) {
	if m := c.member.Load(); m != nil && m.h == h {
		h.leave(m)
	}
}

// leave takes m out of the set on the hub's goroutine; false when it was
// out already (its connection ended meanwhile: the hub finishes it as
// ended).
func (h *Hub) leave(m *member) bool {
	if !m.detach(false) {
		return false
	}
	m.c.member.Store(nil)
	m.c.rd.try = false
	h.finish(m, false)
	return true
}

// detach takes m's socket out of the epoll set, once, before the socket
// is closed: a descriptor closed first could be reused by another
// member's socket before the removal, which would then remove that one.
// From a goroutine other than the hub's (wake), the hub's goroutine
// finishes the member when it next wakes, which the wake pipe makes
// soon. Once the hub is shut, nothing is removed: its end finishes every
// member.
func (m *member) detach(wake bool) bool {
	h := m.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !m.gone.CompareAndSwap(false, true) {
		return false
	}
	if h.shut {
		return true
	}
	_ = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_DEL, m.fd, nil)
	if wake {
		h.ended = append(h.ended, m)
		b := [1]byte{1}
		_, _ = syscall.Write(h.wake[1], b[:]) // a full pipe wakes the hub already
	}
	return true
}

// finish ends the hub's reading of m, on the hub's goroutine (or once it
// stopped): a connection whose reader the hub was is ended (ReadEnded,
// Done), unless it left for a reader of its own.
func (h *Hub) finish(m *member, ended bool) {
	if m.finished {
		return
	}
	m.finished = true
	h.mu.Lock()
	if cur := *h.members.Load(); m.id < len(cur) && cur[m.id] == m {
		h.drop(m.id)
	}
	h.mu.Unlock()
	if m.reads && ended {
		m.c.readEnded()
	}
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
	h.finishAll()
}

// finishAll ends every member, once the hub is shut and reads no more.
func (h *Hub) finishAll() {
	for _, m := range *h.members.Load() {
		if m != nil {
			m.detach(false)
			h.finish(m, true)
		}
	}
	h.finishEnded()
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
		members := *h.members.Load()
		for _, ev := range h.events[:n] {
			id := int(ev.Fd)
			if id == wakeID {
				h.drainWake()
				continue
			}
			if id < 0 || id >= len(members) || members[id] == nil {
				continue
			}
			m := members[id]
			if m.gone.Load() || m.finished {
				continue // ended from another goroutine: finishEnded's
			}
			if !m.ready() && !m.finished {
				m.detach(false)
				h.finish(m, true)
			}
		}
	}
}

// drainWake empties the wake pipe and finishes the members ended from
// other goroutines.
func (h *Hub) drainWake() {
	var b [64]byte
	for {
		if n, _ := syscall.Read(h.wake[0], b[:]); n < len(b) {
			break
		}
	}
	h.finishEnded()
}

func (h *Hub) finishEnded() {
	h.mu.Lock()
	ended := h.ended
	h.ended = nil
	h.mu.Unlock()
	for _, m := range ended {
		h.finish(m, true)
	}
}

// Close stops the hub's goroutine and waits for it; the members'
// connections stay open, and those it read for are read no more. It
// returns what stopped the goroutine before Close did (an epoll error),
// if anything.
func (h *Hub) Close() error {
	h.closing.Store(true)
	h.mu.Lock()
	shut := h.shut
	h.shut = true
	h.mu.Unlock()
	if shut {
		return h.err
	}
	h.f.Close()
	if h.started {
		<-h.done
	} else {
		h.finishAll()
	}
	syscall.Close(h.wake[0])
	syscall.Close(h.wake[1])
	return h.err
}
