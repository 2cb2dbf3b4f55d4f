package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/messages"
)

// consumer is one consumer of a group: its connection, the streams it
// reads and what it acknowledges.
type consumer struct {
	g       *groups
	gi      int
	streams []int
	c       *conn.Conn
	r       *messages.Receiver
	// read is its XREADGROUP, encoded once.
	read []byte
	// acks[s] are stream s's IDs to acknowledge, encoded as bulk
	// strings, measured and warmup apart (so that only the measured
	// entries' acknowledgements count); n their counts.
	acks, warmAcks [][]byte
	n, warmN       []int
	buf            []byte
	got            []entry
}

// entry is one entry of a read, recorded once the read's instants are
// known.
type entry struct {
	h      messages.Header
	stream int
	ok     bool
}

// start dials every consumer and starts its goroutine; the first
// failure ends those opened.
func (g *groups) start(ctx context.Context, meter *messages.Meter, o conn.Options, top *cluster.Topology) error {
	cfg := g.cfg
	g.tracks = make([][]messages.Track, cfg.Groups)
	g.mu = make([]sync.Mutex, cfg.Groups)
	g.received = make([]atomic.Uint64, cfg.Groups)
	for gi := range cfg.Groups {
		g.tracks[gi] = make([]messages.Track, cfg.Streams)
		for j := range cfg.Consumers {
			streams := messages.Layout(j, cfg.Consumers, cfg.Streams)
			names := make([]string, len(streams))
			for i, s := range streams {
				names[i] = cfg.key(s)
			}
			what := strings.Join(names, ",")
			if len(what) > 60 {
				what = fmt.Sprintf("%d streams", len(streams))
			}
			c := &consumer{g: g, gi: gi, streams: streams, acks: make([][]byte, cfg.Streams), warmAcks: make([][]byte, cfg.Streams),
				n: make([]int, cfg.Streams), warmN: make([]int, cfg.Streams),
				r: meter.NewReceiver(fmt.Sprintf("%s consumer %d", cfg.group(gi), j+1), what, 0)}
			args := []string{"XREADGROUP", "GROUP", cfg.group(gi), "c" + strconv.Itoa(j+1), "COUNT", strconv.Itoa(cfg.Count),
				"BLOCK", strconv.FormatInt(cfg.Block.Milliseconds(), 10), "STREAMS"}
			args = append(args, names...)
			for range streams {
				args = append(args, ">")
			}
			c.read = conn.AppendArgs(nil, args)
			g.consumers = append(g.consumers, c)
		}
	}
	errs := make([]error, len(g.consumers))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, c := range g.consumers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			co := o
			if top != nil {
				co = o.ForAddr(top.Primaries[top.Owner(cluster.Slot([]byte(cfg.key(c.streams[0]))))].Addr)
			}
			var err error
			if c.c, err = conn.Dial(ctx, co); err != nil {
				errs[i] = fmt.Errorf("%s: cannot connect to %s: %w", c.r.Name, co.Addr, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			g.close()
			return err
		}
	}
	for _, c := range g.consumers {
		g.wg.Add(1)
		go c.loop()
	}
	return nil
}

// drain lets every consumer acknowledge what it read and stop: it ends
// after its current read (at most a BLOCK), its time for the entries that
// read brings, and their XACK; limit bounds the wait.
func (g *groups) drain(limit time.Duration) {
	g.draining.Store(true)
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// close ends every consumer and waits for their goroutines.
func (g *groups) close() {
	g.stopping.Store(true)
	for _, c := range g.consumers {
		if c.c != nil {
			c.c.Close()
		}
	}
	g.wg.Wait()
}

// loop reads, records, takes the consumer's time per entry,
// acknowledges and reads again, until the connection ends.
func (c *consumer) loop() {
	g, cfg := c.g, c.g.cfg
	defer g.wg.Done()
	if err := c.c.WriteThenWait(c.read); err != nil {
		c.end(err)
		return
	}
	var e conn.StreamEntry
	collect := func(e *conn.StreamEntry) {
		s, ok := messages.Numbered(e.Stream, cfg.Prefix)
		h, hok := messages.ParseHeader(e.Head)
		en := entry{h: h, stream: s, ok: ok && hok && s < cfg.Streams && c.r.Ours(h) && int(h.Seq%uint64(cfg.Streams)) == s}
		c.got = append(c.got, en)
		if ok && s < cfg.Streams {
			if en.ok && c.r.Warm(h) {
				c.warmAcks[s] = appendBulk(c.warmAcks[s], e.ID)
				c.warmN[s]++
			} else {
				c.acks[s] = appendBulk(c.acks[s], e.ID)
				c.n[s]++
			}
		}
	}
	var next int64
	for {
		c.got = c.got[:0]
		n, t, err := c.c.ReadEntries(&e, collect)
		if err != nil {
			c.end(err)
			return
		}
		for _, en := range c.got {
			if !en.ok {
				c.r.Foreign()
				continue
			}
			g.mu[c.gi].Lock()
			out := g.tracks[c.gi][en.stream].Add(en.h.Seq / uint64(cfg.Streams))
			g.mu[c.gi].Unlock()
			if out == messages.First {
				g.received[c.gi].Add(1)
			}
			c.r.Arrived(out, en.h, t)
		}
		if n > 0 && cfg.ConsumerDelay > 0 {
			// The consumer's processing: its time per entry, before it
			// acknowledges them.
			now := clock.Now()
			next = max(next, now) + int64(n)*int64(cfg.ConsumerDelay)
			if next-now >= int64(time.Millisecond) {
				time.Sleep(time.Duration(next - now))
			}
		}
		// The acknowledgements, then the next read, in one write; their
		// replies come in that order.
		c.buf = c.buf[:0]
		for _, s := range c.streams {
			if c.n[s] > 0 {
				c.buf = c.ackCommand(c.buf, s, c.acks[s], c.n[s])
			}
			if c.warmN[s] > 0 {
				c.buf = c.ackCommand(c.buf, s, c.warmAcks[s], c.warmN[s])
			}
		}
		done := g.draining.Load()
		if !done {
			c.buf = append(c.buf, c.read...)
		}
		if err := c.c.WriteThenWait(c.buf); err != nil {
			c.end(err)
			return
		}
		for _, s := range c.streams {
			for k := 0; k < 2; k++ {
				if k == 0 && c.n[s] == 0 || k == 1 && c.warmN[s] == 0 {
					continue
				}
				r, _, err := c.c.ReadReply()
				if err != nil {
					c.end(err)
					return
				}
				if k == 0 && r.IsInt {
					g.acked.Add(uint64(max(r.Int, 0)))
				}
			}
			c.acks[s], c.warmAcks[s], c.n[s], c.warmN[s] = c.acks[s][:0], c.warmAcks[s][:0], 0, 0
		}
		if done {
			return // what it read is acknowledged
		}
	}
}

// ackCommand appends XACK key group with n encoded IDs.
func (c *consumer) ackCommand(b []byte, s int, ids []byte, n int) []byte {
	cfg := c.g.cfg
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(3+n), 10)
	b = append(b, "\r\n$4\r\nXACK\r\n"...)
	b = appendBulk(b, []byte(cfg.key(s)))
	b = appendBulk(b, []byte(cfg.group(c.gi)))
	return append(b, ids...)
}

// appendBulk appends v as a RESP bulk string.
func appendBulk(b, v []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// end records why a consumer stopped, unless the run stopped it.
func (c *consumer) end(err error) {
	if c.g.stopping.Load() {
		return
	}
	why := "the connection failed: " + err.Error()
	var se *conn.ServerError
	switch {
	case errors.As(err, &se):
		why = "the server refused its read: " + se.Msg
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		why = "the server closed the connection"
	}
	c.r.End(clock.Now(), why)
}
