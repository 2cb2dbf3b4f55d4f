package closedloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/ratelimit"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// LatencyMode selects what a closed-loop batch records.
type LatencyMode int

const (
	// FirstReply is redis-benchmark's measure: from the batch's write to
	// the arrival of its first reply, recorded once for every reply of the
	// batch. With -P 1 it is the plain round trip.
	FirstReply LatencyMode = iota
	// PerReply records each reply's own time since the batch was written.
	PerReply
)

// redis-benchmark's latency histogram: whole microseconds from 10 µs to
// 3 s, samples above clamped.
const (
	microsLowest  = 10
	microsHighest = 3_000_000
)

// Config configures a closed-loop run: every connection keeps one
// batch of Pipeline commands in flight and sends the next batch when the
// last reply of the previous one has arrived.
type Config struct {
	Name string
	// Requests is the total to send (redis-benchmark's -n); exactly this
	// many are sent, the last batch may be shorter. Zero: no count bound.
	Requests uint64
	// Duration, when set, stops claiming new batches after it; the batches
	// in flight then have Drain to complete, after which their connections
	// are closed and their unanswered requests count as timeouts, recorded
	// at their age. Zero: no time bound.
	Duration time.Duration
	// Drain is how long batches in flight at Duration may still take.
	// Default scheduler.DefaultDrain.
	Drain time.Duration
	// Pipeline is the batch size (-P). Default 1.
	Pipeline int
	// Latency chooses FirstReply (default) or PerReply.
	Latency LatencyMode
	// Reconnect, when set, is called after every batch to replace the
	// connection (redis-benchmark's -k 0). Its ctx is cancelled when the
	// run stops; the run does not wait for a Reconnect that ignores it.
	Reconnect func(ctx context.Context) (*conn.Conn, error)
	// Rate throttles the loop with go.uber.org/ratelimit (zero: as fast
	// as replies allow). Latency still counts from the actual send; the
	// send lag then shows how far the loop fell behind Rate's schedule.
	Rate timeline.Rate
	// ContinueOnError keeps going after error replies; otherwise the first
	// one ends the run with an *ErrorReply, as in redis-benchmark 7.
	ContinueOnError bool
	// OnErrorReply, if set, sees the text of every error reply (from the
	// connection goroutines, concurrently).
	OnErrorReply func(text []byte)
	// OnInteger, if set, sees the value of every integer reply (from the
	// connection goroutines, concurrently).
	OnInteger func(v int64)
	// Precision is the significant digits of the redis-benchmark
	// compatible histogram (--precision). Default 3.
	Precision int
	// NewCommands returns the command stream of connection i.
	NewCommands func(i int) scheduler.Commands
	// OnStart, if set, receives a view of the running test.
	OnStart func(*scheduler.Live)
	// InterruptDrain bounds the wait for in-flight batches after ctx is
	// cancelled. Default scheduler.DefaultInterruptDrain.
	InterruptDrain time.Duration
	// CommandNames names the commands of a mix, by kind; with more than
	// one, the result also holds per-command results.
	CommandNames []string
	// Interval is the length of the result's intervals. Default
	// scheduler.DefaultInterval.
	Interval time.Duration
	// HiccupInterval is the host hiccup meter's sleep
	// (scheduler.Result.Hiccups): 0 is host.DefaultInterval (1 ms, as
	// jHiccup), a negative one turns the meter off.
	HiccupInterval time.Duration
	// ServerProcess, when set, is the target's process on this host,
	// read as openloop.Config.ServerProcess is.
	ServerProcess *host.ServerProcess
	// LagLimit is, with Rate, the send-lag p99 above which the throttled
	// loop counts as behind its schedule (when the lag is also material:
	// see verdict.Assess). Default
	// scheduler.DefaultLagLimit(scheduler.Coarse): the limiter sleeps with
	// the runtime's timers.
	LagLimit time.Duration
	// Cluster, when set, runs against a Redis Cluster (see Cluster);
	// the result then holds per-node results.
	Cluster *Cluster
	// Follow, when set, is a primary that may move (one Sentinel
	// watches): a connection dialed before its epoch passed FollowEpoch
	// is replaced after its batch with one of Redial, to the new primary.
	// A connection lost still ends the run, as in redis-benchmark.
	Follow      scheduler.Mover
	FollowEpoch uint64
	Redial      func(ctx context.Context) (*conn.Conn, error)
}

// ErrorReply ends a closed run that does not continue on errors.
type ErrorReply struct{ Text string }

func (e *ErrorReply) Error() string { return "Error from server: " + e.Text }

// ConnLostError ends a closed run whose connection died.
type ConnLostError struct{ Err error }

func (e *ConnLostError) Error() string {
	switch {
	case errors.Is(e.Err, io.EOF), errors.Is(e.Err, io.ErrUnexpectedEOF):
		return "Error: Server closed the connection" // redis-benchmark's words
	case errors.Is(e.Err, syscall.ECONNRESET):
		return "Error: Connection reset by peer"
	}
	return "Error: " + e.Err.Error()
}
func (e *ConnLostError) Unwrap() error { return e.Err }

// closedRun is the state shared by the connection goroutines.
type closedRun struct {
	cfg      Config
	issued   atomic.Uint64
	stop     atomic.Bool
	latency  *histo.Recorder
	micros   *histo.Recorder
	lag      *histo.Recorder
	receive  *histo.Recorder
	host     *scheduler.HostWatch
	limiter  ratelimit.Limiter
	timeline timeline.Uniform
	kinds    []scheduler.CommandStats // per command of a mix; nil for one
	t0       int64
	failMu   sync.Mutex
	failure  error
	workers  []*closedWorker
	// ctx ends Reconnects when the run stops.
	ctx    context.Context
	cancel context.CancelFunc
	// connMu guards every worker's c and dialing against the run closing
	// the connections; once closed is set no worker installs one.
	connMu      sync.Mutex
	closed      bool
	clockErrors atomic.Uint64
	series      *scheduler.Series
	nodes       []nodeStats // per cluster node; nil without Cluster
}

// Run runs one closed-loop test over conns (dialed with
// conn.Options.Now = scheduler.Now, no reader goroutine), one goroutine
// per connection, and closes them when it returns. The result's Response and
// Service both hold the latency from the actual send; Micros holds the
// same samples the way redis-benchmark records them.
//
// It returns by Duration + Drain when Duration is set, and within
// InterruptDrain of ctx's cancellation, whatever the server does: the
// connections are then closed and what they still awaited counts as
// timeouts.
func Run(ctx context.Context, conns []*conn.Conn, cfg Config) (*scheduler.Result, error) {
	if len(conns) == 0 {
		return nil, errors.New("closed run without connections")
	}
	if cfg.Requests == 0 && cfg.Duration <= 0 {
		return nil, errors.New("closed run without a request count or a duration")
	}
	if cfg.Requests == 0 {
		cfg.Requests = math.MaxUint64
	}
	if cfg.NewCommands == nil {
		return nil, errors.New("closed run without commands")
	}
	if cfg.Pipeline <= 0 {
		cfg.Pipeline = 1
	}
	if cfg.Precision == 0 {
		cfg.Precision = 3
	}
	if cfg.InterruptDrain <= 0 {
		cfg.InterruptDrain = scheduler.DefaultInterruptDrain
	}
	if cfg.Drain <= 0 {
		cfg.Drain = scheduler.DefaultDrain
	}
	if cfg.LagLimit <= 0 {
		cfg.LagLimit = scheduler.DefaultLagLimit(scheduler.Coarse)
	}
	run := &closedRun{
		cfg:     cfg,
		latency: histo.NewRecorder(),
		receive: histo.NewRecorder(),
		micros:  histo.NewRecorderGeometry(microsLowest, microsHighest, cfg.Precision),
		host:    scheduler.NewHostWatch(cfg.HiccupInterval, cfg.ServerProcess),
	}
	run.ctx, run.cancel = context.WithCancel(ctx)
	defer run.cancel()
	if !cfg.Rate.IsZero() {
		run.lag = histo.NewRecorder()
		run.timeline = timeline.Uniform{Rate: cfg.Rate}
		// One permission per batch: Pipeline requests at Rate.
		run.limiter = ratelimit.New(int(cfg.Rate.Milli()), ratelimit.Per(time.Duration(cfg.Pipeline)*1000*time.Second))
	}
	run.kinds = scheduler.NewCommandStats(cfg.CommandNames, !cfg.Rate.IsZero())
	if cl := cfg.Cluster; cl != nil && (len(cl.Of) != len(conns) || cl.Slot == nil) {
		return nil, errors.New("cluster run without a node for every connection")
	}
	run.nodes = newNodeStats(cfg.Cluster)
	for i, c := range conns {
		w := &closedWorker{run: run, c: c, cmds: cfg.NewCommands(i), exited: make(chan struct{}), epoch: cfg.FollowEpoch}
		if cfg.Cluster != nil {
			w.node = cfg.Cluster.Of[i]
			if w.node < 0 || w.node >= len(cfg.Cluster.Nodes) {
				return nil, fmt.Errorf("connection %d on cluster node %d of %d", i, w.node, len(cfg.Cluster.Nodes))
			}
		}
		if run.kinds != nil {
			w.tally = make([]scheduler.CommandTally, len(run.kinds))
			w.batchOK = make([]int64, len(run.kinds))
		}
		run.workers = append(run.workers, w)
	}
	// What watches the run is set up before it starts.
	live := &scheduler.Live{Latency: run.latency, Micros: run.micros, Requests: cfg.Requests, Duration: cfg.Duration,
		Response: run.latency, Service: run.latency, Receive: run.receive, Hiccups: run.host.Recorder(), TargetRate: cfg.Rate, ServerProcess: run.host.LiveServer()}
	live.Hook(scheduler.LiveHooks{Counts: run.liveCounts, Oldest: run.oldest, Totals: run.totals,
		Commands: scheduler.LiveCommands(cfg.CommandNames, run.kinds, true)})
	run.series = scheduler.NewSeries(cfg.Interval, 0, run.totals, run.oldest,
		scheduler.SeriesRecorders{Response: run.latency, Service: run.latency, Lag: run.lag, Receive: run.receive, Hiccup: run.host.Recorder()}, run.kinds)
	run.series.SetServer(run.host.ServerReader())
	if cfg.OnStart != nil {
		cfg.OnStart(live)
	}
	run.host.Prepare()
	// The set-up garbage goes before the timeline starts, so that no
	// collection lands in the measured window.
	runtime.GC()
	run.t0 = scheduler.Now()
	live.Begin(run.t0)
	run.series.Begin(run.t0)
	run.host.Begin(run.t0)
	var wg sync.WaitGroup
	for i, w := range run.workers {
		wg.Add(1)
		w.index = i
		go func() {
			defer wg.Done()
			defer close(w.exited)
			w.loop()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var deadline <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Duration + cfg.Drain)
		defer t.Stop()
		deadline = t.C
	}
	interrupted := false
	select {
	case <-done:
	case <-deadline:
		run.abandon()
	case <-ctx.Done():
		interrupted = true
		run.stop.Store(true)
		grace := time.NewTimer(cfg.InterruptDrain)
		select {
		case <-done:
		case <-grace.C:
			run.abandon()
		case <-deadline:
			run.abandon()
		}
		grace.Stop()
	}
	end := scheduler.Now()
	run.closeConns()
	res := run.result(end, interrupted || ctx.Err() != nil)
	if !res.Counts.Balanced() {
		return res, fmt.Errorf("internal error: counts do not add up: %+v", res.Counts)
	}
	if run.failure == nil && res.ClockErrors > 0 {
		return res, scheduler.ClockError(res.ClockErrors)
	}
	return res, run.failure
}

// closeConns closes every worker's connection; from then on no worker
// installs a new one. It returns the workers that may still be running
// outside a Reconnect.
func (run *closedRun) closeConns() []*closedWorker {
	run.connMu.Lock()
	defer run.connMu.Unlock()
	run.closed = true
	var active []*closedWorker
	for _, w := range run.workers {
		if w.c != nil {
			w.c.Close() // unblocks its reads and writes
		}
		if !w.dialing {
			active = append(active, w)
		}
	}
	return active
}

// abandon stops the run now: it closes the connections, so the batches in
// flight end as timeouts, and waits for the workers to account for them.
// A worker inside Reconnect has nothing in flight: it is not waited for,
// and closes what its Reconnect returns.
func (run *closedRun) abandon() {
	run.stop.Store(true)
	run.cancel()
	for _, w := range run.closeConns() {
		<-w.exited
	}
}

func (run *closedRun) fail(err error) {
	run.failMu.Lock()
	if run.failure == nil {
		run.failure = err
	}
	run.failMu.Unlock()
	run.stop.Store(true)
}

func (run *closedRun) oldest() int64 {
	var o int64
	for _, w := range run.workers {
		if t := w.since.Load(); t != 0 && (o == 0 || t < o) {
			o = t
		}
	}
	return o
}

// totals reads the run's cumulative counts and bytes, for observers. A
// closed loop schedules as it sends; requests lost with a connection,
// timeouts and unsent requests are known at the end only.
func (run *closedRun) totals() scheduler.Totals {
	var t scheduler.Totals
	for _, w := range run.workers {
		t.Sent += w.sent.Load()
		t.Completed += w.completed.Load()
		t.ReplyErrors += w.errors.Load()
		t.BytesSent += w.bytesOut.Load()
		t.BytesReceived += w.bytesIn.Load()
	}
	run.connMu.Lock()
	if !run.closed {
		for _, w := range run.workers {
			if w.c != nil {
				t.BytesSent += w.c.BytesWritten()
				t.BytesReceived += w.c.BytesRead()
			}
		}
	}
	run.connMu.Unlock()
	t.Errors = t.ReplyErrors
	t.Scheduled = t.Sent
	return t
}

func (run *closedRun) liveCounts() (sent, completed, errs uint64, inflight int) {
	for _, w := range run.workers {
		s, c, e := w.sent.Load(), w.completed.Load(), w.errors.Load()
		sent, completed, errs = sent+s, completed+c, errs+e
	}
	return sent, completed, errs, int(sent - completed - errs)
}

// claim reserves up to Pipeline requests; it returns how many and the
// global index of the first.
func (run *closedRun) claim() (uint64, uint64) {
	if run.cfg.Duration > 0 && scheduler.Now()-run.t0 >= int64(run.cfg.Duration) {
		return 0, 0
	}
	p := uint64(run.cfg.Pipeline)
	first := run.issued.Add(p) - p
	if first >= run.cfg.Requests {
		return 0, 0
	}
	return min(p, run.cfg.Requests-first), first
}

func (run *closedRun) result(end int64, interrupted bool) *scheduler.Result {
	var cnt scheduler.Counts
	codes := map[string]uint64{}
	last, sendEnd := int64(0), int64(0)
	firstErr := ""
	var unsolicited, stamped, replied uint64
	for _, w := range run.workers {
		stamped, replied = stamped+w.stamped, replied+w.replied
		cnt.Sent += w.sent.Load()
		cnt.Completed += w.completed.Load()
		cnt.Errors += w.errors.Load() + w.lost
		cnt.Timeouts += w.timeouts
		for k, v := range w.codes {
			codes[k] += v
		}
		if w.lost > 0 {
			codes[scheduler.CodeConnectionLost] += w.lost
		}
		if firstErr == "" {
			firstErr = w.firstErr
		}
		unsolicited += w.unsolicited
		if w.c != nil {
			unsolicited += w.c.Unsolicited()
		}
		last = max(last, w.last)
		sendEnd = max(sendEnd, w.sendEnd)
	}
	cnt.Scheduled = run.cfg.Requests
	if run.cfg.Requests == math.MaxUint64 {
		// Bounded by time only: what was claimed is what was scheduled.
		cnt.Scheduled = claimed(run)
	}
	// What was never written: not claimed, or claimed by a batch whose
	// write failed.
	cnt.Unsent = cnt.Scheduled - cnt.Sent
	res := &scheduler.Result{
		Name:         run.cfg.Name,
		Mode:         "closed",
		TargetRate:   run.cfg.Rate,
		Connections:  len(run.workers),
		Counts:       cnt,
		T0:           run.t0,
		Window:       time.Duration(end - run.t0),
		SendWindow:   time.Duration(sendEnd),
		Response:     run.latency.Snapshot(),
		Receive:      run.receive.Snapshot(),
		ReceiveClock: scheduler.ReceiveClockOf(stamped, replied),
		Stamped:      stamped,
		Replies:      replied,
		ErrorCodes:   scheduler.TrimCodes(codes),
		Interrupted:  interrupted,
		Micros:       run.micros.Snapshot(),
		Pipeline:     run.cfg.Pipeline,
		Clamped:      run.latency.Clamped(),
		Unsolicited:  unsolicited,
		ClockErrors:  run.clockErrors.Load(),
	}
	res.Service = res.Response
	if run.kinds != nil {
		tallies := make([][]scheduler.CommandTally, len(run.workers))
		for i, w := range run.workers {
			tallies[i] = w.tally
		}
		res.Commands = scheduler.CommandResults(run.cfg.CommandNames, run.kinds, tallies)
		for i := range res.Commands {
			res.Commands[i].Service = res.Commands[i].Response
		}
	}
	if run.lag != nil {
		res.Lag = run.lag.Snapshot()
		res.LagLimit = run.cfg.LagLimit
	}
	res.Nodes = run.nodeResults()
	res.FirstError = firstErr
	if run.failure != nil {
		res.FirstError = run.failure.Error()
	}
	total := scheduler.Totals{Counts: cnt}
	for _, w := range run.workers {
		total.BytesSent += w.bytesOut.Load()
		total.BytesReceived += w.bytesIn.Load()
		if w.c != nil {
			total.BytesSent += w.c.BytesWritten()
			total.BytesReceived += w.c.BytesRead()
		}
	}
	res.BytesSent, res.BytesReceived = total.BytesSent, total.BytesReceived
	run.host.Stop(res)
	ivs, kinds, err := run.series.Finish(end, total, res.Commands)
	if err != nil {
		run.fail(err)
	}
	res.Interval, res.Intervals, res.Started = run.series.Interval(), ivs, run.series.Started()
	res.ServerProcess = run.host.ServerTotal(ivs)
	for i := range kinds {
		for j := range kinds[i] {
			kinds[i][j].Service = kinds[i][j].Response // one latency, as in the result
		}
		res.Commands[i].Intervals = kinds[i]
	}
	return res
}

// claimed is how many requests the workers reserved, what a time-bounded
// run scheduled: every claimed batch was either written (sent) or lost
// before its write (unsentClaimed).
func claimed(run *closedRun) uint64 {
	var n uint64
	for _, w := range run.workers {
		n += w.sent.Load() + w.unsentClaimed
	}
	return n
}
