// Package stream measures Redis Streams with consumer groups on the open
// model: producers XADD on the timeline whatever the consumers do, each
// entry carrying its sequence number and intended instant; consumers
// (XREADGROUP … BLOCK, then XACK) stamp each delivery with the kernel's
// receive time, so the delivery latency counts from the entry's intended
// add; the consumer groups' lag (entries added and not yet delivered,
// and XPENDING's entries delivered and not yet acknowledged) is read at
// every interval's end, for the report's trend test.
//
// It runs through an experiment.Env (the target, its cluster, shards,
// live views) and returns facts: the producer's scheduler.Result and the
// deliveries' messages.Result, with the at-least-once accounting. It
// never prints.
package stream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
)

// Limits of a configuration.
const (
	MaxStreams   = 1 << 16
	MaxGroups    = 1024
	MaxConsumers = 10000
	MaxCount     = 1 << 20
	MaxPayload   = 512 << 20
)

// DefaultPrefix names the streams: pacer:stream:0, pacer:stream:1, ...
const DefaultPrefix = "pacer:stream:"

// Defaults of a consumer's read.
const (
	DefaultCount = 100
	DefaultBlock = 100 * time.Millisecond
)

// Config is a Streams run.
type Config struct {
	// Name is the test's display name.
	Name string
	// Streams is how many streams the entries go to (entry i to stream i
	// mod Streams), named Prefix and their number; MaxLen, when set,
	// trims each to about that many entries as it grows (XADD MAXLEN ~).
	Streams int
	Prefix  string
	MaxLen  int64
	// Groups consumer groups of Consumers consumers each read every
	// stream: a group's consumers are spread over the streams
	// (messages.Layout), so each entry reaches one consumer of each
	// group. Count and Block are XREADGROUP's COUNT and BLOCK;
	// ConsumerDelay is each consumer's time per entry.
	Groups, Consumers int
	Count             int
	Block             time.Duration
	ConsumerDelay     time.Duration
	// Size is the payload's size in bytes (at least messages.HeaderLen),
	// the value of the entry's one field.
	Size int
	// Producers is the producer's connections.
	Producers int
	// Timeline is the producer's whole timeline; Open its driver's
	// settings.
	Timeline timeline.Timeline
	Open     openloop.Config
	// Cluster says the target is a Redis Cluster; Shard (from 1, 0: not
	// sharded) names this process's consumer groups apart from the other
	// shards', which read the same streams.
	Cluster bool
	Shard   int
	// Run marks the payloads (0: drawn at random).
	Run uint32
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Streams < 1 || c.Streams > MaxStreams:
		return usage.Option("streams", "{streams} %d: want 1 to %d", c.Streams, MaxStreams)
	case c.Groups < 1 || c.Groups > MaxGroups:
		return usage.Option("groups", "{groups} %d: want 1 to %d", c.Groups, MaxGroups)
	case c.Consumers < 1 || c.Groups*c.Consumers > MaxConsumers:
		return usage.Option("consumers", "{consumers} %d: want 1 or more, at most %d over all groups", c.Consumers, MaxConsumers)
	case c.Count < 1 || c.Count > MaxCount:
		return usage.Option("count", "{count} %d: want 1 to %d entries per read", c.Count, MaxCount)
	case c.Block < time.Millisecond:
		return usage.Option("block", "{block} %s: want at least 1ms", c.Block)
	case c.ConsumerDelay < 0:
		return usage.Option("consumer-delay", "{consumer-delay} %s: must not be negative", c.ConsumerDelay)
	case c.MaxLen < 0:
		return usage.Option("maxlen", "{maxlen} %d: must not be negative", c.MaxLen)
	case c.Size < messages.HeaderLen || c.Size > MaxPayload:
		return fmt.Errorf("-d %d: an entry carries a %d-byte header, so want %d to %d bytes", c.Size, messages.HeaderLen, messages.HeaderLen, MaxPayload)
	case c.Cluster && c.Consumers < c.Streams:
		return usage.Option("cluster", "{cluster}: {consumers} %d is fewer than {streams} %d; a consumer reads one stream, on the node of its slot, so give at least one per stream", c.Consumers, c.Streams)
	case c.Producers < 1:
		return fmt.Errorf("-c %d: want at least one producing connection", c.Producers)
	case c.Prefix == "":
		return usage.Option("stream-prefix", "{stream-prefix} must not be empty")
	}
	return nil
}

// key is stream s's key.
func (c *Config) key(s int) string { return c.Prefix + strconv.Itoa(s) }

// group is consumer group g's name.
func (c *Config) group(g int) string {
	if c.Shard > 0 {
		return "pacer-g" + strconv.Itoa(g+1) + "-s" + strconv.Itoa(c.Shard)
	}
	return "pacer-g" + strconv.Itoa(g+1)
}

// Result is what a run measured.
type Result struct {
	// Producer is what the producer measured (its XADD replies); Server
	// what the server counted meanwhile.
	Producer *scheduler.Result
	Server   *serverinfo.Stats
	// Messages is what the consumers received: Expected, Delivered and
	// Lost count per group (an entry is expected once by each group).
	Messages *messages.Result
	// Added counts the measured entries queued, Acked the measured
	// entries XACK acknowledged, Redelivered the deliveries of an entry
	// its group had had already.
	Added, Acked, Redelivered uint64
	// Run is the payloads' mark.
	Run uint32
}

// Settling after the producer's drain: the entries still unread are
// waited for until none is delivered for settleQuiet, at most Open.Drain.
const settleQuiet = 500 * time.Millisecond

// Run measures cfg against env's target. It returns what was measured,
// also when it fails or is interrupted midway.
func Run(ctx context.Context, env *experiment.Env, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Run == 0 {
		cfg.Run = rand.Uint32() | 1
	}
	var top *cluster.Topology
	if cfg.Cluster {
		var err error
		if top, err = env.Target.Discover(ctx); err != nil {
			return nil, err
		}
	}
	o := env.Target.Options
	o.OnTLSHandshake = nil
	ctl, err := newControl(ctx, &cfg, o, top)
	if err != nil {
		return nil, err
	}
	defer ctl.close()
	if err := ctl.setup(ctx); err != nil {
		return nil, err
	}
	sent := messages.NewSent(cfg.Streams)
	g := &groups{cfg: &cfg, sent: sent}
	meter := messages.NewMeter(messages.MeterConfig{Run: cfg.Run, Interval: cfg.Open.Interval, Warmup: cfg.Open.Warmup, Gauges: g.gauges})
	if err := g.start(ctx, meter, o, top); err != nil {
		return nil, err
	}
	if env.WatchMessages != nil {
		end := env.WatchMessages(cfg.Name, "open", meter)
		defer end()
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		ctl.poll(pollCtx, cfg.Open.Interval, &g.pending)
	}()
	prefixes := make([][]byte, cfg.Streams)
	for s := range prefixes {
		args := []string{"XADD", cfg.key(s)}
		if cfg.MaxLen > 0 {
			args = append(args, "MAXLEN", "~", strconv.FormatInt(cfg.MaxLen, 10))
		}
		prefixes[s] = messages.Prefix(append(args, "*", "p"), cfg.Size)
	}
	var keys endpoint.Keys
	if cfg.Cluster {
		keys = endpoint.Keys{Specs: []cluster.KeySpec{{First: 1, Last: 1, Step: 1}}, Tagged: []bool{false}, TagByKey: []bool{false}}
	}
	res, st, err := env.RunOpen(ctx, experiment.Open{Test: experiment.Test{ID: "stream", Title: cfg.Name}, Name: cfg.Name, Label: cfg.Name,
		Timeline: cfg.Timeline, Conns: cfg.Producers, Keys: keys, Stream: messages.NewPublisher(meter, sent, prefixes, cfg.Size), Config: cfg.Open})
	if res != nil {
		g.settle(ctx, settleQuiet, scheduler.DrainLimit(ctx, cfg.Open.Drain))
	}
	stopPoll()
	<-polled
	g.drain(cfg.Block + time.Duration(cfg.Count)*cfg.ConsumerDelay + time.Second)
	g.close()
	m, ferr := meter.Finish(clock.Now(), nil)
	if res == nil {
		return nil, err
	}
	// Each group expects every measured entry once.
	added := sent.Total()
	m.Expected = uint64(cfg.Groups) * added
	m.Lost = m.Expected - min(m.Expected, m.Delivered)
	for i := range m.Events {
		m.Events[i].Missed = 0 // its group's other consumers may have read what it missed
	}
	out := &Result{Producer: res, Server: st, Messages: m, Added: added, Acked: g.acked.Load(), Redelivered: m.Duplicates, Run: cfg.Run}
	if err == nil {
		err = ferr
	}
	return out, err
}

// Title is a run's display name from its shape: "XADD 64 B, 1 stream, 1
// group × 4 consumers".
func Title(cfg Config) string {
	s := strconv.Itoa(cfg.Streams) + " streams"
	if cfg.Streams == 1 {
		s = "1 stream"
	}
	g := strconv.Itoa(cfg.Groups) + " groups"
	if cfg.Groups == 1 {
		g = "1 group"
	}
	return fmt.Sprintf("XADD %d B, %s, %s × %d consumers", cfg.Size, s, g, cfg.Consumers)
}

// groups is a run's consumer groups: their consumers, each group's
// tracks of its streams (shared by its consumers, under a lock), and the
// counts the lag is read from.
type groups struct {
	cfg  *Config
	sent *messages.Sent
	// tracks[g][s] is group g's track of stream s, under mu[g].
	tracks [][]messages.Track
	mu     []sync.Mutex
	// received[g] counts group g's first deliveries (warmup included).
	received  []atomic.Uint64
	consumers []*consumer
	acked     atomic.Uint64
	// pending is the most entries a group had pending (XPENDING), as the
	// control connection last read it; -1 before.
	pending atomic.Int64
	// draining asks the consumers to acknowledge what they read and stop;
	// stopping says the run closes their connections.
	draining, stopping atomic.Bool
	wg                 sync.WaitGroup
}

// gauges is the lag at this instant: the most entries a group has not had
// of those queued, and the pending entries last read.
func (g *groups) gauges() messages.Gauges {
	var all uint64
	for s := range g.cfg.Streams {
		all += g.sent.All(s)
	}
	lag := int64(0)
	for i := range g.received {
		lag = max(lag, int64(all)-int64(g.received[i].Load()))
	}
	return messages.Gauges{Lag: lag, Pending: g.pending.Load()}
}

// settle waits for the groups to read what the producer queued: until
// each has it, or nothing is delivered for quiet, or limit passed.
func (g *groups) settle(ctx context.Context, quiet, limit time.Duration) {
	messages.Settle(ctx, quiet, limit, func() (uint64, bool) {
		var all, got uint64
		for s := range g.cfg.Streams {
			all += g.sent.All(s)
		}
		complete := true
		for i := range g.received {
			r := g.received[i].Load()
			got += r
			complete = complete && r >= all
		}
		return got, complete
	})
}
