// Package tracking measures client-side caching on the open model:
// Redis's CLIENT TRACKING over RESP3. Reader connections cache keys; a
// writer modifies them on the timeline whatever the readers do; each
// invalidation push a reader receives is stamped with the kernel's
// receive time and counted from the intended instant of the write that
// caused it:
//
//	invalidation latency = kernel receive time of the push − intended write instant
//
// # Which write an invalidation is for
//
// An invalidation names only its key, not the write. Write i sets key
// i mod K (ordinal i / K there) to a payload that carries its sequence
// number (messages.Header), and the writer logs every write's intended
// and queued instants (messages.Log). A server applies one connection's
// writes to a key in order, so a reader that knows which write of a key
// it holds knows that the next invalidation of the key is for the write
// after it:
//
//   - Default mode: the server remembers the keys a reader read, sends one
//     invalidation when one is modified and forgets it. The reader reads
//     every key before the timeline starts, and reads a key again (GET)
//     after each invalidation, as a cache refetches: the value it gets
//     names the write it now holds, so the attribution is exact. Writes
//     that land between an invalidation and the refetch invalidate
//     nothing (the reader held no copy): they are counted as uncached,
//     not expected.
//   - BCAST: the server sends every reader every modified key under its
//     prefix, without reads. Each invalidation is for the key's earliest
//     write not yet accounted for. Redis gathers a prefix's keys over one
//     pass of its event loop, so two writes of one key in one pass make
//     one invalidation: the keys must outnumber the writes a server takes
//     in one pass (hundreds), which the default 1000 does at any rate.
//
// Loss: in default mode, a reader that at the end still holds a value
// older than its key's last write, with no invalidation for it, holds a
// stale copy (one lost invalidation per reader and key); in BCAST every
// write is expected once per reader.
//
// It runs through an experiment.Env (the target, shards, live views) and
// returns facts, which Result.Test makes a report test. It never prints.
package tracking

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
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
	MaxKeys    = 1 << 20
	MaxReaders = 10000
	// MaxPayload is Redis's proto-max-bulk-len.
	MaxPayload = 512 << 20
	// MaxCopies bounds readers × keys: each reader keeps about 9 bytes a
	// key (33 with BCAST), and reads every key once before the timeline.
	MaxCopies = 1 << 22
)

// DefaultPrefix names the keys: pacer:cache:0, pacer:cache:1, ...
const DefaultPrefix = "pacer:cache:"

// Config is a client-side caching run.
type Config struct {
	// Name is the test's display name.
	Name string
	// Keys is how many keys the writes go to (write i to key i mod Keys),
	// named Prefix and their number.
	Keys   int
	Prefix string
	// Readers is how many caching connections there are; each caches
	// every key (the fan-out is Readers). BCAST subscribes them to the
	// prefix instead of tracking their reads.
	Readers int
	BCAST   bool
	// Size is the written value's size in bytes (at least
	// messages.HeaderLen).
	Size int
	// Writers is the writer's connections.
	Writers int
	// Timeline is the writer's whole timeline; Open its driver's settings
	// (rate, duration or requests, warmup, pacing, drain, interval…).
	Timeline timeline.Timeline
	Open     openloop.Config
	// Cluster says the target is a Redis Cluster: each reader has a
	// connection to every primary, caching the keys of its slots, and the
	// writer routes each SET to its key's primary.
	Cluster bool
	// Closed runs, after the open writer, a closed-loop one (each
	// connection waits for its SET reply) throttled to ClosedRate (zero:
	// unthrottled) for Open.Duration or Open.Requests, with readers of
	// its own.
	Closed     bool
	ClosedRate timeline.Rate
	// Run marks the values (0: drawn at random), so that another run's
	// writes of the same keys are told apart.
	Run uint32
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Keys < 1 || c.Keys > MaxKeys:
		return usage.Option("keys", "{keys} %d: want 1 to %d", c.Keys, MaxKeys)
	case c.Readers < 1 || c.Readers > MaxReaders:
		return usage.Option("readers", "{readers} %d: want 1 to %d", c.Readers, MaxReaders)
	case c.Size < messages.HeaderLen || c.Size > MaxPayload:
		return fmt.Errorf("-d %d: a value carries a %d-byte header, so want %d to %d bytes", c.Size, messages.HeaderLen, messages.HeaderLen, MaxPayload)
	case c.Keys*c.Readers > MaxCopies:
		return usage.Option("keys", "{keys} %d × {readers} %d: at most %d cached copies (each reader caches every key)", c.Keys, c.Readers, MaxCopies)
	case c.Closed && c.Cluster:
		return usage.Option("closed", "{closed} with {cluster}: the closed writer sends all its writes to one node, and each SET must reach its key's own")
	case c.Writers < 1:
		return fmt.Errorf("-c %d: want at least one writing connection", c.Writers)
	case c.Prefix == "":
		return usage.Option("key-prefix", "{key-prefix} must not be empty")
	}
	return nil
}

// key is key k's name.
func (c *Config) key(k int) string { return c.Prefix + strconv.Itoa(k) }

// Result is what a writer's run measured: facts only.
type Result struct {
	// Closed is set for the closed-loop writer.
	Closed bool
	// Writer is what the writer measured (its SET replies); Server what
	// the server counted meanwhile.
	Writer *scheduler.Result
	Server *serverinfo.Stats
	// Messages is the readers' invalidations, as deliveries.
	Messages *messages.Result
	// Written counts the measured writes queued.
	Written uint64
	// Counts are the readers' accounting beside the deliveries.
	Counts Counts
	// Run is the values' mark.
	Run uint32
}

// Counts are the readers' accounting of what they read.
type Counts struct {
	// Pushes counts the invalidation pushes read, Keys the keys they
	// named, Flushes those that named none (the server flushed every key).
	Pushes, Keys, Flushes uint64
	// Refetches counts the reads of an invalidated key (default mode).
	Refetches uint64
	// Uncached counts writes that found a reader without a copy (between
	// an invalidation and its refetch): no invalidation was due.
	Uncached uint64
	// StaleAtEnd counts the readers' keys whose copy was older than the
	// key's last write at the end, with no invalidation for it: the lost
	// invalidations of default mode.
	StaleAtEnd uint64
	// Spurious counts invalidations of a run's key with no write of it
	// outstanding (an eviction, another client's write), Forgotten those
	// for writes too old for the log: neither is measured.
	Spurious, Forgotten uint64
}

func (c *Counts) add(o Counts) {
	c.Pushes += o.Pushes
	c.Keys += o.Keys
	c.Flushes += o.Flushes
	c.Refetches += o.Refetches
	c.Uncached += o.Uncached
	c.StaleAtEnd += o.StaleAtEnd
	c.Spurious += o.Spurious
	c.Forgotten += o.Forgotten
}

// Settling after the writer's drain: the invalidations and refetches still
// on their way are waited for until nothing arrives for settleQuiet, at
// most Open.Drain.
const settleQuiet = 500 * time.Millisecond

// logSeconds is how long back the writer's log remembers writes at the
// run's peak rate: an invalidation later than that is not measured.
const logSeconds = 60

// Outcome is a run's sides: the open writer's, and with Config.Closed the
// closed one's.
type Outcome struct {
	Open, Closed *Result
}

// Run measures cfg against env's target: the open writer, then with
// cfg.Closed the closed one, each with readers of its own. It returns
// what was measured, also when it fails or is interrupted midway.
func Run(ctx context.Context, env *experiment.Env, cfg Config) (*Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Run == 0 {
		cfg.Run = rand.Uint32() | 1
	}
	out := &Outcome{}
	var err error
	out.Open, err = runSide(ctx, env, cfg, false)
	if err != nil || !cfg.Closed || ctx.Err() != nil || out.Open == nil {
		return out, err
	}
	cfg.Run++ // the closed side's values are its own
	out.Closed, err = runSide(ctx, env, cfg, true)
	return out, err
}

// runSide runs one writer with its readers.
func runSide(ctx context.Context, env *experiment.Env, cfg Config, closed bool) (*Result, error) {
	mc := messages.MeterConfig{Run: cfg.Run, Interval: cfg.Open.Interval}
	if !closed {
		mc.Warmup = cfg.Open.Warmup
	}
	meter := messages.NewMeter(mc)
	sent := messages.NewSent(cfg.Keys)
	var err error
	log := messages.NewLog(logSize(cfg.Timeline, cfg.Keys))
	var top *cluster.Topology
	var keys endpoint.Keys
	if cfg.Cluster {
		if top, err = env.Target.Discover(ctx); err != nil {
			return nil, err
		}
		// The SET's key routes it to its slot's primary.
		keys = endpoint.Keys{Specs: []cluster.KeySpec{{First: 1, Last: 1, Step: 1}}, Tagged: []bool{false}, TagByKey: []bool{false}}
	}
	rs, err := startReaders(ctx, &cfg, meter, log, env.Target.Options, top)
	if err != nil {
		return nil, err
	}
	name, mode := cfg.Name, "open"
	if closed {
		name, mode = cfg.Name+" (closed writer)", "closed"
	}
	if env.WatchMessages != nil {
		end := env.WatchMessages(name, mode, meter)
		defer end()
	}
	prefixes := make([][]byte, cfg.Keys)
	for k := range prefixes {
		prefixes[k] = messages.Prefix([]string{"SET", cfg.key(k)}, cfg.Size)
	}
	test := experiment.Test{ID: "tracking", Title: cfg.Name}
	var res *scheduler.Result
	var st *serverinfo.Stats
	if !closed {
		res, st, err = env.RunOpen(ctx, experiment.Open{Test: test, Name: cfg.Name, Label: cfg.Name, Timeline: cfg.Timeline,
			Conns: cfg.Writers, Keys: keys, Stream: messages.NewPublisher(meter, sent, prefixes, cfg.Size).WithLog(log), Config: cfg.Open})
	} else {
		mk := messages.ClosedPublishers(meter, sent, prefixes, cfg.Size)
		test.Stream = func(uint64) (scheduler.Commands, error) { return mk().WithLog(log), nil }
		cc := closedloop.Config{Duration: cfg.Open.Duration + cfg.Open.Warmup, Requests: cfg.Open.Requests, Rate: cfg.ClosedRate,
			ContinueOnError: true, Interval: cfg.Open.Interval, Drain: cfg.Open.Drain}
		if cc.Duration > 0 && cc.Requests > 0 {
			cc.Requests = 0 // the closed loop stops at whichever: the duration bounds it
		}
		res, st, err = env.RunClosed(ctx, experiment.Closed{Test: test, Name: name, Label: "closed", Metric: name, Conns: cfg.Writers,
			Config: cc, StreamSeed: func(int) uint64 { return 0 }, Placed: true})
	}
	if res != nil {
		rs.settle(ctx, func() uint64 { return allSent(sent) }, settleQuiet, scheduler.DrainLimit(ctx, cfg.Open.Drain))
	}
	rs.close()
	counts := rs.finish()
	m, ferr := meter.Finish(clock.Now(), func(r *messages.Receiver) uint64 { return rs.expected(r, sent) })
	if res == nil {
		return nil, err
	}
	if err == nil {
		err = ferr
	}
	return &Result{Closed: closed, Writer: res, Server: st, Messages: m, Written: sent.Total(), Counts: counts, Run: cfg.Run}, err
}

// allSent is every write queued, the warmup's included.
func allSent(s *messages.Sent) uint64 {
	var n uint64
	for k := range s.Channels() {
		n += s.All(k)
	}
	return n
}

// logSize is how many writes the log keeps: logSeconds at the highest
// rate the timeline reaches in windows of 4096 writes and more (at most
// maxLog), and at least a few rounds of the keys.
func logSize(tl timeline.Timeline, keys int) int {
	peak := 0.0
	for i := uint64(1 << 12); i <= 1<<24; i <<= 2 {
		if d := tl.Offset(2*i) - tl.Offset(i); d > 0 {
			peak = max(peak, float64(i)/(float64(d)/1e9))
		}
	}
	n := int(min(peak*logSeconds, maxLog))
	return max(n, 1<<16, 4*keys)
}

// maxLog bounds the log: 2M writes, 48 MiB.
const maxLog = 1 << 21

// Title is a run's display name from its shape: "SET 64 B to 1000 keys
// cached by 10 readers".
func Title(cfg Config) string {
	mode := "CLIENT TRACKING"
	if cfg.BCAST {
		mode += " BCAST"
	}
	keys, readers := strconv.Itoa(cfg.Keys)+" keys", strconv.Itoa(cfg.Readers)+" readers"
	if cfg.Keys == 1 {
		keys = "1 key"
	}
	if cfg.Readers == 1 {
		readers = "1 reader"
	}
	return fmt.Sprintf("%s: SET %d B to %s, %s", mode, cfg.Size, keys, readers)
}
