// Package metrics exposes a running command's live numbers to Prometheus:
// counters, gauges and latency histograms read at scrape time from the
// scheduler's Live view of each test (the counters and HdrHistogram
// recorders the run keeps anyway), so serving them adds nothing to the hot
// path. Exporter is the HTTP listener that serves /metrics.
//
// Every series carries the labels test (the test's name, as in the JSON
// result), mode (open or closed), target (the server's address: a cluster's
// seed, a unix socket's path; never a password) and shard (K/N, empty when
// the run is not sharded). A mix's commands have series of their own,
// pacer_command_*, with a label command beside those. A test that ends
// keeps its final values, and a test that runs again under the same labels
// (bench -l) adds to them, so counters and histograms never go down.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Label values of mode.
const (
	ModeOpen   = "open"
	ModeClosed = "closed"
)

var labels = []string{"test", "mode", "target", "shard"}

func desc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, labels...), extra...), nil)
}

var (
	descScheduled = desc("pacer_requests_scheduled_total", "Requests whose intended send time has come (open mode: the timeline so far; closed mode: requests started).")
	descSent      = desc("pacer_requests_sent_total", "Requests written to a connection.")
	descCompleted = desc("pacer_requests_completed_total", "Requests answered with a reply that is not an error.")
	descErrors    = desc("pacer_requests_errors_total", "Requests that ended in an error: kind=reply for an error reply, kind=connection for a request lost with its connection.", "kind")
	descTimeouts  = desc("pacer_requests_timeouts_total", "Requests that ended unanswered: --timeout closed their connection, or the drain ended.")
	descUnsent    = desc("pacer_requests_unsent_total", "Scheduled requests that were never written (no connection, or the run ended first).")
	descBytesOut  = desc("pacer_sent_bytes_total", "Bytes written to the server's sockets.")
	descBytesIn   = desc("pacer_received_bytes_total", "Bytes read from the server's sockets.")
	descRunning   = desc("pacer_test_running", "1 while the test runs, 0 once it has ended.")
	descTarget    = desc("pacer_target_requests_per_second", "The timeline's rate; absent for an unthrottled closed loop and for tests that ended.")
	descAchieved  = desc("pacer_achieved_requests_per_second", "Requests completed per second over the last second (1 to 1.2 s ending at the scrape; since the start during the first second); absent for tests that ended.")
	descInFlight  = desc("pacer_requests_in_flight", "Requests written and not yet answered; absent for tests that ended.")
	descOldest    = desc("pacer_oldest_unanswered_seconds", "Age of the oldest unanswered request, from its intended time (open) or its send (closed); 0 when none; absent for tests that ended.")

	descHist = [numHists]*prometheus.Desc{
		desc("pacer_response_seconds", "Response time: reply received minus intended send time (closed mode: minus the send)."),
		desc("pacer_service_seconds", "Service time: reply received minus the actual write."),
		desc("pacer_send_lag_seconds", "Send lag: actual write minus intended send time (open mode only)."),
		desc("pacer_receive_lag_seconds", "Receive lag: the instant pacer read a reply minus its arrival (the kernel's receive timestamp)."),
		desc("pacer_host_hiccup_seconds", "Host hiccups: how late a goroutine sleeping a fixed interval woke (the client machine's own noise)."),
	}
)

const (
	histResponse = iota
	histService
	histLag
	histReceive
	histHiccup
	numHists
)

// Collector is a prometheus.Collector of the tests a command runs. Watch
// adds a test when it starts; the returned function ends it.
type Collector struct {
	mu     sync.Mutex
	series []*series
	byKey  map[key]*series
	// msgSeries are the pubsub and stream tests' deliveries (messages.go).
	msgSeries []*msgSeries
	msgByKey  map[key]*msgSeries
	// target and shard label the tests watched from now on (SetScope).
	target, shard string
	// bounds are the histograms' bucket bounds in nanoseconds, le their
	// label values in seconds.
	bounds []int64
	le     []float64
	// now and every are the clock and tick of the achieved-rate sampler
	// (tests replace them).
	now   func() time.Time
	every time.Duration
}

var _ prometheus.Collector = (*Collector)(nil)

// key is a test's label values.
type key struct{ test, mode, target, shard string }

func (k key) values() []string { return []string{k.test, k.mode, k.target, k.shard} }

// NewCollector returns a Collector with no tests, whose histograms have the
// upper bounds buckets (nil: DefaultBuckets; see ParseBuckets for what is
// valid).
func NewCollector(buckets []time.Duration) *Collector {
	if buckets == nil {
		buckets = DefaultBuckets()
	}
	c := &Collector{byKey: map[key]*series{}, now: time.Now, every: 200 * time.Millisecond}
	for _, b := range buckets {
		c.bounds = append(c.bounds, int64(b))
		c.le = append(c.le, b.Seconds())
	}
	return c
}

// SetScope sets the labels target and shard of the tests watched from
// now on: target is the server's address as pacer dials it (host:port, a
// cluster's seed, or a unix socket's path), shard is K/N or empty.
func (c *Collector) SetScope(target, shard string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.target, c.shard = labelValue(target), labelValue(shard)
}

// Watched reports whether a test was ever watched: whether the endpoint
// has had anything of pacer's to serve.
func (c *Collector) Watched() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.series) > 0
}

// series is one test's label set: what its ended runs added up to (base)
// and the run in progress, if any.
type series struct {
	key
	mu      sync.Mutex
	base    snapshot
	live    source
	window  *window
	stopWin func()
}

// snapshot is a test's cumulative numbers at one moment.
type snapshot struct {
	totals   scheduler.Totals
	hists    [numHists]hist
	commands []commandSnap // a mix's, in the order first seen
	server   serverSnap
	topology topologySnap
}

// hist is a histogram's cumulative buckets; ok is false until a run
// recorded into it (closed mode has no send lag).
type hist struct {
	ok    bool
	below []uint64 // per bound: the values below it
	count uint64
	sum   float64 // nanoseconds
}

func (h *hist) add(o hist) {
	if !o.ok {
		return
	}
	if !h.ok {
		*h = hist{ok: true, below: make([]uint64, len(o.below))}
	}
	for i := range h.below {
		h.below[i] += o.below[i]
	}
	h.count += o.count
	h.sum += o.sum
}

// readHist reads recorder r's cumulative buckets at bounds (ns); nil
// reads as no histogram.
func readHist(r *histo.Recorder, bounds []int64) hist {
	if r == nil {
		return hist{}
	}
	h := hist{ok: true, below: make([]uint64, len(bounds))}
	h.count, h.sum = r.Cumulative(bounds, h.below)
	return h
}

func (s *snapshot) add(o snapshot) {
	s.totals.Counts.Add(o.totals.Counts)
	s.totals.ReplyErrors += o.totals.ReplyErrors
	s.totals.ConnErrors += o.totals.ConnErrors
	s.totals.BytesSent += o.totals.BytesSent
	s.totals.BytesReceived += o.totals.BytesReceived
	for i := range s.hists {
		s.hists[i].add(o.hists[i])
	}
	s.addCommands(o.commands)
	s.server.add(o.server)
	s.topology.add(o.topology)
}

// source is what the collector reads of a running test: a
// *scheduler.Live (through liveSource), or a fake in tests.
type source interface {
	Totals() scheduler.Totals
	Progress() scheduler.Progress
	recorders() [numHists]*histo.Recorder
	target() timeline.Rate
	commands() []commandSource
	serverProcess() serverSnap
	topology() topologySource
}

type liveSource struct{ *scheduler.Live }

func (l liveSource) recorders() [numHists]*histo.Recorder {
	return [numHists]*histo.Recorder{l.Response, l.Service, l.Lag, l.Receive, l.Hiccups}
}

func (l liveSource) target() timeline.Rate { return l.TargetRate }

// commands are a mix's commands, as the live view shows them.
func (l liveSource) commands() []commandSource {
	lc := l.Commands()
	if len(lc) == 0 {
		return nil
	}
	out := make([]commandSource, len(lc))
	for i, c := range lc {
		out[i] = commandSource{name: c.Name, completed: c.Completed, replyErrors: c.ReplyErrors,
			recs: [numCmdHists]*histo.Recorder{c.Response, c.Service, c.Lag, c.Receive}}
	}
	return out
}

// read takes l's cumulative numbers at bounds (ns); the recorders are
// read in place.
func read(l source, bounds []int64) snapshot {
	s := snapshot{totals: l.Totals()}
	for i, r := range l.recorders() {
		s.hists[i] = readHist(r, bounds)
	}
	s.commands = readCommands(l.commands(), bounds)
	s.server = l.serverProcess()
	s.topology = readTopology(l.topology(), bounds)
	return s
}

// Watch starts exposing l, a test that has just started, under the labels
// test and mode (ModeOpen or ModeClosed), and the target and shard of
// SetScope. Call the returned end once the run has returned: the test's
// final numbers are kept and l is released. Watch is cheap enough for a
// scheduler's OnStart.
func (c *Collector) Watch(test, mode string, l *scheduler.Live) (end func()) {
	return c.watch(test, mode, liveSource{l})
}

func (c *Collector) watch(test, mode string, l source) (end func()) {
	c.mu.Lock()
	k := key{labelValue(test), mode, c.target, c.shard}
	s := c.byKey[k]
	if s == nil {
		s = &series{key: k}
		c.byKey[k] = s
		c.series = append(c.series, s)
	}
	bounds := c.bounds
	c.mu.Unlock()

	s.mu.Lock()
	if s.live != nil { // the same labels twice at once: fold the first
		s.endLocked(bounds)
	}
	s.live = l
	s.window = newWindow(c.now(), 0)
	s.stopWin = s.window.sample(c.every, c.now, func() uint64 { return l.Totals().Completed })
	s.mu.Unlock()

	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.live == l {
				s.endLocked(bounds)
			}
			s.mu.Unlock()
		})
	}
}

// endLocked folds the run in progress into base.
func (s *series) endLocked(bounds []int64) {
	s.stopWin()
	s.base.add(read(s.live, bounds))
	s.live, s.window, s.stopWin = nil, nil, nil
}

// Describe sends the descriptors of every metric the collector makes.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descScheduled, descSent, descCompleted, descErrors, descTimeouts, descUnsent,
		descBytesOut, descBytesIn, descRunning, descTarget, descAchieved, descInFlight, descOldest,
		descCmdCompleted, descCmdErrors, descServerCPU, descServerWait, descServerSlices, descServerInvol, descServerLooks, descServerDisk,
		descNodeHist, descEvents, descUnavailable, descVisibility} {
		ch <- d
	}
	for _, d := range descHist {
		ch <- d
	}
	for _, d := range descCmdHist {
		ch <- d
	}
	for _, d := range messageDescs {
		ch <- d
	}
}

// Collect reads every test's numbers: the base of its ended runs plus the
// run in progress.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	all := append([]*series{}, c.series...)
	c.mu.Unlock()
	for _, s := range all {
		s.collect(ch, c)
	}
	c.collectMessages(ch)
}

func (s *series) collect(ch chan<- prometheus.Metric, c *Collector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.base
	running := 0.0
	if s.live != nil {
		running = 1
		snap = snapshot{}
		snap.add(s.base)
		snap.add(read(s.live, c.bounds))
	}
	lv := s.values()
	counter := func(d *prometheus.Desc, v uint64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(lv, extra...)...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	t := snap.totals
	counter(descScheduled, t.Scheduled)
	counter(descSent, t.Sent)
	counter(descCompleted, t.Completed)
	counter(descErrors, t.ReplyErrors, "reply")
	counter(descErrors, t.ConnErrors, "connection")
	counter(descTimeouts, t.Timeouts)
	counter(descUnsent, t.Unsent)
	counter(descBytesOut, t.BytesSent)
	counter(descBytesIn, t.BytesReceived)
	gauge(descRunning, running)
	if s.live != nil {
		if r := s.live.target(); !r.IsZero() {
			gauge(descTarget, r.PerSecond())
		}
		p := s.live.Progress()
		gauge(descAchieved, s.window.rate(c.now(), snap.totals.Completed-s.base.totals.Completed))
		gauge(descInFlight, float64(p.InFlight))
		gauge(descOldest, p.OldestAge.Seconds())
	}
	for i, h := range snap.hists {
		if h.ok {
			ch <- constHistogram(descHist[i], h, c.le, lv)
		}
	}
	collectCommands(ch, snap.commands, c.le, lv)
	collectServer(ch, snap.server, lv)
	collectTopology(ch, snap.topology, c.le, lv)
}

// constHistogram is h as a Prometheus histogram with the upper bounds le
// (seconds).
func constHistogram(d *prometheus.Desc, h hist, le []float64, lv []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(le))
	for j, b := range le {
		buckets[b] = h.below[j]
	}
	return prometheus.MustNewConstHistogram(d, h.count, h.sum/1e9, buckets, lv...)
}
