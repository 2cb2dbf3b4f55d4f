package report

import (
	"encoding/json"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// Schema identifies the JSON document format.
const Schema = "pacer.result/v1"

// Document is the pacer.result/v1 JSON document. Field names are a
// contract: scripts depend on them (see README, "JSON output").
type Document struct {
	Schema string `json:"schema"`
	// Mode is "open" or "closed"; "mixed" when tests of both are present;
	// "pubsub", "stream" or "tracking" for pacer pubsub, pacer stream and
	// pacer tracking, whose tests are each publisher's (open, or closed
	// with --closed).
	Mode      string `json:"mode"`
	Tool      Tool   `json:"tool"`
	StartedAt string `json:"started_at"`
	// Config echoes the settings the run used (free-form, for humans and
	// reproduction).
	Config      map[string]any `json:"config"`
	Tests       []Test         `json:"tests"`
	Interrupted bool           `json:"interrupted"`
	// Sweep summarises a `pacer sweep` (nil otherwise).
	Sweep *Sweep `json:"sweep,omitempty"`
	// Server is what the server said it is before the run (see README,
	// "What the server says").
	Server *serverinfo.Identity `json:"server,omitempty"`
	// Shard is set on a shard's result (--shard K/N) and on a merged one
	// (pacer merge), which lists the shards it holds.
	Shard *Shard `json:"shard,omitempty"`
	// Trace is, for pacer replay, the trace it sent.
	Trace *Trace `json:"trace,omitempty"`
	// StartAt is the wall-clock instant the first test's timeline was set
	// to start (--start-at, --start-in), RFC 3339 with nanoseconds.
	StartAt string `json:"start_at,omitempty"`
	// Outcome is the document's outcome, the worst of its tests' (a
	// sweep's own): pass, fail, inconclusive or error, as the exit code
	// reads it. Absent from a partial document and from older ones.
	Outcome string `json:"outcome,omitempty"`
}

// Shard says which part of a timeline a document holds: shard K of N, or
// for a merged document (K zero) the shards Merged.
type Shard struct {
	K      int   `json:"k,omitempty"`
	N      int   `json:"n"`
	Merged []int `json:"merged,omitempty"`
}

// Tool names the program that wrote the document.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Test is one test's result.
type Test struct {
	// ID is the test's stable identifier (get, lpush_for_lrange, mix,
	// custom, fill), set by the command that ran it; Name is its display
	// title, which may change.
	ID   string `json:"id"`
	Name string `json:"name"`
	// StartedAt is the wall-clock start of the test (RFC 3339, ns).
	StartedAt string `json:"started_at,omitempty"`
	// FirstSendMs is when the test's first request was written, in ms
	// after StartedAt (open tests that sent): how late a shard began after
	// its start instant. pacer merge leaves it out.
	FirstSendMs  *float64         `json:"first_send_ms,omitempty"`
	Mode         string           `json:"mode"`
	TargetRate   *float64         `json:"target_rate"`
	AchievedRate float64          `json:"achieved_rate"`
	DurationS    float64          `json:"duration_s"`
	Counts       scheduler.Counts `json:"counts"`
	Latencies
	Errors        map[string]uint64 `json:"errors"`
	FirstError    string            `json:"first_error,omitempty"`
	Verdict       string            `json:"verdict"`
	VerdictReason string            `json:"verdict_reason"`
	// Outcome is the test's outcome in the words of every output and
	// exit code: pass (0), fail (3), inconclusive (4) or error (1).
	// Absent from documents written before it.
	Outcome     string `json:"outcome,omitempty"`
	Arrival     string `json:"arrival,omitempty"`
	Pacing      string `json:"pacing,omitempty"`
	Connections int    `json:"connections"`
	// TLS is the connections' TLS handshakes (absent over plain TCP).
	TLS         *TLS     `json:"tls,omitempty"`
	LagLimitMs  *float64 `json:"send_lag_limit_ms"`
	Interrupted bool     `json:"interrupted"`

	// PacingQuantumUs is the open pacer's wake quantum in µs (0: a wake
	// at every due instant); open tests only.
	PacingQuantumUs *float64 `json:"pacing_quantum_us,omitempty"`
	// PacingSteps are auto pacing's steps back to coarser quanta during
	// the run, in order, when the host had too little idle CPU for the
	// finer one (absent: it kept pacing_quantum_us).
	PacingSteps []PacingStep `json:"pacing_steps,omitempty"`
	// Commands holds, for a mix, each command's counts and latencies.
	Commands map[string]Command `json:"commands,omitempty"`
	// Nodes holds, against a Redis Cluster, each primary's share.
	Nodes []Node `json:"nodes,omitempty"`
	// SLO is the verdict against --slo, when one was given.
	SLO *SLOResult `json:"slo,omitempty"`
	// Connections lost and replaced during an open run, and requests
	// dropped for being more than --max-backlog late.
	ConnectionsLost uint64  `json:"connections_lost"`
	Reconnects      uint64  `json:"reconnects"`
	DroppedBacklog  uint64  `json:"dropped_backlog"`
	BlockedS        float64 `json:"blocked_s"`
	// Unsolicited counts replies that answered no request (a server that
	// pushed or doubled replies); they are never matched to requests.
	Unsolicited uint64 `json:"unsolicited"`
	// Bytes written to and read from the sockets, in total and per second
	// of the window.
	BytesSent         uint64  `json:"bytes_sent"`
	BytesReceived     uint64  `json:"bytes_received"`
	BytesSentPerS     float64 `json:"bytes_sent_per_s"`
	BytesReceivedPerS float64 `json:"bytes_received_per_s"`
	// IntervalS is the length of the intervals in seconds; Intervals the
	// series (see Interval).
	IntervalS float64    `json:"interval_s"`
	Intervals []Interval `json:"intervals"`
	// ResponsePercentiles say what the sample supports of each percentile
	// of the response time (run, bench, sweep; see Percentile).
	ResponsePercentiles []Percentile `json:"response_percentiles,omitempty"`
	// Repeats summarises the runs of a test run with --repeat; the test's
	// own figures are then those of the runs pooled.
	Repeats *Repeats `json:"repeats,omitempty"`
	// Step places a sweep's step in its sweep.
	Step *StepInfo `json:"step,omitempty"`
	// Server is what the server counted during the test: its time per
	// call for each command.
	Server *serverinfo.Stats `json:"server,omitempty"`
	// Servers holds, for a merged result whose shards ran against
	// different targets (each its own embedded server), each target's
	// server side; Server is then absent. Shards of one target keep it
	// once, in Server: each shard's counts every client of the server.
	Servers []TargetServer `json:"servers,omitempty"`
	// ShardConnections are, for a merged result, each shard's
	// connections in the order of the document's shard.merged:
	// Connections is their sum (-c is per process).
	ShardConnections []int `json:"shard_connections,omitempty"`
	// Stages is the rate profile of a --stages run, in order; TargetRate
	// is then the stages' mean rate over the measured window, and each
	// interval's scheduled count is what the profile intended in it.
	Stages []Stage `json:"stages,omitempty"`
	// WarmupS is the leading part of the timeline that was sent but left
	// out of every other figure (counts, latencies, intervals, bytes);
	// WarmupCounts accounts for its requests. Both only with --warmup.
	WarmupS      float64           `json:"warmup_s,omitempty"`
	WarmupCounts *scheduler.Counts `json:"warmup_counts,omitempty"`
	// Host is what the client machine did during the test (absent from
	// documents written before it was measured).
	Host *Host `json:"host,omitempty"`
	// ServerProcess is what the server's process did with the CPUs, when
	// the target runs on this host in a process pacer found (absent
	// otherwise): its wait for a CPU is what tells a busy host's miss
	// from the server's.
	ServerProcess *ServerProcess `json:"server_process,omitempty"`
	// Decide is how a test given a budget to reach a verdict in
	// (--decide-within) used it; absent otherwise.
	Decide *Decide `json:"decide,omitempty"`
	// ReceiveClock says what a reply's arrival is: "kernel", the kernel's
	// receive timestamp of its last bytes, or "read", the instant pacer's
	// reader had them (where the platform gives no timestamp, or with
	// --receive-clock read). Absent from documents written before it.
	ReceiveClock string `json:"receive_clock,omitempty"`
	// HeldSent and HeldUnsent count the requests the target held back
	// (sent late, or never, because no connection could take them): their
	// lateness is the server's, not the generator's (see verdict.Assess). Absent
	// when none were.
	HeldSent   uint64 `json:"held_sent,omitempty"`
	HeldUnsent uint64 `json:"held_unsent,omitempty"`
	// Messages is, for a pubsub or stream test, what its messages did;
	// the test's latencies are then its deliveries' (see Messages).
	Messages *Messages `json:"messages,omitempty"`
	// Events are what happened to the topology during an open test (see
	// Event), absent when nothing did; EventBoundMs is the response time
	// above which a request counted against an event's window (the
	// SLO's tightest latency bound, or ten times the median response
	// time, at least 1 ms); EventsDropped counts events past the 1000
	// kept.
	Events        []Event  `json:"events,omitempty"`
	EventBoundMs  *float64 `json:"event_bound_ms,omitempty"`
	EventsDropped int      `json:"events_dropped,omitempty"`
	// Visibility is what the replication probes measured (--visibility),
	// Wait what the WAITs after writes did (--wait); absent without them.
	Visibility *Visibility `json:"visibility,omitempty"`
	Wait       *WaitJSON   `json:"wait,omitempty"`

	// fig holds the test's exact figures (see figures).
	fig *figures
	// lacks holds, for a test read from another tool's result, the
	// figures its format does not carry (see Lacking).
	lacks map[string]bool
}

// TargetServer is one target's server side in a merged result (see
// Test.Servers): its address, the shards that ran against it, and what it
// counted during the test (the first of those shards' reading).
type TargetServer struct {
	Target string            `json:"target"`
	Shards []int             `json:"shards"`
	Server *serverinfo.Stats `json:"server"`
}

// PacingStep is when auto pacing stepped back from a quantum
// (FromQuantumUs, 0: a wake at every due instant) to a coarser one
// (ToQuantumUs), and why: over the window of WindowS seconds
// before AtS, the host's CPUs had HostIdleCPUs of idle time per second
// (HostBusyPct busy in all), of which pacer itself used PacerCPUs.
type PacingStep struct {
	AtS           float64 `json:"at_s"`
	FromQuantumUs float64 `json:"from_quantum_us"`
	ToQuantumUs   float64 `json:"to_quantum_us"`
	HostIdleCPUs  float64 `json:"host_idle_cpus"`
	HostBusyPct   float64 `json:"host_busy_pct"`
	PacerCPUs     float64 `json:"pacer_cpus"`
	WindowS       float64 `json:"window_s"`
}

// Host is what the client machine did during a test: its CPUs, how busy
// they were (all processes, and the hypervisor's steal), pacer's own CPU,
// the hiccup meter's sleep, and whether the target was on this host.
type Host struct {
	CPUs       int     `json:"cpus,omitempty"`
	BusyPct    float64 `json:"busy_pct"`
	StealPct   float64 `json:"steal_pct"`
	PacerCores float64 `json:"pacer_cores"`
	// HiccupIntervalMs is the meter's sleep (0: the meter was off).
	HiccupIntervalMs float64 `json:"hiccup_interval_ms"`
	TargetLocal      bool    `json:"target_local"`
	// TargetInProcess: the target is pacer's embedded one, in its process.
	TargetInProcess bool `json:"target_in_process,omitempty"`
}

// Stage is one stage of a --stages profile: over DurationS the rate goes
// linearly from the previous stage's TargetRate (0 before the first) to
// its own.
type Stage struct {
	DurationS  float64 `json:"duration_s"`
	TargetRate float64 `json:"target_rate"`
}

// Command is one command's share of a mixed test.
type Command struct {
	Counts scheduler.Counts `json:"counts"`
	Latencies
	Errors    map[string]uint64 `json:"errors"`
	Intervals []Interval        `json:"intervals,omitempty"`
}

// Interval is one interval of a test or of one command of a mix: its
// counts, bytes (tests only) and latencies. A test's intervals merge
// exactly into the test: counts add up, histograms merge to its histograms.
type Interval struct {
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// Counts are the interval's counts, flat in the JSON (scheduled, sent,
	// completed, errors, timeouts, unsent).
	scheduler.Counts
	BytesSent     *uint64 `json:"bytes_sent,omitempty"`
	BytesReceived *uint64 `json:"bytes_received,omitempty"`
	Latencies
	// OldestInflightMs is the age of the oldest unanswered request at the
	// interval's end, OldestInflightMaxMs the largest it reached within
	// the interval (the larger of that and its largest response time): a
	// stall shows in the interval where it happens. Absent from documents
	// written before they were recorded.
	OldestInflightMs    *float64 `json:"oldest_inflight_ms,omitempty"`
	OldestInflightMaxMs *float64 `json:"oldest_inflight_max_ms,omitempty"`
	// InFlight is the requests written and not yet answered at the
	// interval's end (tests only; absent from older documents).
	InFlight *uint64 `json:"in_flight,omitempty"`
	// Messages is a pubsub or stream test's deliveries in the interval.
	Messages *IntervalMessages `json:"messages,omitempty"`
	// ServerProcess is the local server process's share of the test's
	// (tests only; absent when not watched).
	ServerProcess *ServerProcess `json:"server_process,omitempty"`
	// Events are the indexes in the test's events of those first seen in
	// the interval or whose window overlaps it (tests only; absent when
	// none).
	Events []int `json:"events,omitempty"`
}

// fromResult converts a result into its JSON form.
func fromResult(r *scheduler.Result, encode bool) (Test, error) {
	t := Test{
		Name:         r.Name,
		Mode:         r.Mode,
		AchievedRate: Round(r.AchievedRate(), 3),
		DurationS:    r.Window.Seconds(), // exact to the ns: renderers recompute rates from it,
		Counts:       r.Counts,
		Errors:       r.ErrorCodes,
		FirstError:   r.FirstError,
		Arrival:      r.Arrival,
		Pacing:       r.Pacing,
		Connections:  r.Connections,
		Interrupted:  r.Interrupted,
	}
	if t.Errors == nil {
		t.Errors = map[string]uint64{}
	}
	t.fig = figuresOf(r)
	t.HeldSent, t.HeldUnsent = r.HeldSent, r.HeldUnsent
	var err error
	if t.TLS, err = tlsJSON(r.TLS); err != nil {
		return t, err
	}
	t.ConnectionsLost, t.Reconnects, t.DroppedBacklog = r.ConnsLost, r.Reconnects, r.DroppedBacklog
	t.BlockedS = Round(r.Blocked.Seconds(), 3)
	t.Unsolicited = r.Unsolicited
	if !r.TargetRate.IsZero() {
		v := r.TargetRate.PerSecond()
		t.TargetRate = &v
	}
	if t.Latencies, err = newLatencies(latencySet{response: r.Response, service: r.Service, lag: r.Lag, receive: r.Receive, hiccup: r.Hiccups}, encode); err != nil {
		return t, err
	}
	t.ReceiveClock = r.ReceiveClock
	t.ServerProcess = testServerProcess(r.ServerProcess)
	t.Decide = decideJSON(r.Extension, r.Window)
	if r.CPU.Available || r.HiccupInterval > 0 || r.TargetLocal {
		t.Host = &Host{TargetLocal: r.TargetLocal, TargetInProcess: r.TargetInProcess, HiccupIntervalMs: Round(histo.Millis(int64(r.HiccupInterval)), 3)}
		if c := r.CPU; c.Available {
			t.Host.CPUs, t.Host.BusyPct, t.Host.StealPct, t.Host.PacerCores = c.CPUs, Round(100*c.Busy, 2), Round(100*c.Steal, 2), Round(c.Self, 3)
		}
	}
	if r.Lag != nil && (r.Mode == "open" || r.LagLimit > 0) { // open, or a throttled closed loop
		limit := histo.Millis(int64(r.LagLimit))
		t.LagLimitMs = &limit
	}
	if r.Mode == "open" && r.Pacing != "" {
		q := Round(float64(r.PacingQuantum)/1e3, 3)
		t.PacingQuantumUs = &q
	}
	for _, st := range r.PacingSteps {
		t.PacingSteps = append(t.PacingSteps, PacingStep{AtS: Round(st.At.Seconds(), 3), FromQuantumUs: Round(float64(st.From)/1e3, 3), ToQuantumUs: Round(float64(st.To)/1e3, 3),
			HostIdleCPUs: Round(st.HostIdleCPUs, 3), HostBusyPct: Round(100*st.HostBusy, 2), PacerCPUs: Round(st.Self, 3), WindowS: Round(st.Window.Seconds(), 3)})
	}
	t.BytesSent, t.BytesReceived = r.BytesSent, r.BytesReceived
	if w := r.Window.Seconds(); w > 0 {
		t.BytesSentPerS = Round(float64(r.BytesSent)/w, 3)
		t.BytesReceivedPerS = Round(float64(r.BytesReceived)/w, 3)
	}
	t.IntervalS = Round(r.Interval.Seconds(), 6)
	for _, s := range r.Stages {
		t.Stages = append(t.Stages, Stage{DurationS: Round(s.Duration.Seconds(), 9), TargetRate: s.Target.PerSecond()})
	}
	if r.Warmup > 0 {
		t.WarmupS = Round(r.Warmup.Seconds(), 9)
		wc := r.WarmupCounts
		t.WarmupCounts = &wc
	}
	if !r.Started.IsZero() {
		t.StartedAt = r.Started.UTC().Format(time.RFC3339Nano)
	}
	if r.Mode == "open" && r.FirstWrite != 0 {
		ms := Round(float64(r.FirstWrite-r.T0)/1e6, 6)
		t.FirstSendMs = &ms
	}
	if t.Intervals, err = intervals(r.Intervals, true, r.Mode == "open"); err != nil {
		return t, err
	}
	t.Events, t.EventBoundMs, t.EventsDropped = eventsJSON(r), eventBoundMs(r), r.EventsDropped
	markIntervals(t.Intervals, t.Events)
	if t.Visibility, err = visibilityJSON(r.Visibility); err != nil {
		return t, err
	}
	if t.Wait, err = waitJSON(r.Wait); err != nil {
		return t, err
	}
	for _, c := range r.Commands {
		if t.Commands == nil {
			t.Commands = map[string]Command{}
		}
		cj := Command{Counts: c.Counts, Errors: c.ErrorCodes}
		if cj.Intervals, err = intervals(c.Intervals, false, r.Mode == "open"); err != nil {
			return t, err
		}
		if cj.Latencies, err = newLatencies(latencySet{response: c.Response, service: c.Service, lag: c.Lag, receive: c.Receive}, encode); err != nil {
			return t, err
		}
		t.Commands[c.Name] = cj
	}
	for _, n := range r.Nodes {
		nj := Node{Addr: n.Addr, ID: n.ID, Slots: n.Slots, Joined: n.Joined, Role: n.Role, Connections: n.Connections,
			Scheduled: n.Counts.Scheduled, Sent: n.Counts.Sent, Completed: n.Counts.Completed, Errors: n.Counts.Errors,
			Timeouts: n.Counts.Timeouts, Unsent: n.Counts.Unsent, Redirects: n.Redirects, Moved: n.Moved, Ask: n.Ask,
			ResponseMs: summary(n.Response), ServiceMs: summary(n.Service), ReceiveLagMs: summary(n.Receive)}
		if nj.Histograms.Response, err = histo.Encode(n.Response); err != nil {
			return t, err
		}
		if nj.Histograms.Service, err = histo.Encode(n.Service); err != nil {
			return t, err
		}
		if nj.Histograms.ReceiveLag, err = histo.Encode(n.Receive); err != nil {
			return t, err
		}
		if nj.Intervals, err = intervals(n.Intervals, false, false); err != nil {
			return t, err
		}
		for i := range nj.Intervals {
			nj.Intervals[i].ServiceMs, nj.Intervals[i].Histograms.Service = nil, ""
		}
		t.Nodes = append(t.Nodes, nj)
	}
	return t, nil
}

// Node is one cluster primary's share of a test: its counts (as a test's,
// flat), its response-time summary and the histogram it summarises (so
// that shards' nodes merge exactly, and pacer report prints the node table
// as the run did).
type Node struct {
	Addr  string `json:"addr"`
	ID    string `json:"id"`
	Slots int    `json:"slots"`
	// Joined marks a primary that was not in the slot map at the start
	// (the cluster scaled out during an open run).
	Joined bool `json:"joined,omitempty"`
	// Role is "primary" or "replica" (open runs; a replica promoted
	// during the run is a primary); absent in closed runs.
	Role        string `json:"role,omitempty"`
	Connections int    `json:"connections"`
	Scheduled   uint64 `json:"scheduled"`
	Sent        uint64 `json:"sent"`
	Completed   uint64 `json:"completed"`
	Errors      uint64 `json:"errors"`
	Timeouts    uint64 `json:"timeouts"`
	Unsent      uint64 `json:"unsent"`
	Redirects   uint64 `json:"redirects"`
	// Moved and Ask split an open run's redirects (resent, not errors).
	Moved      uint64         `json:"moved"`
	Ask        uint64         `json:"ask"`
	ResponseMs *histo.Summary `json:"response"`
	// ServiceMs and ReceiveLagMs are its service time and receive lag
	// (absent from documents written before nodes carried them).
	ServiceMs    *histo.Summary `json:"service_ms,omitempty"`
	ReceiveLagMs *histo.Summary `json:"receive_lag_ms,omitempty"`
	Histograms   NodeHistograms `json:"histograms"`
	// Server is what the primary itself counted during the test (INFO
	// commandstats and LATENCY HISTOGRAM, keys after), as "server" is for
	// the whole test, which is then the primaries' sum; absent when it was
	// not asked.
	Server *serverinfo.Stats `json:"server,omitempty"`
	// Intervals are its response times per interval of the test (open
	// runs, the first 64 nodes): completed and response_ms, with the
	// histogram they summarise; the other counts are 0.
	Intervals []Interval `json:"intervals,omitempty"`
}

// NodeHistograms hold a node's response-time histogram as Histograms do a
// test's (base64 HdrHistogram V2 compressed, in ns); Response is empty
// when the node had no histogram (documents written before nodes carried
// one).
type NodeHistograms struct {
	Response   string `json:"response"`
	Service    string `json:"service,omitempty"`
	ReceiveLag string `json:"receive_lag,omitempty"`
}

// response decodes the node's response-time histogram; nil when it has none.
func (n Node) response() (*hdrhistogram.Histogram, error) {
	h, err := n.decode()
	return h[0], err
}

// decode decodes the node's response, service and receive-lag histograms
// (nil where it has none).
func (n Node) decode() ([3]*hdrhistogram.Histogram, error) {
	var out [3]*hdrhistogram.Histogram
	for i, enc := range []string{n.Histograms.Response, n.Histograms.Service, n.Histograms.ReceiveLag} {
		if enc == "" {
			continue
		}
		var err error
		if out[i], err = DecodeHistogram(enc); err != nil {
			return out, err
		}
	}
	return out, nil
}

// intervals converts an interval series; bytes are kept for a test's
// series (withBytes), send lag for open runs.
func intervals(in []scheduler.Interval, withBytes, withLag bool) ([]Interval, error) {
	out := make([]Interval, 0, len(in))
	for _, iv := range in {
		ps := [5]histo.Packed{iv.Response, iv.Service, iv.Lag, iv.Receive, iv.Hiccup}
		var text [5]string
		for i, p := range ps {
			var err error
			if text[i], err = p.Text(); err != nil {
				return nil, err
			}
		}
		j := Interval{
			StartS: Round(iv.Start.Seconds(), 6), DurationS: Round(iv.Duration.Seconds(), 6), Counts: iv.Counts,
		}
		j.ResponseMs, j.ServiceMs = packedSummary(iv.Response), packedSummary(iv.Service)
		j.Histograms = Histograms{Response: text[0], Service: text[1]}
		if withBytes {
			sent, recv := iv.BytesSent, iv.BytesReceived
			j.BytesSent, j.BytesReceived = &sent, &recv
		}
		if withLag {
			j.SendLagMs = packedSummary(iv.Lag)
			j.Histograms.SendLag = &text[2]
		}
		if text[3] != "" {
			j.ReceiveLagMs, j.Histograms.ReceiveLag = packedSummary(iv.Receive), &text[3]
		}
		if text[4] != "" {
			j.HiccupMs, j.Histograms.Hiccup = packedSummary(iv.Hiccup), &text[4]
		}
		if withBytes { // a test's series: the oldest request's age
			oldest := histo.Millis(int64(iv.OldestInflight))
			peak := oldest
			if s := packedSummary(iv.Response); s != nil {
				peak = max(peak, s.Max)
			}
			j.OldestInflightMs, j.OldestInflightMaxMs = &oldest, &peak
			n := iv.InFlight
			j.InFlight = &n
			if iv.ServerProcess != nil {
				j.ServerProcess = serverProcessJSON(*iv.ServerProcess)
			}
		}
		out = append(out, j)
	}
	return out, nil
}

func packedSummary(p histo.Packed) *histo.Summary {
	if p.Empty() {
		return nil
	}
	s := p.Summary
	return &s
}

// summary is the Summary of h, or nil when h holds no samples.
func summary(h *hdrhistogram.Histogram) *histo.Summary {
	s := histo.Summarize(h)
	if s.Count == 0 {
		return nil
	}
	return &s
}

// Round rounds v to digits decimals, as the JSON's figures are (half
// up).
func Round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// Marshal renders the document as indented JSON with a final newline.
func (d *Document) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Trace describes the trace a `pacer replay` sent (document's trace): the
// file (name, size and SHA-256 as on disk, format, lines), what it held
// (records read, commands sent per pass, by command: the most frequent,
// the rest as "other"), and how it was scaled: speed, loops, the requests
// and span of the replay.
type Trace struct {
	Name        string           `json:"name"`
	Format      string           `json:"format"`
	Gzip        bool             `json:"gzip"`
	Bytes       int64            `json:"bytes"`
	SHA256      string           `json:"sha256"`
	Lines       int64            `json:"lines"`
	Records     int64            `json:"records"`
	Commands    int64            `json:"commands"`
	SpanS       float64          `json:"span_s"`
	Speed       float64          `json:"speed"`
	Loops       int              `json:"loops"`
	Requests    uint64           `json:"requests"`
	ReplaySpanS float64          `json:"replay_span_s"`
	Lua         int64            `json:"lua_skipped"`
	Skipped     int64            `json:"skipped"`
	ByCommand   map[string]int64 `json:"by_command"`
	// Changed: a pass read other bytes than the check (the file was
	// changed in place), and the replay stopped.
	Changed bool `json:"changed,omitempty"`
}
