package scheduler

import (
	"reflect"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/visibility"
)

// mergeRules says how Result.Merge treats each field. A field added to
// Result without a rule here fails TestMergeCoversEveryField: decide how
// runs of a test add up (and do it in Merge) before the field ships.
var mergeRules = map[string]string{
	// What describes the test: the first run's.
	"Name": "first", "Mode": "first", "TargetRate": "first", "Arrival": "first", "Pacing": "first",
	"PacingQuantum": "first", "T0": "first", "FirstWrite": "first", "LagLimit": "first", "Pipeline": "first", "Started": "first",
	"Interval": "first", "Warmup": "first", "Stages": "first",
	// Counts, durations and tallies: summed.
	"Counts": "sum", "WarmupCounts": "sum", "Window": "sum", "SendWindow": "sum", "Blocked": "sum",
	"Clamped": "sum", "ClockErrors": "sum", "ConnsLost": "sum", "Reconnects": "sum", "HeldSent": "sum",
	"HeldUnsent": "sum", "DroppedBacklog": "sum", "Unsolicited": "sum", "BytesSent": "sum", "BytesReceived": "sum",
	"Connections": "max",
	"Interrupted": "or", "TargetGone": "or",
	"FirstError": "first non-empty",
	// Distributions: merged.
	"Response": "histogram", "Service": "histogram", "Lag": "histogram", "Receive": "histogram", "Micros": "histogram",
	"Stamped": "sum", "Replies": "sum", "ReceiveClock": "kernel if every run's",
	"Hiccups": "histogram", "HiccupInterval": "first", "TargetLocal": "or", "TargetInProcess": "and", "CPU": "weighted by seconds",
	"ServerProcess": "server process", "Extension": "first",
	"TLS": "tls", "ErrorCodes": "codes", "Intervals": "series", "Commands": "by name", "Nodes": "by address",
	"Events": "events", "EventBound": "max", "EventsDropped": "sum",
	"Wait": "wait", "Visibility": "visibility",
	"PacingSteps": "first that stepped",
}

// filled returns a Result with every field set by reflection: numbers to
// base (+1 for the second field of a struct...), strings to their name and
// base, booleans to b, histograms with n samples of base µs.
func filled(t *testing.T, base int64, b bool) *Result {
	t.Helper()
	r := &Result{}
	v := reflect.ValueOf(r).Elem()
	hist := func(n int64) *hdrhistogram.Histogram {
		h := histo.New()
		if err := h.RecordValues(base*1000, n); err != nil {
			t.Fatal(err)
		}
		return h
	}
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch name {
		case "Response", "Service", "Lag", "Receive", "Micros", "Hiccups":
			f.Set(reflect.ValueOf(hist(base)))
			continue
		case "TLS":
			f.Set(reflect.ValueOf(&TLSHandshakes{Version: "TLS 1.3", CipherSuite: "S", Time: hist(base)}))
			continue
		case "ErrorCodes":
			f.Set(reflect.ValueOf(map[string]uint64{"ERR": uint64(base)}))
			continue
		case "Intervals":
			f.Set(reflect.ValueOf([]Interval{{Start: 0, Duration: time.Duration(base) * time.Second, Counts: Counts{Completed: uint64(base)}}}))
			continue
		case "Commands":
			f.Set(reflect.ValueOf([]CommandResult{{Name: "GET", Counts: Counts{Completed: uint64(base)}, Response: hist(base)}}))
			continue
		case "Nodes":
			f.Set(reflect.ValueOf([]NodeResult{{Node: Node{Addr: "127.0.0.1:7000"}, Counts: Counts{Completed: uint64(base)}, Response: hist(base)}}))
			continue
		case "ServerProcess":
			f.Set(reflect.ValueOf(&ServerProcess{Usage: host.ProcUsage{Seconds: float64(base), Wait: time.Duration(base), Slices: uint64(base)}}))
			continue
		case "Extension":
			f.Set(reflect.ValueOf(&Extension{Looks: int(base)}))
			continue
		case "PacingSteps":
			f.Set(reflect.ValueOf([]PacingStep{{At: time.Duration(base) * time.Second, To: 600 * time.Microsecond}}))
			continue
		case "Stages":
			f.Set(reflect.ValueOf([]timeline.Stage{{Duration: time.Duration(base), Target: timeline.RatePerSecond(float64(base))}}))
			continue
		case "Started":
			f.Set(reflect.ValueOf(time.Unix(base, 0)))
			continue
		case "Wait":
			f.Set(reflect.ValueOf(&WaitResult{Wait: Wait{Replicas: 1}, Sent: uint64(base), Acked: uint64(base), Latency: hist(base)}))
			continue
		case "Visibility":
			f.Set(reflect.ValueOf(&visibility.Result{Rate: 10, Probes: uint64(base), Write: hist(base),
				Replicas: []visibility.Replica{{Addr: "r:1", Seen: uint64(base), Lag: hist(base),
					Intervals: []visibility.Interval{{Duration: time.Duration(base) * time.Second}}}}}))
			continue
		case "Events":
			f.Set(reflect.ValueOf([]events.Event{{Kind: events.Failover, At: base, Last: base, Nodes: []string{"n"},
				Write: &events.Window{Start: base, End: 2 * base}}}))
			continue
		case "TargetRate":
			f.Set(reflect.ValueOf(timeline.RatePerSecond(float64(base))))
			continue
		}
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(base)
		case reflect.Uint64:
			f.SetUint(uint64(base))
		case reflect.String:
			f.SetString(name + string(rune('0'+base)))
		case reflect.Bool:
			f.SetBool(b)
		case reflect.Struct: // Counts, HostCPU
			if name == "CPU" {
				f.Set(reflect.ValueOf(HostCPU{Available: true, Seconds: float64(base), Busy: float64(base), Steal: float64(base), Self: float64(base), CPUs: int(base)}))
				continue
			}
			for k := 0; k < f.NumField(); k++ {
				f.Field(k).SetUint(uint64(base))
			}
		default:
			t.Fatalf("field %s (%s): filled does not know how to fill it: teach it, and give the field a rule in mergeRules", name, f.Kind())
		}
	}
	return r
}

// TestMergeCoversEveryField fills two results field by field (by
// reflection), merges them and checks every field against its rule in
// mergeRules; a field without a rule fails.
func TestMergeCoversEveryField(t *testing.T) {
	a, b := filled(t, 3, false), filled(t, 5, true)
	b.FirstError = "second"
	a.ReceiveClock, b.ReceiveClock = ReceiveKernel, ReceiveRead
	merged := a.Clone()
	merged.Merge(b)
	mv, av, bv := reflect.ValueOf(merged).Elem(), reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < mv.NumField(); i++ {
		name := mv.Type().Field(i).Name
		rule, ok := mergeRules[name]
		if !ok {
			t.Errorf("Result.%s has no merge rule: say in Result.Merge how runs add it up, and add it to mergeRules", name)
			continue
		}
		got, x, y := mv.Field(i), av.Field(i), bv.Field(i)
		switch rule {
		case "first":
			if !reflect.DeepEqual(got.Interface(), x.Interface()) {
				t.Errorf("%s: %v, want the first run's %v", name, got.Interface(), x.Interface())
			}
		case "sum":
			if !sumOf(got, x, y) {
				t.Errorf("%s: %v, want %v + %v", name, got.Interface(), x.Interface(), y.Interface())
			}
		case "max":
			if got.Int() != max(x.Int(), y.Int()) {
				t.Errorf("%s: %v, want the larger of %v and %v", name, got.Interface(), x.Interface(), y.Interface())
			}
		case "or":
			if !got.Bool() {
				t.Errorf("%s: false, want true when a run has it", name)
			}
		case "and":
			if got.Bool() {
				t.Errorf("%s: true, want false when a run has it false", name)
			}
		case "weighted by seconds":
			// a: 3 s at 3, b: 5 s at 5: (9 + 25) / 8.
			if c := merged.CPU; !c.Available || c.Seconds != 8 || c.Busy != 34.0/8 || c.CPUs != 5 {
				t.Errorf("CPU: %+v, want 8 s, busy 4.25, 5 CPUs", c)
			}
		case "kernel if every run's":
			if got.String() != ReceiveRead {
				t.Errorf("%s: %q, want %q when a run's was not kernel", name, got.String(), ReceiveRead)
			}
		case "first that stepped":
			if !reflect.DeepEqual(got.Interface(), x.Interface()) {
				t.Errorf("%s: %v, want the first run's %v", name, got.Interface(), x.Interface())
			}
			c := &Result{}
			c.Merge(b)
			if !reflect.DeepEqual(c.PacingSteps, b.PacingSteps) {
				t.Errorf("%s: %v after a run that kept its pacing, want the later run's %v", name, c.PacingSteps, b.PacingSteps)
			}
		case "first non-empty":
			if got.String() != x.String() {
				t.Errorf("%s: %q, want the first run's %q", name, got.String(), x.String())
			}
		case "histogram":
			h := got.Interface().(*hdrhistogram.Histogram)
			if h == nil || h.TotalCount() != 3+5 {
				t.Errorf("%s: merged histogram holds %v samples, want 8", name, h)
			}
		case "server process":
			if sp := merged.ServerProcess; sp == nil || sp.Usage.Seconds != 8 || sp.Usage.Wait != 8 || sp.Usage.Slices != 8 {
				t.Errorf("ServerProcess: %+v, want the runs' usage added up", sp)
			}
		case "tls":
			if h := merged.TLS; h == nil || h.Time.TotalCount() != 8 {
				t.Errorf("TLS: %+v, want 8 handshakes", h)
			}
		case "codes":
			if merged.ErrorCodes["ERR"] != 8 {
				t.Errorf("ErrorCodes: %v, want ERR 8", merged.ErrorCodes)
			}
		case "series":
			if len(merged.Intervals) != 2 || merged.Intervals[1].Start != 3*time.Second {
				t.Errorf("Intervals: %+v, want the second run's interval after the first's", merged.Intervals)
			}
		case "by name":
			if len(merged.Commands) != 1 || merged.Commands[0].Counts.Completed != 8 || merged.Commands[0].Response.TotalCount() != 8 {
				t.Errorf("Commands: %+v, want GET with both runs' counts and samples", merged.Commands)
			}
		case "events":
			// The second run's follows the first's series: shifted by its 3 s.
			if e := merged.Events; len(e) != 2 || e[0].At != 3 || e[1].At != 5+int64(3*time.Second) || e[1].Write.End != 10+int64(3*time.Second) ||
				a.Events[0].At != 3 || b.Events[0].Write.Start != 5 {
				t.Errorf("Events: %+v, want the second run's after the first's series, the runs unchanged", e)
			}
		case "wait":
			if w := merged.Wait; w == nil || w.Sent != 8 || w.Acked != 8 || w.Latency.TotalCount() != 8 || a.Wait.Sent != 3 {
				t.Errorf("Wait: %+v, want both runs' WAITs", w)
			}
		case "visibility":
			v := merged.Visibility
			if v == nil || v.Probes != 8 || len(v.Replicas) != 1 || v.Replicas[0].Seen != 8 || v.Replicas[0].Lag.TotalCount() != 8 ||
				len(v.Replicas[0].Intervals) != 2 || v.Replicas[0].Intervals[1].Start != 3*time.Second || a.Visibility.Probes != 3 {
				t.Errorf("Visibility: %+v, want both runs' probes, per replica", v)
			}
		case "by address":
			if len(merged.Nodes) != 1 || merged.Nodes[0].Counts.Completed != 8 || merged.Nodes[0].Response.TotalCount() != 8 {
				t.Errorf("Nodes: %+v, want the node with both runs' counts and samples", merged.Nodes)
			}
		default:
			t.Fatalf("%s: unknown rule %q", name, rule)
		}
	}
	// The inputs are unchanged.
	if a.Counts.Completed != 3 || a.Response.TotalCount() != 3 || a.Commands[0].Response.TotalCount() != 3 ||
		a.Nodes[0].Response.TotalCount() != 3 || a.ErrorCodes["ERR"] != 3 || len(a.Intervals) != 1 {
		t.Errorf("merging into a clone changed the first run: %+v", a)
	}
	if b.Response.TotalCount() != 5 || b.Nodes[0].Response.TotalCount() != 5 {
		t.Errorf("merging changed the second run")
	}
}

// sumOf reports whether got is x + y, for numbers, durations and Counts.
func sumOf(got, x, y reflect.Value) bool {
	switch got.Kind() {
	case reflect.Int, reflect.Int64:
		return got.Int() == x.Int()+y.Int()
	case reflect.Uint64:
		return got.Uint() == x.Uint()+y.Uint()
	case reflect.Struct:
		for k := 0; k < got.NumField(); k++ {
			if !sumOf(got.Field(k), x.Field(k), y.Field(k)) {
				return false
			}
		}
		return true
	}
	return false
}

// TestMergeKeepsSharedHistograms: a closed loop's service histogram is its
// response histogram, and a single command's histograms are the test's;
// a clone and a merge keep that (no sample counted twice).
func TestMergeKeepsSharedHistograms(t *testing.T) {
	run := func(n int64) *Result {
		h := histo.New()
		_ = h.RecordValues(1000, n)
		r := &Result{Response: h, Service: h, Counts: Counts{Completed: uint64(n)}}
		r.Commands = []CommandResult{{Name: "SET", Response: h, Service: h}}
		return r
	}
	a, b := run(2), run(3)
	p := Pool([]*Result{a, b})
	if p.Service != p.Response || p.Commands[0].Response != p.Response || p.Commands[0].Service != p.Response {
		t.Fatalf("pooled result lost its shared histograms")
	}
	if got := p.Response.TotalCount(); got != 5 {
		t.Fatalf("pooled response holds %d samples, want 5", got)
	}
	if a.Response.TotalCount() != 2 || b.Response.TotalCount() != 3 {
		t.Fatalf("pooling changed its runs")
	}
}

// TestMergeLoops: bench -l --json keeps one entry per test, adding the
// loops up (moved from cmd/pacer's TestMergeResult).
func TestMergeLoops(t *testing.T) {
	mk := func(n int64) *Result {
		h := hdrhistogram.New(1, 3_600_000_000_000, 3)
		for i := range n {
			h.RecordValue(1000 + i)
		}
		return &Result{Counts: Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)},
			Response: h, Window: time.Second, ErrorCodes: map[string]uint64{"ERR": 1},
			Commands: []CommandResult{{Name: "get", Counts: Counts{Completed: uint64(n)}, Response: h}}}
	}
	a, b := mk(10), mk(5)
	// A mix keeps its own histograms per command.
	a.Commands[0].Response = hdrhistogram.Import(a.Response.Export())
	a.Merge(b)
	if a.Counts.Completed != 15 || a.Response.TotalCount() != 15 || a.Window != 2*time.Second || a.ErrorCodes["ERR"] != 2 ||
		a.Commands[0].Counts.Completed != 15 || a.Commands[0].Response.TotalCount() != 15 || !a.Counts.Balanced() {
		t.Fatalf("merged %+v", a)
	}
	// A cluster's nodes add up too, redirects by kind included (run --repeat --cluster).
	a, b = mk(10), mk(5)
	for _, r := range []*Result{a, b} {
		r.Nodes = []NodeResult{{Node: Node{Addr: "127.0.0.1:7001"}, Connections: 2,
			Counts: r.Counts, Redirects: 3, Moved: 2, Ask: 1, Response: hdrhistogram.Import(r.Response.Export())}}
	}
	a.Merge(b)
	if n := a.Nodes[0]; len(a.Nodes) != 1 || n.Counts.Completed != 15 || n.Redirects != 6 || n.Moved != 4 || n.Ask != 2 ||
		n.Connections != 2 || n.Response.TotalCount() != 15 {
		t.Fatalf("merged nodes %+v", a.Nodes)
	}
	// A single command shares the total's histogram: merged once.
	a, b = mk(10), mk(5)
	a.Merge(b)
	if a.Response.TotalCount() != 15 {
		t.Fatalf("shared histogram merged twice: %d", a.Response.TotalCount())
	}
}

// TestPoolAddsNodesAndLeavesRunsAlone: pooling the runs of a cluster
// test (--repeat, a sweep point) adds their per-node counts, redirects
// and histograms, and leaves each run's own nodes as they were (the
// JSON's repeats.runs). Before, the pool added into the first run's nodes
// and dropped moved and ask.
func TestPoolAddsNodesAndLeavesRunsAlone(t *testing.T) {
	run := func(completed uint64, moved, ask uint64, ms ...int64) *Result {
		h := histo.NewRecorder()
		for _, v := range ms {
			h.Record(v * 1e6)
		}
		node := NodeResult{Node: Node{Addr: "127.0.0.1:7000"}, Connections: 2,
			Counts: Counts{Scheduled: completed, Sent: completed, Completed: completed}, Moved: moved, Ask: ask,
			Redirects: moved + ask, Response: h.Snapshot()}
		return &Result{Counts: node.Counts, Response: h.Snapshot(), Nodes: []NodeResult{node}}
	}
	a, b := run(10, 1, 2, 1, 2), run(5, 3, 4, 3)
	p := Pool([]*Result{a, b})
	n := p.Nodes[0]
	if n.Counts.Completed != 15 || n.Moved != 4 || n.Ask != 6 || n.Redirects != 10 || n.Response.TotalCount() != 3 {
		t.Errorf("pooled node %+v, %d samples", n, n.Response.TotalCount())
	}
	if a.Nodes[0].Counts.Completed != 10 || a.Nodes[0].Moved != 1 || a.Nodes[0].Response.TotalCount() != 2 {
		t.Errorf("the first run's node changed: %+v, %d samples", a.Nodes[0], a.Nodes[0].Response.TotalCount())
	}
}

// TestPoolLeavesTheFirstRunsHistogramsAlone: pooling runs whose service
// times are their own histogram (an open run's) leaves the first run's
// as it was. Before, the pool's service histogram was the first run's
// itself, so the later runs were added into it: pacer ab's first round
// and --repeat's first run showed every round's service times (a round's
// service p99 of 1.48 ms beside intervals whose highest was 0.16 ms).
func TestPoolLeavesTheFirstRunsHistogramsAlone(t *testing.T) {
	run := func(ms ...int64) *Result {
		hist := func() *hdrhistogram.Histogram {
			h := histo.NewRecorder()
			for _, v := range ms {
				h.Record(v * 1e6)
			}
			return h.Snapshot()
		}
		n := uint64(len(ms))
		return &Result{Counts: Counts{Scheduled: n, Sent: n, Completed: n}, Response: hist(), Service: hist(), Lag: hist(), Receive: hist(), Hiccups: hist()}
	}
	a, b := run(1, 2), run(3, 4, 5)
	p := Pool([]*Result{a, b})
	for _, h := range []struct {
		what          string
		first, pooled *hdrhistogram.Histogram
	}{{"response", a.Response, p.Response}, {"service", a.Service, p.Service}, {"send lag", a.Lag, p.Lag}, {"receive lag", a.Receive, p.Receive}, {"hiccups", a.Hiccups, p.Hiccups}} {
		if h.first.TotalCount() != 2 || h.pooled.TotalCount() != 5 {
			t.Errorf("%s: the first run holds %d samples (want its 2), the pool %d (want 5)", h.what, h.first.TotalCount(), h.pooled.TotalCount())
		}
	}
}
