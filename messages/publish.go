package messages

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Sent counts the messages the publishers queued on each channel (or
// stream): what every receiver of the channel should get. Measured and
// warmup messages apart.
type Sent struct {
	measured, warm []atomic.Uint64
}

// NewSent counts for channels channels.
func NewSent(channels int) *Sent {
	return &Sent{measured: make([]atomic.Uint64, channels), warm: make([]atomic.Uint64, channels)}
}

// Channel returns the measured messages queued on channel c.
func (s *Sent) Channel(c int) uint64 { return s.measured[c].Load() }

// All returns the messages queued on channel c, the warmup's included.
func (s *Sent) All(c int) uint64 { return s.measured[c].Load() + s.warm[c].Load() }

// Total returns the measured messages queued on every channel.
func (s *Sent) Total() uint64 {
	var n uint64
	for i := range s.measured {
		n += s.measured[i].Load()
	}
	return n
}

// Channels is the number of channels counted.
func (s *Sent) Channels() int { return len(s.measured) }

// Prefix encodes a command of args followed by one more argument of
// payloadLen bytes, up to that argument's bytes: what goes before a
// payload (PUBLISH channel, XADD key * p).
func Prefix(args []string, payloadLen int) []byte {
	b := []byte{'*'}
	b = strconv.AppendInt(b, int64(len(args)+1), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(payloadLen), 10)
	return append(b, '\r', '\n')
}

// Publisher is a publisher's command stream: message i goes to channel
// i mod K, its command being that channel's prefix (see Prefix) and a
// payload whose header says where it stands. On the open timeline it is
// a scheduler.Stamper: the pacer's Stamp gives it the message's index,
// intended instant and queued instant. A closed loop (Closed) numbers
// its messages itself, shared by its connections, and stamps them with
// the instant it builds them: what a closed-loop tool measures from.
type Publisher struct {
	meter    *Meter
	sent     *Sent
	prefixes [][]byte
	payload  []byte
	buf      []byte

	// An open publisher's next message.
	index            uint64
	intended, queued int64

	// closed is set for a closed loop's connections: they share seq.
	closed *closedSeq
	// log, when set, records every message (WithLog).
	log *Log
}

// closedSeq numbers a closed loop's messages across its connections and
// begins the meter at the first.
type closedSeq struct {
	next  atomic.Uint64
	begin sync.Once
}

// NewPublisher returns the stream of an open publisher sending to
// len(prefixes) channels payloads of size bytes.
func NewPublisher(m *Meter, sent *Sent, prefixes [][]byte, size int) *Publisher {
	p := &Publisher{meter: m, sent: sent, prefixes: prefixes, payload: Payload(size)}
	return p
}

// ClosedPublishers returns what makes a closed loop's streams: each call
// a stream for one connection, all numbering their messages in one
// sequence.
func ClosedPublishers(m *Meter, sent *Sent, prefixes [][]byte, size int) func() *Publisher {
	seq := &closedSeq{}
	return func() *Publisher {
		p := NewPublisher(m, sent, prefixes, size)
		p.closed = seq
		return p
	}
}

// Begin implements scheduler.Stamper: the timeline starts at t0.
func (p *Publisher) Begin(t0 int64) { p.meter.Begin(t0) }

// Stamp implements scheduler.Stamper: the next message is index, intended
// at intended, queued at queued.
func (p *Publisher) Stamp(index uint64, intended, queued int64) {
	p.index, p.intended, p.queued = index, intended, queued
}

// Next implements the scheduler's command stream: the next message's
// command, valid until the next call.
func (p *Publisher) Next() ([]byte, uint32) {
	if p.closed != nil {
		p.closed.begin.Do(func() { p.meter.Begin(now()) })
		p.index = p.closed.next.Add(1) - 1
		p.intended = now()
		p.queued = p.intended
	}
	k := uint64(len(p.prefixes))
	c := int(p.index % k)
	Header{Run: p.meter.Run, Seq: p.index, Intended: p.intended, Sent: p.queued}.Put(p.payload)
	if p.log != nil {
		p.log.put(p.index, p.intended, p.queued)
	}
	if p.intended >= p.meter.warmEnd.Load() {
		p.sent.measured[c].Add(1)
	} else {
		p.sent.warm[c].Add(1)
	}
	p.buf = append(append(append(p.buf[:0], p.prefixes[c]...), p.payload...), '\r', '\n')
	return p.buf, 0
}

// Ordinal returns message seq's channel and its ordinal there, for K
// channels.
func Ordinal(seq uint64, k int) (channel int, ord uint64) {
	return int(seq % uint64(k)), seq / uint64(k)
}

// Layout spreads n receivers (subscribers, a group's consumers) over k
// channels (or streams): with n ≥ k receiver j
// takes channel j mod k (so each channel has ⌊n/k⌋ or ⌈n/k⌉ of them, its
// fan-out); with fewer receivers than channels, receiver j takes every
// channel c with c mod n = j, so every channel has one.
func Layout(j, n, k int) []int {
	if n >= k {
		return []int{j % k}
	}
	var out []int
	for c := j; c < k; c += n {
		out = append(out, c)
	}
	return out
}

// FanOut returns how many of n receivers listen to channel c of k.
func FanOut(c, n, k int) int {
	if n < k {
		return 1
	}
	f := n / k
	if c < n%k {
		f++
	}
	return f
}

// Log remembers the recent messages' intended and queued instants by
// sequence number, for receivers whose delivery does not carry the
// payload: a client-side cache's invalidation names only its key, and
// the receiver works out which write it was for. A ring of a power of
// two slots: a message more than its size behind the newest is
// forgotten. Written by the publisher, read by any goroutine.
type Log struct {
	slots  []logSlot
	mask   uint64
	issued atomic.Uint64
}

// logSlot holds one message; seq is its sequence number + 1 (0: empty),
// stored last and checked on both sides of a read, so that a slot being
// rewritten is never read as the older message.
type logSlot struct {
	seq, intended, queued atomic.Int64
}

// NewLog returns a Log of at least size messages.
func NewLog(size int) *Log {
	n := 1
	for n < size {
		n <<= 1
	}
	return &Log{slots: make([]logSlot, n), mask: uint64(n - 1)}
}

// put records message seq.
func (l *Log) put(seq uint64, intended, queued int64) {
	s := &l.slots[seq&l.mask]
	s.seq.Store(0)
	s.intended.Store(intended)
	s.queued.Store(queued)
	s.seq.Store(int64(seq) + 1)
	for i := l.issued.Load(); seq+1 > i && !l.issued.CompareAndSwap(i, seq+1); i = l.issued.Load() {
	}
}

// Get returns message seq's intended and queued instants; ok is false
// when it was not queued yet or is forgotten.
func (l *Log) Get(seq uint64) (intended, queued int64, ok bool) {
	s := &l.slots[seq&l.mask]
	if s.seq.Load() != int64(seq)+1 {
		return 0, 0, false
	}
	intended, queued = s.intended.Load(), s.queued.Load()
	if s.seq.Load() != int64(seq)+1 {
		return 0, 0, false
	}
	return intended, queued, true
}

// Issued is one past the highest sequence number queued so far.
func (l *Log) Issued() uint64 { return l.issued.Load() }

// Size is how many messages the log remembers.
func (l *Log) Size() int { return len(l.slots) }

// WithLog makes p record every message it builds into l.
func (p *Publisher) WithLog(l *Log) *Publisher {
	p.log = l
	return p
}

// Numbered reads the number of a channel, stream or key named prefix and
// a decimal number (pacer:ch:7 is 7); ok is false for any other name.
func Numbered(name []byte, prefix string) (n int, ok bool) {
	if len(name) <= len(prefix) || string(name[:len(prefix)]) != prefix {
		return 0, false
	}
	for _, ch := range name[len(prefix):] {
		if ch < '0' || ch > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	return n, true
}

// Settle waits for what is still on its way to the receivers once the
// publisher is done: look, every few milliseconds, reports the receivers'
// progress (any count that grows while deliveries arrive) and whether
// they have everything; Settle returns when they do, when the progress
// stood still for quiet, when limit passed, or when ctx ends.
func Settle(ctx context.Context, quiet, limit time.Duration, look func() (progress uint64, complete bool)) {
	deadline := time.Now().Add(limit)
	var last uint64
	lastChange := time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		progress, complete := look()
		if complete {
			return
		}
		if progress != last {
			last, lastChange = progress, time.Now()
		} else if time.Since(lastChange) >= quiet {
			return
		}
		time.Sleep(settlePoll)
	}
}

// settlePoll is how often Settle looks.
const settlePoll = 5 * time.Millisecond
