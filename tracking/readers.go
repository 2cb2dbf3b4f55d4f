package tracking

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/messages"
)

// reader is one caching connection and its goroutine's state: in a
// cluster, one of a reader's connections, to one primary, caching the
// keys of its slots (keys; nil: every key).
type reader struct {
	rs   *readers
	c    *conn.Conn
	r    *messages.Receiver
	keys []int
	// have[k] is the ordinal of key k's write the reader holds or was
	// last invalidated for (-1: none of this run's), the next
	// invalidation of k being for the write after it.
	have []int64
	// cover[k] (BCAST) is the latest write of key k a refetch found
	// done: the next invalidation of k covers every write up to it.
	cover []int64
	// lastAt[k] (BCAST) is when key k's last invalidation arrived.
	lastAt []conn.Times
	// refetching[k] is set while a GET of key k is in flight; fifo holds
	// those keys in the order they were sent.
	refetching []bool
	fifo       []int32
	wbuf       []byte
	pushed     []int32 // the current push's keys of this run
	counts     Counts  // the goroutine's own, read once it ended
	// accounted counts the writes the reader has accounted for (an
	// invalidation, an uncached one, a forgotten one), inflight its GETs
	// awaiting a reply: for settle.
	accounted, inflight atomic.Uint64
	done                chan struct{}
}

// readers is a run's caching connections.
type readers struct {
	cfg      *Config
	log      *messages.Log
	list     []*reader
	stopping atomic.Bool
	wg       sync.WaitGroup
}

// startReaders dials the readers, turns tracking on, lets each read every
// key once (default mode) and starts their goroutines. In a cluster (top
// set) each reader has a connection to every primary that owns some of
// the keys, caching those: a node tracks its own keys only.
func startReaders(ctx context.Context, cfg *Config, meter *messages.Meter, log *messages.Log, o conn.Options, top *cluster.Topology) (*readers, error) {
	rs := &readers{cfg: cfg, log: log}
	o.RESP3, o.ClientTracking = true, false
	o.OnTLSHandshake = nil // the readers' handshakes are not the writer's
	type place struct {
		keys []int
		opts conn.Options
		node string
	}
	places := []place{{opts: o}}
	if top != nil {
		byNode := make([][]int, len(top.Primaries))
		for k := range cfg.Keys {
			n := top.Owner(cluster.Slot([]byte(cfg.key(k))))
			if n < 0 {
				return nil, fmt.Errorf("no primary serves the slot of key %s", cfg.key(k))
			}
			byNode[n] = append(byNode[n], k)
		}
		places = places[:0]
		for n, keys := range byNode {
			if len(keys) > 0 {
				places = append(places, place{keys: keys, opts: o.ForAddr(top.Primaries[n].Addr), node: top.Primaries[n].Addr})
			}
		}
		if copies := len(places) * cfg.Keys * cfg.Readers; copies > 4*MaxCopies {
			return nil, fmt.Errorf("%d readers × %d keys on %d primaries: each connection keeps every key's state, %d in all, more than %d", cfg.Readers, cfg.Keys, len(places), copies, 4*MaxCopies)
		}
	}
	what := fmt.Sprintf("%s0…%d", cfg.Prefix, cfg.Keys-1)
	if cfg.Keys == 1 {
		what = cfg.key(0)
	}
	n := cfg.Readers * len(places)
	rs.list = make([]*reader, 0, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		j, pl := i/len(places), places[i%len(places)]
		name, keys := fmt.Sprintf("reader %d", j+1), what
		if pl.node != "" {
			name, keys = fmt.Sprintf("reader %d on %s", j+1, pl.node), fmt.Sprintf("%d keys of %s", len(pl.keys), pl.node)
		}
		rd := &reader{rs: rs, r: meter.NewReceiver(name, keys, 0), keys: pl.keys, have: make([]int64, cfg.Keys),
			done: make(chan struct{})}
		rd.refetching = make([]bool, cfg.Keys)
		if cfg.BCAST {
			rd.cover, rd.lastAt = make([]int64, cfg.Keys), make([]conn.Times, cfg.Keys)
		}
		for k := range rd.have {
			rd.have[k] = -1
			if rd.cover != nil {
				rd.cover[k] = -1
			}
		}
		rs.list = append(rs.list, rd)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = rd.dial(ctx, j, pl.opts)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			if e != nil {
				err = e // the first: the others are alike
				break
			}
		}
		rs.close()
		return nil, err
	}
	for _, rd := range rs.list {
		rs.wg.Add(1)
		go rd.read()
	}
	return rs, nil
}

// dial opens reader j's connection and turns tracking on: BCAST on the
// prefix, or default mode with a first read of every key.
func (rd *reader) dial(ctx context.Context, j int, o conn.Options) error {
	cfg := rd.rs.cfg
	c, err := conn.Dial(ctx, o)
	if err != nil {
		return fmt.Errorf("reader %d: cannot connect to %s: %w", j+1, o.Addr, err)
	}
	rd.c = c
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	args := []string{"CLIENT", "TRACKING", "on"}
	if cfg.BCAST {
		args = append(args, "BCAST", "PREFIX", cfg.Prefix)
	}
	// Named, so that CLIENT LIST tells the readers apart.
	hello := conn.AppendArgs(conn.AppendArgs(nil, args), []string{"CLIENT", "SETNAME", fmt.Sprintf("pacer-tracking-reader-%d", j+1)})
	if err := c.Write(hello); err != nil {
		return fmt.Errorf("reader %d: %w", j+1, err)
	}
	var t conn.Tracked
	for i, what := range []string{"CLIENT TRACKING", "CLIENT SETNAME"} {
		if err := rd.expect(ctx, &t, j); err != nil {
			return err
		}
		if t.Kind == conn.TrackedError && i == 0 {
			return fmt.Errorf("reader %d: the server refused %s: %s", j+1, what, t.Text)
		}
	}
	if cfg.BCAST {
		return nil
	}
	// Default mode: the server tracks what a reader reads, so it reads
	// every key (a missing one is tracked too), in batches.
	var keys []int
	rd.eachKey(func(k int) { keys = append(keys, k) })
	const batch = 512
	for first := 0; first < len(keys); first += batch {
		var b []byte
		part := keys[first:min(first+batch, len(keys))]
		for _, k := range part {
			b = conn.AppendCommand(b, "GET", cfg.key(k))
		}
		if err := c.Write(b); err != nil {
			return fmt.Errorf("reader %d: %w", j+1, err)
		}
		for i := 0; i < len(part); i++ {
			k := part[i]
			if err := rd.expect(ctx, &t, j); err != nil {
				return err
			}
			switch t.Kind {
			case conn.TrackedError:
				return fmt.Errorf("reader %d: the server refused GET %s: %s", j+1, cfg.key(k), t.Text)
			case conn.TrackedValue:
				rd.have[k] = rd.held(k, &t)
			default:
				i-- // a push before the reply: the key's reply is still to come
			}
		}
	}
	return nil
}

// expect reads the next reply or push while dialing.
func (rd *reader) expect(ctx context.Context, t *conn.Tracked, j int) error {
	if err := rd.c.ReadTracked(t, nil); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reader %d: %w", j+1, err)
	}
	return nil
}

// held is the ordinal of key k's write a value read holds: -1 for a
// missing key or a value of another run or client.
func (rd *reader) held(k int, t *conn.Tracked) int64 {
	if t.Null {
		return -1
	}
	h, ok := messages.ParseHeader(t.Head)
	keys := uint64(rd.rs.cfg.Keys)
	if !ok || !rd.r.Ours(h) || h.Seq%keys != uint64(k) {
		return -1
	}
	return int64(h.Seq / keys)
}

// read is the reader's goroutine: invalidations and its refetches'
// replies until the connection ends; an end that was not the run's is an
// event.
func (rd *reader) read() {
	rs := rd.rs
	defer rs.wg.Done()
	defer close(rd.done)
	var t conn.Tracked
	onKey := func(key []byte) {
		if k, ok := messages.Numbered(key, rs.cfg.Prefix); ok && k < rs.cfg.Keys {
			rd.pushed = append(rd.pushed, int32(k))
		} else {
			rd.r.Foreign()
		}
	}
	for {
		if len(rd.wbuf) > 0 && rd.c.Buffered() == 0 {
			// Everything read is handled: send the refetches before the
			// next read waits.
			if err := rd.c.Write(rd.wbuf); err != nil {
				rd.ended(err)
				return
			}
			rd.wbuf = rd.wbuf[:0]
		}
		if err := rd.c.ReadTracked(&t, onKey); err != nil {
			rd.ended(err)
			return
		}
		switch t.Kind {
		case conn.TrackedInvalidate:
			rd.counts.Pushes++
			rd.counts.Keys += uint64(t.Keys)
			if t.Flush {
				rd.counts.Flushes++
			}
			for _, k := range rd.pushed {
				rd.invalidated(int(k), t.Times)
			}
			rd.pushed = rd.pushed[:0]
		case conn.TrackedValue, conn.TrackedError:
			rd.refetched(&t)
		}
	}
}

// ended records the connection's end, when it was not the run's doing.
func (rd *reader) ended(err error) {
	if rd.rs.stopping.Load() {
		return
	}
	rd.r.End(clock.Now(), messages.EndReason(err))
}

// invalidated records an invalidation of key k that arrived at t: it is
// for the write of k after the one the reader holds (writes never queued
// skipped), which the log dates; in BCAST also for every later one a
// refetch found done since (the server gathered them into one).
func (rd *reader) invalidated(k int, t conn.Times) {
	cfg := rd.rs.cfg
	upTo := rd.have[k] + 1
	if rd.cover != nil {
		upTo = max(upTo, rd.cover[k])
	}
	if !rd.deliver(k, upTo, t) {
		rd.counts.Spurious++ // no write of k outstanding
	}
	if rd.lastAt != nil {
		rd.lastAt[k] = t
	}
	if !rd.refetching[k] {
		// Read the key again, as a cache refetches: in default mode the
		// server tracks it again from that read; in both the value says
		// which write the server had done.
		rd.refetching[k] = true
		rd.fifo = append(rd.fifo, int32(k))
		rd.wbuf = conn.AppendCommand(rd.wbuf, "GET", cfg.key(k))
		rd.counts.Refetches++
		rd.inflight.Add(1)
	}
}

// deliver records the writes of key k after the one the reader holds, up
// to ordinal upTo and at least one, as invalidations that arrived at t;
// it reports whether there was one (writes never queued are skipped).
func (rd *reader) deliver(k int, upTo int64, t conn.Times) bool {
	cfg, log := rd.rs.cfg, rd.rs.log
	keys := uint64(cfg.Keys)
	covered := false
	for o := rd.have[k] + 1; o <= upTo || !covered; o++ {
		seq := uint64(k) + keys*uint64(o)
		issued := log.Issued()
		if seq >= issued {
			break
		}
		if issued-seq > uint64(log.Size()) {
			rd.counts.Forgotten++
		} else {
			intended, queued, ok := log.Get(seq)
			if !ok {
				continue // dropped unsent: the server never had it
			}
			rd.r.Arrived(messages.First, messages.Header{Run: cfg.Run, Seq: seq, Intended: intended, Sent: queued}, t)
		}
		rd.have[k] = o
		rd.accounted.Add(1)
		covered = true
	}
	return covered
}

// refetched records a refetch's reply: the writes between the reader's
// invalidation and the value it now holds found it without a copy.
func (rd *reader) refetched(t *conn.Tracked) {
	if len(rd.fifo) == 0 {
		return // a reply to nothing this reader asked: not counted
	}
	k := int(rd.fifo[0])
	rd.fifo = rd.fifo[1:]
	if len(rd.fifo) == 0 {
		rd.fifo = rd.fifo[:0:0] // let the slice's start move back
	}
	rd.refetching[k] = false
	rd.inflight.Add(^uint64(0))
	if t.Kind != conn.TrackedValue {
		return
	}
	if rd.cover != nil {
		// BCAST: every write up to v was done before this read; those
		// not yet invalidated were gathered into the last invalidation,
		// or into the next one, which comes right after this reply. The
		// next invalidation covers them.
		rd.cover[k] = max(rd.cover[k], rd.held(k, t))
		return
	}
	if v := rd.held(k, t); v > rd.have[k] {
		rd.counts.Uncached += uint64(v - rd.have[k])
		rd.accounted.Add(uint64(v - rd.have[k]))
		rd.have[k] = v
	}
}

// settle waits for the invalidations and refetches still on their way
// once the writer is done: until every live reader has accounted for
// every write queued (sent) and has no read in flight, or nothing moved
// for quiet, or limit passed.
func (rs *readers) settle(ctx context.Context, sent func() uint64, quiet, limit time.Duration) {
	messages.Settle(ctx, quiet, limit, func() (uint64, bool) {
		all := sent()
		var moved uint64
		complete := true
		for _, rd := range rs.list {
			a, f := rd.accounted.Load(), rd.inflight.Load()
			moved += a + f<<32
			if !rd.r.Ended() && (a < all || f > 0) {
				complete = false
			}
		}
		return moved, complete
	})
}

// close ends every reader and waits for their goroutines.
func (rs *readers) close() {
	rs.stopping.Store(true)
	for _, rd := range rs.list {
		if rd != nil && rd.c != nil {
			rd.c.Close()
		}
	}
	rs.wg.Wait()
}

// finish counts, once the readers ended, the stale copies (default mode:
// a key whose last queued write is later than what its reader holds, with
// no refetch in flight) and sums every reader's counts. In BCAST, the
// writes a last refetch found done with no invalidation after it were
// gathered into the key's last one: they arrived with it.
func (rs *readers) finish() Counts {
	var all Counts
	if rs.cfg.BCAST {
		for _, rd := range rs.list {
			for k, v := range rd.cover {
				if v > rd.have[k] && rd.lastAt[k].Arrival != 0 {
					rd.deliver(k, v, rd.lastAt[k])
				}
			}
		}
	} else {
		last := rs.lastWrites()
		for _, rd := range rs.list {
			rd.eachKey(func(k int) {
				if last[k] > rd.have[k] && !rd.refetching[k] {
					rd.counts.StaleAtEnd++
				}
			})
		}
	}
	for _, rd := range rs.list {
		all.add(rd.counts)
	}
	return all
}

// lastWrites returns each key's last queued write's ordinal (-1: none).
func (rs *readers) lastWrites() []int64 {
	keys := uint64(rs.cfg.Keys)
	last := make([]int64, keys)
	for k := range last {
		last[k] = -1
	}
	issued := rs.log.Issued()
	found := uint64(0)
	// From the newest write back, until every key has its own (or the
	// log's end).
	for seq := issued; seq > 0 && found < keys && issued-seq < uint64(rs.log.Size()); seq-- {
		k := (seq - 1) % keys
		if last[k] >= 0 {
			continue
		}
		if _, _, ok := rs.log.Get(seq - 1); ok {
			last[k] = int64((seq - 1) / keys)
			found++
		}
	}
	return last
}

// expected is what reader r should have received: in default mode what
// it received and the stale copies it was left with, in BCAST every
// measured write of its keys.
func (rs *readers) expected(r *messages.Receiver, sent *messages.Sent) uint64 {
	for _, rd := range rs.list {
		if rd.r != r {
			continue
		}
		if !rs.cfg.BCAST {
			return r.Delivered() + rd.counts.StaleAtEnd
		}
		var n uint64
		rd.eachKey(func(k int) { n += sent.Channel(k) })
		return n
	}
	return 0
}

// eachKey calls f with each key the reader caches.
func (rd *reader) eachKey(f func(k int)) {
	if rd.keys != nil {
		for _, k := range rd.keys {
			f(k)
		}
		return
	}
	for k := range rd.have {
		f(k)
	}
}
