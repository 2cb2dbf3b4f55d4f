package embedded

// One client connection: its buffers and their limits, a batch parsed,
// executed a chunk at a time under the server lock, and answered when the
// virtual clock says.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// Buffer sizes of a connection. A connection's first connBase bytes of
// buffers are not charged to Config.MaxClientMemory (what Redis calls a
// client's fixed overhead); buffers grown for a large command or reply
// beyond the keep sizes are released once it is done.
const (
	baseInput  = 16 << 10 // read buffer of an idle connection (Redis's PROTO_IOBUF_LEN)
	connBase   = 64 << 10
	keepInput  = 1 << 20
	keepOutput = 1 << 20
	keepArgs   = 64 << 10
	// flushAt is the reply bytes after which a batch's replies so far are
	// written before it goes on: a client that pipelines large replies
	// and does not read holds one chunk, not the batch's replies.
	flushAt = 64 << 10
	// maxBatch is the most commands executed between two writes (it
	// bounds the parsed arguments of a batch of tiny commands).
	maxBatch = 1024
	// argSize and spanSize are the bytes of an argument's slice header
	// and of a command's span, charged for parsed batches.
	argSize  = 24
	spanSize = 16
	// errorWriteTimeout bounds the last write to a connection being
	// closed for exceeding a limit: it may not be reading.
	errorWriteTimeout = time.Second
)

// Errors that close a connection.
var (
	errQueryLimit   = errors.New("query buffer limit")
	errClientMemory = errors.New("client memory limit")
	errOutputLimit  = errors.New("output buffer limit")
)

// connection is one client connection's buffers and state.
type connection struct {
	srv     *Server
	nc      net.Conn
	cl      client
	buf     []byte // input; buf[r:w] is unparsed
	r, w    int
	need    int      // bytes (from r) the incomplete command needs at least; 0: unknown
	all     [][]byte // the batch's arguments, aliasing buf until it is answered
	cmds    []span
	charged int64 // bytes charged to srv.clientMem
	started bool  // a command has been executed (see isSetup)
	// unread: input arrived while a read was blocked (awaitBlock): parse
	// it before reading more.
	unread bool
	// ran and delays are a chunk's commands as executed and the delays
	// drawn for them (see exec).
	ran    []ran
	delays []int64
}

// ran is one command of a chunk: its table index (-1: not executed) and
// how long it took.
type ran struct {
	idx  int
	took int64
}

// span is one command's arguments within a batch: all[lo:hi].
type span struct{ lo, hi int }

// serve runs one connection: read what is there, execute every complete
// command in it, answer them when the virtual clock says.
func (s *Server) serve(nc net.Conn) {
	// The socket is what Close closes (a TLS close would first try to
	// write its alert to a client that may not read).
	rw := nc
	if s.cfg.TLS != nil {
		rw = tls.Server(nc, s.cfg.TLS)
	}
	cn := &connection{srv: s, nc: rw, cl: client{srv: s, proto: 2, noauth: s.cfg.Password != ""}, buf: make([]byte, baseInput)}
	cn.cl.cn, cn.cl.wake = cn, make(chan struct{}, 1)
	defer func() {
		s.endTracking(&cn.cl)
		s.endPubsub(&cn.cl)
		s.clientMem.Add(-cn.charged)
		s.cmu.Lock()
		delete(s.open, nc)
		s.cmu.Unlock()
		nc.Close()
		s.conns.Done()
	}()
	more := false // the last parse stopped at maxBatch with input left
	for {
		if !more && !cn.unread {
			if err := cn.makeRoom(); err != nil {
				cn.refuse(err)
				return
			}
			n, err := rw.Read(cn.buf[cn.w:])
			if err != nil {
				return
			}
			cn.w += n
		}
		now := clock.Now()
		var perr error
		cn.unread = false
		more, perr = cn.parse()
		if len(cn.cmds) > 0 && !cn.exec(now) {
			return
		}
		if perr != nil {
			cn.refuse(perr)
			return
		}
		if cn.r == cn.w {
			cn.r, cn.w = 0, 0
			cn.shrink()
		}
	}
}

// makeRoom makes space to read into: it moves the unparsed input to the
// front of the buffer or grows the buffer, within the limits.
func (cn *connection) makeRoom() error {
	if cn.w < len(cn.buf) {
		return nil
	}
	if cn.r > 0 {
		cn.w = copy(cn.buf, cn.buf[cn.r:cn.w])
		cn.r = 0
		return nil
	}
	limit := cn.srv.cfg.MaxQueryBuffer
	if len(cn.buf) >= limit {
		return errQueryLimit
	}
	size := 2 * len(cn.buf) // grow with what the client sends, not with what it announces
	if cn.need > len(cn.buf) && cn.need < size {
		size = cn.need
	}
	size = min(size, limit)
	if !cn.charge(size) {
		return errClientMemory
	}
	nb := make([]byte, size)
	copy(nb, cn.buf[:cn.w])
	cn.buf = nb
	return nil
}

// charge moves the connection's charge to the total to what its buffers
// hold, with an input buffer of bufCap bytes. It reports false, charging
// nothing more, when the total would exceed Config.MaxClientMemory.
func (cn *connection) charge(bufCap int) bool {
	held := int64(bufCap + cap(cn.cl.out) + argSize*cap(cn.all) + spanSize*cap(cn.cmds))
	want := max(0, held-connBase)
	d := want - cn.charged
	if d == 0 {
		return true
	}
	if d > 0 && cn.srv.clientMem.Add(d) > int64(cn.srv.cfg.MaxClientMemory) {
		cn.srv.clientMem.Add(-d)
		return false
	}
	if d < 0 {
		cn.srv.clientMem.Add(d)
	}
	cn.charged = want
	return true
}

// parse splits buf[r:w] into the batch's commands, at most maxBatch of
// them; more reports that complete input may remain.
func (cn *connection) parse() (more bool, err error) {
	cn.cmds, cn.all = cn.cmds[:0], cn.all[:0]
	for cn.r < cn.w {
		if len(cn.cmds) == maxBatch {
			more = true
			break
		}
		lo := len(cn.all)
		var used int
		cn.all, used, cn.need, err = parseCommand(cn.buf[cn.r:cn.w], cn.all)
		if err == nil && cn.need > cn.srv.cfg.MaxQueryBuffer {
			err = errQueryLimit
		}
		if err != nil || used == 0 {
			clear(cn.all[lo:]) // no references into buf beyond len
			cn.all = cn.all[:lo]
			break
		}
		if len(cn.all) > lo {
			cn.cmds = append(cn.cmds, span{lo, len(cn.all)})
		}
		cn.r += used
	}
	if !cn.charge(cap(cn.buf)) && err == nil {
		err = errClientMemory
	}
	return more, err
}

// exec executes the batch and writes its replies: a chunk of commands
// at a time under the server lock, each chunk's replies written when the
// virtual clock has finished it. It reports false when the connection
// must end (QUIT, Close, a write error or a limit).
func (cn *connection) exec(now int64) bool {
	s, cl := cn.srv, &cn.cl
	defer func() { clear(cn.all) }() // let the input buffer go once answered
	for i := 0; i < len(cn.cmds); {
		s.mu.Lock()
		cl.mark = clock.Now()
		j := i
		for j < len(cn.cmds) && len(cl.out) < flushAt && !cl.quit {
			sp := cn.cmds[j]
			j++
			args := cn.all[sp.lo:sp.hi]
			first := !cn.started
			cn.started = true
			if s.cfg.Faults.ErrorRate > 0 && !isSetup(args, first) && s.rng.Float64() < s.cfg.Faults.ErrorRate {
				cl.out = append(cl.out, errInjected...)
				cn.ran = append(cn.ran, ran{idx: -1})
				continue
			}
			cl.exec(args)
			if cl.block != nil {
				j-- // blocked (XREADGROUP BLOCK): run it again once woken
				break
			}
			cn.ran = append(cn.ran, ran{idx: cl.ran, took: cl.took})
		}
		cl.mark = 0
		var done int64
		if s.cfg.Faults.Delay.Kind == DelayNone {
			done = s.finish(now, j-i, nil)
		} else {
			// The delay drawn for a command is part of its time (INFO
			// commandstats, LATENCY HISTOGRAM).
			cn.delays = slices.Grow(cn.delays[:0], j-i)[:j-i]
			done = s.finish(now, j-i, cn.delays)
			for k, r := range cn.ran {
				if r.idx >= 0 {
					s.addDelay(r.idx, r.took, cn.delays[k])
				}
			}
		}
		cn.ran = cn.ran[:0]
		cl.flushToBox(done)
		s.mu.Unlock()
		s.processed.Add(uint64(j - i))
		i = j
		if cap(cl.out) > s.cfg.MaxOutputBuffer || !cn.charge(cap(cn.buf)) {
			return false // like Redis, no reply: the client is not reading them
		}
		if len(cl.out) > 0 { // empty: a subscribed connection's, gone to its outbox
			if done > now && !s.sleepUntil(done) {
				return false
			}
			if _, err := cn.nc.Write(cl.out); err != nil {
				return false
			}
		}
		if cl.quit {
			return false
		}
		cl.out = cl.out[:0]
		if cl.block != nil {
			if !cn.awaitBlock() {
				return false
			}
			now = clock.Now() // the read runs again now, stalls and all
		}
	}
	return true
}

// shrink releases buffers grown for a large command or reply once the
// connection has no unparsed input.
func (cn *connection) shrink() {
	if cap(cn.buf) > keepInput {
		cn.buf = make([]byte, baseInput)
	}
	if cap(cn.cl.out) > keepOutput {
		cn.cl.out = nil
	}
	if cap(cn.all) > keepArgs {
		cn.all, cn.cmds = nil, nil
	}
	cn.charge(cap(cn.buf))
}

// refuse answers err, which ends the connection, as the client sees it.
func (cn *connection) refuse(err error) {
	cfg := cn.srv.cfg
	var msg string
	switch err {
	case errQueryLimit:
		msg = fmt.Sprintf("-ERR Protocol error: query buffer limit: a command needs more than %d bytes (client-query-buffer-limit of the embedded target)\r\n", cfg.MaxQueryBuffer)
	case errClientMemory:
		msg = fmt.Sprintf("-ERR client memory limit: the buffers of all connections would exceed %d bytes (maxmemory-clients of the embedded target)\r\n", cfg.MaxClientMemory)
	default:
		msg = "-ERR Protocol error: " + err.Error() + "\r\n"
	}
	// Let the big buffers go before a write that may wait for a client
	// that does not read.
	cn.buf, cn.all = nil, nil
	cn.charge(0)
	cn.nc.SetWriteDeadline(time.Now().Add(errorWriteTimeout))
	cn.nc.Write([]byte(msg))
}
