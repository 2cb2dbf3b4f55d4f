package replay

import (
	"errors"
	"fmt"
	"io"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// reader reads the requests a replay sends, in order, from the trace:
// each one's offset on the replay's timeline, command (encoded, keys
// prefixed), kind and connection group. It skips what the plan does not
// send and starts the trace again for each loop, from the file the plan
// checked; a pass that reads other bytes than the check ends it with an
// error.
type reader struct {
	cfg  *Config
	plan *Plan
	r    *scenarios.TraceReader
	loop int
	err  error
	// index is the request it returns next.
	index uint64
	// The last request read: valid until the next read.
	off   int64
	cmd   []byte
	kind  uint32
	group int

	name, keys []byte
	prefix     []byte
	at         []int // the keys' indexes
}

func newReader(cfg *Config, plan *Plan) *reader {
	return &reader{cfg: cfg, plan: plan, prefix: []byte(cfg.KeyPrefix)}
}

// read advances to the next request; false at the end (or on an error:
// err).
func (x *reader) read(withCommand bool) bool {
	p := x.plan
	for {
		if x.r == nil {
			if x.loop >= p.Loops {
				return false
			}
			if p.file.Changed() {
				p.changed.Store(true)
				x.err = fmt.Errorf("%s changed since it was checked (its size or modification time): the replay stops", p.file.Name())
				return false
			}
			r, err := p.reader(nil)
			if err != nil {
				x.err = err
				return false
			}
			x.r = r
		}
		rec, err := x.r.Next()
		if errors.Is(err, io.EOF) {
			err = p.sameDigest(x.r)
			x.r.Close()
			x.r = nil
			if err != nil {
				x.err = err
				return false
			}
			x.loop++
			continue
		}
		if err != nil {
			x.err = err
			return false
		}
		if a, _ := p.policy.Decide(rec); a != scenarios.Replay || scenarios.IsSelect(rec.Argv) {
			continue
		}
		shift := float64(x.loop) * float64(p.Length)
		x.off = int64((float64(rec.T-p.Summary.First) + shift) / p.Speed)
		x.index++
		if !withCommand {
			return true
		}
		x.name = scenarios.AppendCommandName(x.name[:0], rec.Argv)
		if len(x.name) > 64 {
			x.name = x.name[:64]
		}
		x.kind = p.kindOf(x.name)
		x.group = p.groups[p.groupOf(*x.cfg, rec)]
		argv := rec.Argv
		if len(x.prefix) > 0 {
			var ok bool
			if x.at, ok = cluster.KeyIndexes(x.at, argv); ok {
				argv, x.keys = scenarios.PrefixKeys(argv, x.at, x.prefix, x.keys)
			}
		}
		x.cmd = conn.AppendArgs(x.cmd[:0], argv)
		return true
	}
}

func (x *reader) close() {
	if x.r != nil {
		x.r.Close()
		x.r = nil
	}
}

// offsets is a reader of offsets alone: a timeline's rewind, or a fork
// (live totals, the counts at the end of a run).
type offsets struct{ x *reader }

func (o offsets) Next() (int64, bool) {
	if !o.x.read(false) {
		return 0, false
	}
	return o.x.off, true
}
func (o offsets) Err() error   { return o.x.err }
func (o offsets) Close() error { o.x.close(); return nil }

// shared is the one reader the pacer's timeline and command stream share:
// the timeline reads request i's offset before the stream gives request
// i's command, so what the timeline has read and the stream has not
// given yet waits in a small queue (a request or two).
type shared struct {
	x     *reader
	queue []pending
	head  int
	// taken is the index of the request the stream gives next; with a
	// shard, the stream gives only the shard's requests (global index
	// mod n = k−1) and drops the others.
	taken uint64
	k, n  uint64
	cur   pending
}

type pending struct {
	index uint64
	cmd   []byte
	kind  uint32
	group int
}

// Next implements timeline.TraceOffsets for the pacer's timeline.
func (s *shared) Next() (int64, bool) {
	if !s.x.read(true) {
		return 0, false
	}
	s.push(pending{index: s.x.index - 1, kind: s.x.kind, group: s.x.group}, s.x.cmd)
	return s.x.off, true
}
func (s *shared) Err() error   { return s.x.err }
func (s *shared) Close() error { s.x.close(); return nil }

// push queues a request read by the timeline, reusing the buffers of
// requests given already. The timeline reads a request or a batch ahead of
// the stream, so the queue is rarely empty: its given head is moved out of
// the way once it is most of the queue, which keeps it as small as the
// look-ahead.
func (s *shared) push(p pending, cmd []byte) {
	if s.head > 0 && (s.head == len(s.queue) || s.head >= 32 && 2*s.head >= len(s.queue)) {
		// Swap, not copy: every entry keeps a buffer of its own.
		n := len(s.queue) - s.head
		for i := range n {
			s.queue[i], s.queue[s.head+i] = s.queue[s.head+i], s.queue[i]
		}
		s.queue, s.head = s.queue[:n], 0
	}
	if len(s.queue) < cap(s.queue) {
		s.queue = s.queue[:len(s.queue)+1]
		buf := s.queue[len(s.queue)-1].cmd
		p.cmd = append(buf[:0], cmd...)
		s.queue[len(s.queue)-1] = p
		return
	}
	p.cmd = append([]byte(nil), cmd...)
	s.queue = append(s.queue, p)
}

// want is the global index of the request the stream gives next.
func (s *shared) want() uint64 {
	if s.n <= 1 {
		return s.taken
	}
	return s.taken*s.n + s.k - 1
}

// front finds the next request the stream gives, dropping the queue's
// requests of other shards; false when the timeline has not read it.
func (s *shared) front() (*pending, bool) {
	w := s.want()
	for s.head < len(s.queue) {
		p := &s.queue[s.head]
		if p.index == w {
			return p, true
		}
		s.head++
	}
	return nil, false
}

// Group implements openloop.Grouper: the group of the command Next gives
// next.
func (s *shared) Group() int {
	if p, ok := s.front(); ok {
		return p.group
	}
	return 0
}

// Next implements scheduler.Commands. The pacer asks for request i's
// command after its offset, so it is in the queue; were it not, the stream
// gives a PING (never: a test guards it).
func (s *shared) next() ([]byte, uint32) {
	p, ok := s.front()
	s.taken++
	if !ok {
		return ping, 0
	}
	s.head++
	// The command's bytes move to cur, where they stay until the next
	// call (the pacer may read ahead on the timeline before it writes
	// them); the queue entry takes cur's old buffer.
	p.cmd, s.cur.cmd = s.cur.cmd, p.cmd
	s.cur.kind, s.cur.group, s.cur.index = p.kind, p.group, p.index
	return s.cur.cmd, s.cur.kind
}

var ping = []byte("*1\r\n$4\r\nPING\r\n")

// commands is the shared reader seen as the pacer's command stream.
type commands struct{ s *shared }

func (c commands) Next() ([]byte, uint32) { return c.s.next() }
func (c commands) Group() int             { return c.s.Group() }

var (
	_ timeline.TraceOffsets = offsets{}
	_ timeline.TraceOffsets = (*shared)(nil)
	_ openloop.Grouper      = commands{}
)
