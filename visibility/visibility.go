// Package visibility measures how long a write takes to be seen on each
// replica: probes written on the primary at their intended instants on a
// run's timeline (a unique key each), and a reader per replica that polls
// for every probe until it sees it, bounded in time and count. A probe's
// visibility lag on a replica is the arrival of the first reply that
// shows it there less its intended instant: the primary's delay in taking
// the write, replication and the replica's own delay, from the moment the
// write was due (no coordinated omission here either).
//
// Probes and polls have their own connections and counts: nothing of them
// mixes into a test's requests. It dials through package conn and never
// prints.
package visibility

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
)

// Defaults of Config.
const (
	// DefaultPoll is how often a reader asks a replica for the probes it
	// has not seen yet: the lag's resolution.
	DefaultPoll = time.Millisecond
	// DefaultMaxWait is how long a reader looks for a probe before it
	// counts it lost on its replica.
	DefaultMaxWait = 5 * time.Second
	// MaxOutstanding bounds the probes a reader waits for at once; past
	// it the oldest is counted lost.
	MaxOutstanding = 1 << 16
	// maxBatch bounds the polls of one round trip.
	maxBatch = 1024
	// ttl is how long a probe's key lives (PX): none is left behind.
	ttl = "60000"
)

// Config says where and how fast to probe.
type Config struct {
	// Rate is probes per second.
	Rate float64
	// Primary returns the options that reach the primary now (it may
	// move: a Sentinel's failover); Replica the options of a replica.
	Primary func() conn.Options
	Replica func(addr string) conn.Options
	// Replicas are the replicas' addresses, each polled by a reader.
	Replicas []string
	// Poll and MaxWait: see DefaultPoll, DefaultMaxWait.
	Poll, MaxWait time.Duration
	// Interval is the length of the result's intervals (the run's).
	Interval time.Duration
	// Now is the clock of the run's timeline (monotonic ns).
	Now func() int64
}

// Prober writes the probes and reads them back; New dials, Begin starts
// it at the run's t0, Stop ends it and returns the result.
type Prober struct {
	cfg     Config
	prefix  string
	period  float64 // ns between probes
	w       *conn.Conn
	wAddr   string
	readers []*reader
	write   *histo.Recorder
	probes  atomic.Uint64
	wErrs   atomic.Uint64
	t0      int64
	stop    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	series  *intervals
}

// reader polls one replica.
type reader struct {
	addr  string
	c     *conn.Conn
	in    chan probe
	lag   *histo.Recorder
	seen  atomic.Uint64
	lost  atomic.Uint64
	polls atomic.Uint64
	err   error // the last connection error (reader-owned until it ends)
}

// probe is a probe written: its index and intended instant.
type probe struct {
	k        uint64
	intended int64
}

// New dials a connection to the primary and one to each replica.
func New(ctx context.Context, cfg Config) (*Prober, error) {
	switch {
	case cfg.Rate <= 0:
		return nil, errors.New("visibility: want a positive probe rate")
	case len(cfg.Replicas) == 0:
		return nil, errors.New("visibility: no replica to read probes from")
	case cfg.Primary == nil || cfg.Replica == nil || cfg.Now == nil:
		return nil, errors.New("visibility: want Primary, Replica and Now")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	p := &Prober{cfg: cfg, prefix: "pacer:visibility:" + hex.EncodeToString(id[:]) + ":", period: 1e9 / cfg.Rate,
		write: histo.NewRecorder(), stop: make(chan struct{}), done: make(chan struct{})}
	o := cfg.Primary()
	w, err := conn.Dial(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("visibility probes: the primary %s: %w", o.Addr, err)
	}
	p.w, p.wAddr = w, o.Addr
	for _, a := range cfg.Replicas {
		c, err := conn.Dial(ctx, cfg.Replica(a))
		if err != nil {
			p.closeAll()
			return nil, fmt.Errorf("visibility probes: replica %s: %w", a, err)
		}
		p.readers = append(p.readers, &reader{addr: a, c: c, in: make(chan probe, MaxOutstanding), lag: histo.NewRecorder()})
	}
	return p, nil
}

// Begin starts writing probes on the timeline that starts at t0, and the
// readers. It returns at once.
func (p *Prober) Begin(t0 int64) {
	p.t0 = t0
	p.series = newIntervals(p, t0)
	for _, r := range p.readers {
		p.wg.Go(func() { p.read(r) })
	}
	p.wg.Go(p.writeLoop)
	p.wg.Go(p.series.loop)
}

// Stop ends the probes: no more is written, and the readers look for
// those written until each is seen or has waited MaxWait. It returns
// the result, and is idempotent (nil after the first call, or before
// Begin).
func (p *Prober) Stop() *Result {
	var res *Result
	p.once.Do(func() {
		close(p.stop)
		if p.series == nil { // never began
			p.closeAll()
			return
		}
		p.wg.Wait()
		p.closeAll()
		res = p.result()
	})
	return res
}

func (p *Prober) closeAll() {
	if p.w != nil {
		p.w.Close()
	}
	for _, r := range p.readers {
		if r.c != nil {
			r.c.Close()
		}
	}
}

// Lags returns each replica's lag recorder (for live metrics), by
// address.
func (p *Prober) Lags() map[string]*histo.Recorder {
	out := make(map[string]*histo.Recorder, len(p.readers))
	for _, r := range p.readers {
		out[r.addr] = r.lag
	}
	return out
}

// key is probe k's key.
func (p *Prober) key(k uint64) string { return p.prefix + strconv.FormatUint(k, 10) }

// writeLoop writes probe k at t0 + k·period until Stop, each on the
// primary of the moment, and hands those written to the readers.
func (p *Prober) writeLoop() {
	defer func() {
		for _, r := range p.readers {
			close(r.in)
		}
	}()
	for k := uint64(0); ; k++ {
		intended := p.t0 + int64(float64(k)*p.period)
		if d := intended - p.cfg.Now(); d > 0 {
			select {
			case <-p.stop:
				return
			case <-time.After(time.Duration(d)):
			}
		}
		select {
		case <-p.stop:
			return
		default:
		}
		if !p.writeProbe(k, intended) {
			continue
		}
		for _, r := range p.readers {
			select {
			case r.in <- probe{k, intended}:
			default:
				r.lost.Add(1) // the reader is that far behind
			}
		}
	}
}

// writeProbe writes probe k (intended at intended) and reports whether
// the primary took it; a connection that fails, or a primary that moved,
// is dialed again (once per probe).
func (p *Prober) writeProbe(k uint64, intended int64) bool {
	p.probes.Add(1)
	if o := p.cfg.Primary(); o.Addr != p.wAddr || p.w == nil || p.w.Dead() {
		if p.w != nil {
			p.w.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.MaxWait)
		w, err := conn.Dial(ctx, o)
		cancel()
		if err != nil {
			p.w = nil
			p.wErrs.Add(1)
			return false
		}
		p.w, p.wAddr = w, o.Addr
	}
	if err := p.w.Write(conn.AppendCommand(nil, "SET", p.key(k), "1", "PX", ttl)); err != nil {
		p.wErrs.Add(1)
		return false
	}
	if _, err := p.w.ReadValue(); err != nil {
		p.wErrs.Add(1)
		return false
	}
	if at := p.w.LastTimes().Arrival; at >= intended {
		p.write.Record(at - intended)
	}
	return true
}

// read polls replica r for the probes handed to it until the writer is
// done and none is left.
func (p *Prober) read(r *reader) {
	var out []probe
	tick := time.NewTicker(p.cfg.Poll)
	defer tick.Stop()
	in := r.in
	for in != nil || len(out) > 0 {
		select {
		case pr, ok := <-in:
			if !ok {
				in = nil // the writer is done: the rest are polled for until seen or lost
				continue
			}
			out = append(out, pr)
			continue
		case <-tick.C:
		}
		now := p.cfg.Now()
		keep := out[:0]
		for _, pr := range out { // bounded in time
			if now-pr.intended > int64(p.cfg.MaxWait) {
				r.lost.Add(1)
				continue
			}
			keep = append(keep, pr)
		}
		out = keep
		if len(out) > MaxOutstanding { // and in count
			r.lost.Add(uint64(len(out) - MaxOutstanding))
			out = out[len(out)-MaxOutstanding:]
		}
		if len(out) > 0 {
			out = p.poll(r, out)
		}
	}
}

// poll asks replica r whether it has the probes of out (the first
// maxBatch) and returns those it does not have yet.
func (p *Prober) poll(r *reader, out []probe) []probe {
	if r.c == nil || r.c.Dead() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := conn.Dial(ctx, p.cfg.Replica(r.addr))
		cancel()
		if err != nil {
			r.err = err
			return out
		}
		if r.c != nil {
			r.c.Close()
		}
		r.c = c
	}
	n := min(len(out), maxBatch)
	var b []byte
	for _, pr := range out[:n] {
		b = conn.AppendCommand(b, "EXISTS", p.key(pr.k))
	}
	if err := r.c.Write(b); err != nil {
		r.err = err
		return out
	}
	r.polls.Add(uint64(n))
	keep := out[:0]
	for i, pr := range out {
		if i >= n {
			keep = append(keep, pr)
			continue
		}
		v, err := r.c.ReadValue()
		if err != nil {
			r.err = err
			return append(keep, out[i:]...)
		}
		if v.Kind == ':' && v.Int == 1 {
			at := r.c.LastTimes().Arrival
			r.lag.Record(max(at-pr.intended, 0))
			r.seen.Add(1)
			continue
		}
		keep = append(keep, pr)
	}
	return keep
}

// Result is what the probes measured.
type Result struct {
	// Rate is probes per second; Probes how many were due and
	// WriteErrors how many the primary did not take.
	Rate                float64
	Probes, WriteErrors uint64
	// Write is the probe writes' response time (their reply less their
	// intended instant), in ns.
	Write *hdrhistogram.Histogram
	// Replicas are each replica's, in the order of Config.Replicas.
	Replicas []Replica
	// Interval is the length of each replica's intervals.
	Interval time.Duration
}

// Replica is what one replica showed: how many probes it was seen to
// have, how many were lost (not seen within MaxWait, or past
// MaxOutstanding), the polls it answered, and the visibility lag of those
// seen (ns), whole and per interval.
type Replica struct {
	Addr              string
	Seen, Lost, Polls uint64
	Lag               *hdrhistogram.Histogram
	Intervals         []Interval
	// LastError is the last connection error of its reader ("" for
	// none).
	LastError string
}

// Interval is the lags recorded in one interval of the run (by the time
// they were seen): Start from t0.
type Interval struct {
	Start, Duration time.Duration
	Lag             histo.Packed
}

func (p *Prober) result() *Result {
	res := &Result{Rate: p.cfg.Rate, Probes: p.probes.Load(), WriteErrors: p.wErrs.Load(), Write: p.write.Snapshot(), Interval: p.series.d}
	ivs := p.series.finish()
	for i, r := range p.readers {
		rr := Replica{Addr: r.addr, Seen: r.seen.Load(), Lost: r.lost.Load(), Polls: r.polls.Load(), Lag: r.lag.Snapshot()}
		if i < len(ivs) {
			rr.Intervals = ivs[i]
		}
		if r.err != nil {
			rr.LastError = r.err.Error()
		}
		res.Replicas = append(res.Replicas, rr)
	}
	return res
}

// Merge adds o, a later run's probes, to r: counts summed, histograms
// merged, each replica matched by address (intervals continued after
// r's). r's histograms must be its own (see Clone).
func (r *Result) Merge(o *Result) {
	if o == nil {
		return
	}
	r.Probes += o.Probes
	r.WriteErrors += o.WriteErrors
	r.Write, _ = histo.Add(r.Write, o.Write)
	for _, or := range o.Replicas {
		i := -1
		for j := range r.Replicas {
			if r.Replicas[j].Addr == or.Addr {
				i = j
			}
		}
		if i < 0 {
			r.Replicas = append(r.Replicas, or.clone())
			continue
		}
		rr := &r.Replicas[i]
		rr.Seen += or.Seen
		rr.Lost += or.Lost
		rr.Polls += or.Polls
		rr.Lag, _ = histo.Add(rr.Lag, or.Lag)
		var end time.Duration
		if n := len(rr.Intervals); n > 0 {
			end = rr.Intervals[n-1].Start + rr.Intervals[n-1].Duration
		}
		for _, iv := range or.Intervals {
			iv.Start += end
			rr.Intervals = append(rr.Intervals, iv)
		}
		if or.LastError != "" {
			rr.LastError = or.LastError
		}
	}
}

// Clone returns a copy of r that shares nothing a Merge changes.
func (r *Result) Clone() *Result {
	if r == nil {
		return nil
	}
	c := *r
	c.Write = histo.Copy(r.Write)
	c.Replicas = nil
	for _, rr := range r.Replicas {
		c.Replicas = append(c.Replicas, rr.clone())
	}
	return &c
}

func (rr Replica) clone() Replica {
	rr.Lag = histo.Copy(rr.Lag)
	rr.Intervals = append([]Interval(nil), rr.Intervals...)
	return rr
}
