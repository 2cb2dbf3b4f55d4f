// Package pubsub measures Redis Pub/Sub on the open model: publishers
// send PUBLISH (or SPUBLISH) on the timeline whatever the subscribers do,
// subscribers (SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE, spread over the
// channels) stamp each delivery with the kernel's receive time, and the
// delivery latency counts from the message's intended publish instant.
// With Closed, the same subscribers then watch a closed-loop publisher
// (each connection waits for its PUBLISH reply, throttled to the rate),
// whose messages count from their actual send: what a closed tool shows.
//
// It runs through an experiment.Env (the target, its cluster, shards,
// live views) and returns facts: the publisher's scheduler.Result and the
// deliveries' messages.Result, which package report makes one test. It
// never prints.
package pubsub

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
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
)

// Limits of a configuration.
const (
	MaxChannels    = 1 << 20
	MaxSubscribers = 10000
	// MaxPayload is Redis's proto-max-bulk-len.
	MaxPayload = 512 << 20
)

// DefaultPrefix names the channels: pacer:ch:0, pacer:ch:1, ...
const DefaultPrefix = "pacer:ch:"

// Config is a Pub/Sub run.
type Config struct {
	// Name is the test's display name.
	Name string
	// Channels is how many channels the messages go to (message i to
	// channel i mod Channels), named Prefix and their number.
	Channels int
	Prefix   string
	// Subscribers is how many subscribing connections there are, spread
	// over the channels (messages.Layout); Patterns subscribes with PSUBSCRIBE (a
	// pattern that matches its channel's name), Sharded with SSUBSCRIBE
	// and publishes with SPUBLISH.
	Subscribers       int
	Patterns, Sharded bool
	// Size is the payload's size in bytes (at least messages.HeaderLen).
	Size int
	// Publishers is the publisher's connections (per primary with a
	// cluster).
	Publishers int
	// SlowSubscribers of the subscribers (the first ones) take
	// SubscriberDelay per message.
	SlowSubscribers int
	SubscriberDelay time.Duration
	// Timeline is the publisher's whole timeline; Open its driver's
	// settings (rate, duration or requests, warmup, pacing, drain,
	// interval…); the run fills in its stream's hooks.
	Timeline timeline.Timeline
	Open     openloop.Config
	// Closed runs, after the open publisher, a closed-loop one with the
	// same subscribers' layout, throttled to ClosedRate (zero:
	// unthrottled) for Open.Duration or Open.Requests.
	Closed     bool
	ClosedRate timeline.Rate
	// Cluster says the target is a Redis Cluster.
	Cluster bool
	// Run marks the payloads (0: drawn at random), so that another run's
	// messages on the same channels are told apart.
	Run uint32
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Channels < 1 || c.Channels > MaxChannels:
		return usage.Option("channels", "{channels} %d: want 1 to %d", c.Channels, MaxChannels)
	case c.Subscribers < 1 || c.Subscribers > MaxSubscribers:
		return usage.Option("subscribers", "{subscribers} %d: want 1 to %d", c.Subscribers, MaxSubscribers)
	case c.Patterns && c.Sharded:
		return usage.Option("patterns", "{patterns} and {sharded} exclude each other: sharded Pub/Sub has no patterns")
	case c.Size < messages.HeaderLen || c.Size > MaxPayload:
		return fmt.Errorf("-d %d: a message carries a %d-byte header, so want %d to %d bytes", c.Size, messages.HeaderLen, messages.HeaderLen, MaxPayload)
	case c.SlowSubscribers < 0 || c.SlowSubscribers > c.Subscribers:
		return usage.Option("slow-subscribers", "{slow-subscribers} %d: want 0 to {subscribers} %d", c.SlowSubscribers, c.Subscribers)
	case c.SubscriberDelay < 0:
		return usage.Option("subscriber-delay", "{subscriber-delay} %s: must not be negative", c.SubscriberDelay)
	case c.Cluster && c.Sharded && c.Subscribers < c.Channels:
		return usage.Option("cluster", "{cluster} {sharded}: {subscribers} %d is fewer than {channels} %d; each subscriber listens on the node of its channel's slot, so give at least one per channel", c.Subscribers, c.Channels)
	case c.Closed && c.Cluster && c.Sharded:
		return usage.Option("closed", "{closed} with {cluster} {sharded}: the closed publisher sends all its messages to one node, and SPUBLISH must reach each channel's own")
	case c.Publishers < 1:
		return fmt.Errorf("-c %d: want at least one publishing connection", c.Publishers)
	case c.Prefix == "":
		return usage.Option("channel-prefix", "{channel-prefix} must not be empty")
	}
	return nil
}

// Side is one publisher's run: the open one or the closed one.
type Side struct {
	// Closed is set for the closed-loop publisher.
	Closed bool
	// Publisher is what the publisher measured (its PUBLISH replies);
	// Server what the server counted meanwhile.
	Publisher *scheduler.Result
	Server    *serverinfo.Stats
	// Messages is what the subscribers received.
	Messages *messages.Result
	// Published counts the measured messages the publisher queued.
	Published uint64
	// Receivers is what the PUBLISH replies said.
	Receivers Receivers
	// Run is the payloads' mark.
	Run uint32
}

// Receivers sums PUBLISH's replies: how many subscribers each message
// reached, as the server counted them (in a cluster, those of the node
// that took the PUBLISH).
type Receivers struct {
	Replies, Sum uint64
	Min, Max     int64
	// Drops are the moments the count fell to a new low: a subscriber
	// the server dropped (the first maxDrops).
	Drops []Drop
}

// Drop is a PUBLISH reply that counted fewer receivers than any before:
// when it arrived (from the timeline's start) and the counts.
type Drop struct {
	At       time.Duration
	From, To int64
}

// maxDrops bounds the drops kept.
const maxDrops = 64

// receivers tallies the replies from the publisher's reader goroutines.
type receivers struct {
	n, sum   atomic.Uint64
	min, max atomic.Int64
	t0       func() int64
	mu       sync.Mutex
	drops    []Drop
}

func (r *receivers) add(v int64) {
	if r.n.Add(1) == 1 {
		r.min.Store(v)
		r.max.Store(v)
	}
	r.sum.Add(uint64(max(v, 0)))
	for m := r.min.Load(); v < m; m = r.min.Load() {
		if r.min.CompareAndSwap(m, v) {
			r.mu.Lock()
			if len(r.drops) < maxDrops {
				r.drops = append(r.drops, Drop{At: time.Duration(clock.Now() - r.t0()), From: m, To: v})
			}
			r.mu.Unlock()
			break
		}
	}
	for m := r.max.Load(); v > m && !r.max.CompareAndSwap(m, v); m = r.max.Load() {
	}
}

func (r *receivers) result() Receivers {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Receivers{Replies: r.n.Load(), Sum: r.sum.Load(), Min: r.min.Load(), Max: r.max.Load(), Drops: append([]Drop(nil), r.drops...)}
}

// Outcome is a run's sides: the open publisher's, and with Config.Closed
// the closed one's.
type Outcome struct {
	Open, Closed *Side
}

// Settling after the publisher's drain: the deliveries still on their way
// are waited for until none arrives for settleQuiet, at most Open.Drain.
const settleQuiet = 500 * time.Millisecond

// Run measures cfg against env's target: the open publisher, then with
// cfg.Closed the closed one. It returns what was measured, also when it
// fails or is interrupted midway.
func Run(ctx context.Context, env *experiment.Env, cfg Config) (*Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Run == 0 {
		cfg.Run = rand.Uint32() | 1
	}
	out := &Outcome{}
	var err error
	out.Open, err = runSide(ctx, env, &cfg, false)
	if err != nil || !cfg.Closed || ctx.Err() != nil || out.Open == nil {
		return out, err
	}
	out.Closed, err = runSide(ctx, env, &cfg, true)
	return out, err
}

// verb is the publishing command.
func (cfg *Config) verb() string {
	if cfg.Sharded {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

// runSide runs one publisher with its subscribers.
func runSide(ctx context.Context, env *experiment.Env, cfg *Config, closed bool) (*Side, error) {
	side := &Side{Closed: closed, Run: cfg.Run}
	if closed {
		side.Run++ // the closed side's messages are its own
	}
	mc := messages.MeterConfig{Run: side.Run, Interval: cfg.Open.Interval}
	if !closed {
		mc.Warmup = cfg.Open.Warmup
	}
	meter := messages.NewMeter(mc)
	sent := messages.NewSent(cfg.Channels)
	prefixes := make([][]byte, cfg.Channels)
	for c := range prefixes {
		prefixes[c] = messages.Prefix([]string{cfg.verb(), cfg.channelName(c)}, cfg.Size)
	}
	var top *cluster.Topology
	if cfg.Cluster {
		var err error
		if top, err = env.Target.Discover(ctx); err != nil {
			return nil, err
		}
	}
	subs, err := subscribe(ctx, cfg, meter, env.Target.Options, top)
	if err != nil {
		return nil, err
	}
	if env.WatchMessages != nil {
		mode := "open"
		if closed {
			mode = "closed"
		}
		name := cfg.Name
		if closed {
			name = cfg.Name + " (closed publisher)"
		}
		end := env.WatchMessages(name, mode, meter)
		defer end()
	}
	tally := receivers{t0: meter.T0}
	test := experiment.Test{ID: "pubsub", Title: cfg.Name}
	var res *scheduler.Result
	var st *serverinfo.Stats
	if !closed {
		oc := cfg.Open
		oc.OnInteger = tally.add
		// The publisher's replies come in the same bursts as the
		// deliveries: the subscribers' hub reads them on the same wake.
		oc.Hub = subs.hub
		var keys endpoint.Keys
		if cfg.Cluster {
			// The channel is the key: SPUBLISH must reach its slot's
			// primary; PUBLISH goes there too, which spreads the load.
			keys = endpoint.Keys{Specs: []cluster.KeySpec{{First: 1, Last: 1, Step: 1}}, Tagged: []bool{false}, TagByKey: []bool{false}}
		}
		res, st, err = env.RunOpen(ctx, experiment.Open{Test: test, Name: cfg.Name, Label: cfg.Name, Timeline: cfg.Timeline,
			Conns: cfg.Publishers, Keys: keys, Stream: messages.NewPublisher(meter, sent, prefixes, cfg.Size), Config: oc})
	} else {
		mk := messages.ClosedPublishers(meter, sent, prefixes, cfg.Size)
		test.Stream = func(uint64) (scheduler.Commands, error) { return mk(), nil }
		cc := closedloop.Config{Duration: cfg.Open.Duration + cfg.Open.Warmup, Requests: cfg.Open.Requests, Rate: cfg.ClosedRate,
			ContinueOnError: true, Interval: cfg.Open.Interval, OnInteger: tally.add, Drain: cfg.Open.Drain}
		if cc.Duration > 0 && cc.Requests > 0 {
			cc.Requests = 0 // the closed loop stops at whichever: the duration bounds it
		}
		name := cfg.Name + " (closed publisher)"
		res, st, err = env.RunClosed(ctx, experiment.Closed{Test: test, Name: name, Label: "closed", Metric: name, Conns: cfg.Publishers,
			Config: cc, StreamSeed: func(int) uint64 { return 0 }, Placed: true})
	}
	if res != nil {
		subs.settle(ctx, sent, settleQuiet, scheduler.DrainLimit(ctx, cfg.Open.Drain))
	}
	subs.finish(100*time.Millisecond, time.Second)
	subs.close()
	m, ferr := meter.Finish(clock.Now(), func(r *messages.Receiver) uint64 {
		for _, s := range subs.subs {
			if s.r == r {
				return subs.expected(sent, s, false)
			}
		}
		return 0
	})
	if res == nil {
		return nil, err
	}
	side.Publisher, side.Server, side.Messages, side.Published, side.Receivers = res, st, m, sent.Total(), tally.result()
	if err == nil {
		err = ferr
	}
	return side, err
}

// Title is a run's display name from its shape: "PUBLISH 1 channel × 10
// subscribers".
func Title(cfg Config) string {
	verb := cfg.verb()
	if cfg.Patterns {
		verb += " to PSUBSCRIBE"
	}
	ch := strconv.Itoa(cfg.Channels) + " channels"
	if cfg.Channels == 1 {
		ch = "1 channel"
	}
	subs := strconv.Itoa(cfg.Subscribers) + " subscribers"
	if cfg.Subscribers == 1 {
		subs = "1 subscriber"
	}
	return fmt.Sprintf("%s %d B, %s, %s", verb, cfg.Size, ch, subs)
}
