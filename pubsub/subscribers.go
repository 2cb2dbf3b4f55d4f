package pubsub

import (
	"context"
	"errors"
	"fmt"
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

// subscriber is one subscribed connection and its goroutine.
type subscriber struct {
	c     *conn.Conn
	r     *messages.Receiver
	chans []int
	// track maps a channel to the receiver's track of it.
	track map[int]int
	// delay paces a slow subscriber: at most one delivery per delay.
	delay time.Duration
}

// group is a run's subscribers.
type group struct {
	cfg  *Config
	subs []*subscriber
	// hurry ends the slow subscribers' delays: the run is over, and what
	// their sockets still hold is read at once, to the end of stream a
	// server that dropped them sent; stopping says the run closes them.
	hurry, stopping atomic.Bool
	wg              sync.WaitGroup
	// hub reads the subscribers that need no goroutine of their own (see
	// conn.Hub), nil when none does; push is its goroutine's.
	hub  *conn.Hub
	push conn.Push
}

// Who reads on the hub: subscribers that read as fast as they can (no
// delay) messages that fit their buffers, when there are at least
// hubMinMembers of them. One that meets a message longer than
// hubMaxPartial leaves the hub for a goroutine of its own, which reads
// such messages without holding them whole.
//
// perf stat, per delivery at 100,000 deliveries a second (4 s runs,
// against redis-server on loopback, goroutines → hub): 10 subscribers
// 0.61 → 0.42 syscalls and 0.111 → 0.074 context switches; 4
// subscribers 0.38 → 0.32 and 0.104 → 0.082; 2 about even; 1
// subscriber 0.145 → 0.175 and 0.045 → 0.052 (its epoll waits cost more
// than the reads that found nothing).
//
// hubLeaves counts the subscribers that left a hub, for the tests.
var hubLeaves atomic.Int64

const (
	hubMinMembers = 4
	hubMaxPayload = 64 << 10
	hubMaxPartial = 256 << 10
)

// channelName is channel c's name.
func (cfg *Config) channelName(c int) string { return cfg.Prefix + strconv.Itoa(c) }

// globEscape escapes what a PSUBSCRIBE pattern would read as a glob, so
// the pattern matches the channel's name only.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// channelList names a subscriber's channels for the result: their names,
// or how many when that is long.
func channelList(cfg *Config, chans []int) string {
	names := make([]string, len(chans))
	for i, ch := range chans {
		names[i] = cfg.channelName(ch)
	}
	if what := strings.Join(names, ","); len(what) <= 60 {
		return what
	}
	return fmt.Sprintf("%d channels", len(names))
}

// subscribe dials the subscribers, subscribes each to its channels and
// waits for every confirmation, then starts their goroutines. In a
// cluster each subscriber connects to the primary that owns its channel's
// slot (which SSUBSCRIBE needs; SUBSCRIBE's messages reach every node).
func subscribe(ctx context.Context, cfg *Config, meter *messages.Meter, o conn.Options, top *cluster.Topology) (*group, error) {
	g := &group{cfg: cfg}
	o.OnTLSHandshake = nil // the subscribers' handshakes are not the publisher's
	type dialed struct {
		s   *subscriber
		err error
	}
	out := make([]dialed, cfg.Subscribers)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for j := range cfg.Subscribers {
		// Made here, in order: the result lists the receivers as made.
		r := meter.NewReceiver(fmt.Sprintf("subscriber %d", j+1), channelList(cfg, messages.Layout(j, cfg.Subscribers, cfg.Channels)), len(messages.Layout(j, cfg.Subscribers, cfg.Channels)))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s, err := g.dial(ctx, j, r, o, top)
			out[j] = dialed{s, err}
		}()
	}
	wg.Wait()
	var first error
	for _, d := range out {
		if d.err != nil && first == nil {
			first = d.err
		}
		if d.s != nil {
			g.subs = append(g.subs, d.s)
		}
	}
	if first != nil {
		g.close()
		return nil, first
	}
	fast := 0
	for _, s := range g.subs {
		if s.delay == 0 {
			fast++
		}
	}
	if cfg.Size <= hubMaxPayload && fast >= hubMinMembers {
		if h, err := conn.NewHub(); err == nil {
			g.hub = h
		}
	}
	for _, s := range g.subs {
		if g.hub != nil && s.delay == 0 && g.hub.Join(s.c, func() bool { return g.ready(s) }) == nil {
			continue
		}
		g.wg.Add(1)
		go g.read(s)
	}
	if g.hub != nil {
		g.hub.Start()
	}
	return g, nil
}

// dial opens subscriber j's connection and subscribes it.
func (g *group) dial(ctx context.Context, j int, r *messages.Receiver, o conn.Options, top *cluster.Topology) (*subscriber, error) {
	cfg := g.cfg
	chans := messages.Layout(j, cfg.Subscribers, cfg.Channels)
	if top != nil {
		// The node of the subscriber's channels: Validate made a sharded
		// subscriber's channels one (n ≥ k).
		slot := cluster.Slot([]byte(cfg.channelName(chans[0])))
		node := top.Owner(slot)
		if node < 0 {
			return nil, fmt.Errorf("subscriber %d: no primary serves the slot of channel %s", j+1, cfg.channelName(chans[0]))
		}
		if !cfg.Sharded {
			node = j % len(top.Primaries) // SUBSCRIBE's messages reach every node: spread them
			for top.SlotsOf(node) == 0 {
				node = (node + 1) % len(top.Primaries)
			}
		}
		o = o.ForAddr(top.Primaries[node].Addr)
	}
	c, err := conn.Dial(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("subscriber %d: cannot connect to %s: %w", j+1, o.Addr, err)
	}
	names := make([]string, len(chans))
	for i, ch := range chans {
		names[i] = cfg.channelName(ch)
	}
	s := &subscriber{c: c, chans: chans, track: make(map[int]int, len(chans)), r: r}
	for i, ch := range chans {
		s.track[ch] = i
	}
	if j < cfg.SlowSubscribers {
		s.delay = cfg.SubscriberDelay
	}
	// One command per channel for SSUBSCRIBE (channels of several slots
	// cannot share one), one for all otherwise.
	var cmd []byte
	verb := "SUBSCRIBE"
	switch {
	case cfg.Sharded:
		verb = "SSUBSCRIBE"
		for _, n := range names {
			cmd = conn.AppendCommand(cmd, "SSUBSCRIBE", n)
		}
	case cfg.Patterns:
		verb = "PSUBSCRIBE"
		args := []string{verb}
		for _, n := range names {
			args = append(args, globEscape(n))
		}
		cmd = conn.AppendArgs(cmd, args)
	default:
		cmd = conn.AppendArgs(cmd, append([]string{"SUBSCRIBE"}, names...))
	}
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	if err := c.Write(cmd); err != nil {
		c.Close()
		return nil, fmt.Errorf("subscriber %d: %w", j+1, err)
	}
	var p conn.Push
	for confirmed := 0; confirmed < len(names); {
		if err := c.ReadPush(&p); err != nil {
			c.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("subscriber %d: %w", j+1, err)
		}
		switch p.Kind {
		case conn.PushSubscribed:
			confirmed++
		case conn.PushError:
			c.Close()
			return nil, fmt.Errorf("subscriber %d: the server refused %s: %s", j+1, verb, p.Text)
		}
	}
	return s, nil
}

// read is subscriber s's goroutine: it reads deliveries until the
// connection ends, and when that was not the run's doing, records the
// end as an event.
func (g *group) read(s *subscriber) {
	defer g.wg.Done()
	var p conn.Push
	var next, last int64
	for {
		if err := s.c.ReadPush(&p); err != nil {
			// A server that drops a subscriber sends what it had written,
			// then the end of stream: it ended after the last delivery
			// reached this machine (a slow subscriber reads that much
			// later).
			at := clock.Now()
			if last > 0 && s.delay > 0 {
				at = last
			}
			g.ended(s, at, err)
			return
		}
		last = p.Times.Arrival
		if g.take(s, &p) && s.delay > 0 && !g.hurry.Load() {
			// A slow subscriber takes delay per message: its socket fills
			// and the server holds the rest.
			now := clock.Now()
			next = max(next, now) + int64(s.delay)
			if next-now >= int64(time.Millisecond) {
				time.Sleep(time.Duration(next - now))
			}
		}
	}
}

// ready reads what subscriber s's socket holds, on the hub's goroutine,
// without waiting: false once its connection ended or it left the hub.
func (g *group) ready(s *subscriber) bool {
	for {
		err := s.c.ReadQueued()
		held := s.c.Held()
		for ; held == conn.HeldWhole; held = s.c.Held() {
			if err := s.c.ReadPush(&g.push); err != nil {
				g.ended(s, clock.Now(), err)
				return false
			}
			g.take(s, &g.push)
		}
		switch {
		case held == conn.HeldUnframed || s.c.Buffered() >= hubMaxPartial:
			// A message the hub cannot hold whole (or tell the end of):
			// a goroutine that may wait reads it, and the rest.
			g.hub.Leave(s.c)
			hubLeaves.Add(1)
			g.wg.Add(1)
			go g.read(s)
			return false
		case errors.Is(err, conn.ErrWouldBlock):
			return true
		case err != nil:
			g.ended(s, clock.Now(), err)
			return false
		case !s.c.LastReadFull():
			// The socket is likely empty; if not, the hub calls again.
			return true
		}
	}
}

// ended records the end of subscriber s's connection at instant at, with
// its error, unless the run ended it.
func (g *group) ended(s *subscriber, at int64, err error) {
	if !g.stopping.Load() {
		s.r.End(at, messages.EndReason(err))
	}
}

// take counts one push subscriber s read: a delivery (true), or the end
// of a subscription the run did not ask for.
func (g *group) take(s *subscriber, p *conn.Push) bool {
	if p.Kind != conn.PushMessage {
		if p.Kind == conn.PushUnsubscribed && !g.stopping.Load() {
			// The server dropped a subscription (a sharded channel's slot
			// moved): what follows on it is lost.
			s.r.End(p.Times.Arrival, "the server unsubscribed it from "+string(p.Channel))
		}
		return false
	}
	cfg := g.cfg
	h, ok := messages.ParseHeader(p.Head)
	c, cok := messages.Numbered(p.Channel, cfg.Prefix)
	tr, tok := s.track[c]
	if !ok || !cok || !tok || int(h.Seq%uint64(cfg.Channels)) != c {
		s.r.Foreign()
		return false
	}
	s.r.Deliver(s.r.Track(tr), h.Seq/uint64(cfg.Channels), h, p.Times)
	return true
}

// expected is what subscriber r should have received, the warmup's
// included (all) or not.
func (g *group) expected(sent *messages.Sent, s *subscriber, all bool) uint64 {
	var n uint64
	for _, c := range s.chans {
		if all {
			n += sent.All(c)
		} else {
			n += sent.Channel(c)
		}
	}
	return n
}

// settle waits for the deliveries still on their way once the publishers
// are done: until every live subscriber has what was sent to it, or
// nothing arrived for quiet, or limit passed.
func (g *group) settle(ctx context.Context, sent *messages.Sent, quiet, limit time.Duration) {
	messages.Settle(ctx, quiet, limit, func() (uint64, bool) {
		var got uint64
		complete := true
		for _, s := range g.subs {
			r := s.r.Received()
			got += r
			if !s.r.Ended() && r < g.expected(sent, s, true) {
				complete = false
			}
		}
		return got, complete
	})
}

// finish reads at once what the slow subscribers' sockets still hold,
// until nothing more arrives for quiet (at most limit), so that one the
// server dropped reads its end of stream as the run's.
func (g *group) finish(quiet, limit time.Duration) {
	g.hurry.Store(true)
	slow := false
	for _, s := range g.subs {
		slow = slow || s.delay > 0
	}
	if !slow {
		return
	}
	messages.Settle(context.Background(), quiet, limit, func() (uint64, bool) {
		var got uint64
		for _, s := range g.subs {
			got += s.r.Received()
		}
		return got, false
	})
}

// close ends every subscriber and waits for their goroutines.
func (g *group) close() {
	g.stopping.Store(true)
	if g.hub != nil {
		g.hub.Close()
	}
	for _, s := range g.subs {
		s.c.Close()
	}
	g.wg.Wait()
}
