package verdict

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

func mustCheck(t *testing.T, s SLO, r *scheduler.Result) *report.SLOResult {
	t.Helper()
	res, err := s.Check(asTest(t, r, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustSLO(t *testing.T, spec string, window time.Duration) SLO {
	t.Helper()
	s, err := ParseSLO(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Window = window
	return s
}

func TestParseSLO(t *testing.T) {
	t.Parallel()
	good := []string{"p99<5ms", "p99.9<=20ms, errors<0.1%", "max<1s,mean<500us", "errors<=0.001", "unsent<1%", "rate>=9500", "rate>10k", "P50<1ms",
		"timeouts<0.01%", "achieved>=9.5k", "min>10us"}
	for _, s := range good {
		if _, err := ParseSLO(s); err != nil {
			t.Errorf("ParseSLO(%q): %v", s, err)
		}
	}
	bad := []string{"", ",", "p99", "p99<", "p99<5", "p99<fast", "p98<5ms", "errors<150%", "errors<2", "rate>=0", "latency<5ms", "<5ms", "p99=5ms",
		"timeouts<NaN%", "achieved>=-1", "p99<-1ms"}
	for _, s := range bad {
		if _, err := ParseSLO(s); err == nil {
			t.Errorf("ParseSLO(%q) accepted", s)
		}
	}
}

func TestSLOCheck(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample() // response 1..10 ms uniform; 2 errors + 2 timeouts of 10003
	pass := mustSLO(t, "p50<6ms,p99<=10ms,errors<0.1%,rate>=9000", 0)
	if got := mustCheck(t, pass, r); !got.Pass || len(got.Checked) != 4 || len(got.Clauses) != 4 {
		t.Fatalf("%+v", got)
	}
	fail := mustSLO(t, "p99<5ms,errors<0.01%,rate>20k", 0)
	got := mustCheck(t, fail, r)
	if got.Pass || len(got.Violations) != 3 || !strings.Contains(got.Line(), "VIOLATED") || !strings.Contains(got.Violations[0], "p99 9.904 ms >= 5.000 ms") {
		t.Fatalf("%+v", got)
	}
	if res, err := (SLO{}).Check(asTest(t, r, nil)); res != nil || err != nil {
		t.Fatal("no SLO, yet a verdict")
	}
}

// TestSLOClausesJSON: the numbers scripts read, one object per clause.
func TestSLOClausesJSON(t *testing.T) {
	t.Parallel()
	r := resulttest.Sample() // response 1..10 ms, service half; 2 errors + 2 timeouts + 1 unsent of 10003
	got := mustCheck(t, mustSLO(t, "p99<5ms,timeouts<=0.02%,unsent<1%,achieved>=9k", 0), r)
	b, err := json.Marshal(got.Clauses)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"clause":"p99\u003c5ms","metric":"p99","op":"\u003c","bound":5,"observed":9.904127,"unit":"ms","pass":false,"basis":"response","window":null,"client":{"send_lag_ms":0.019007,"send_lag_share":0.0038}},` +
		`{"clause":"timeouts\u003c=0.02%","metric":"timeouts","op":"\u003c=","bound":0.02,"observed":0.019994,"unit":"%","pass":true,"basis":"response","window":null},` +
		`{"clause":"unsent\u003c1%","metric":"unsent","op":"\u003c","bound":1,"observed":0.009997,"unit":"%","pass":true,"basis":"response","window":null},` +
		`{"clause":"achieved\u003e=9k","metric":"achieved","op":"\u003e=","bound":9000,"observed":9995.501125,"unit":"req/s","pass":true,"basis":"response","window":null}]`
	if string(b) != want {
		t.Errorf("clauses\n got %s\nwant %s", b, want)
	}
	// A closed loop's latencies are from the send: basis service.
	r.Mode = "closed"
	if c := mustCheck(t, mustSLO(t, "p99<5ms", 0), r).Clauses[0]; c.Basis != "service" {
		t.Errorf("closed basis %q", c.Basis)
	}
}

// TestSLOWindows: every window must pass; each clause names its worst.
func TestSLOWindows(t *testing.T) {
	t.Parallel()
	// 2 s at 1000/s in 100 ms intervals; requests 1200-1299 (the window
	// from 1.0 s) take 40 ms, the rest 1 ms.
	r := crafted("open", 2000, func(i int) (time.Duration, time.Duration) {
		if i >= 1200 && i < 1300 {
			return 40 * time.Millisecond, 50 * time.Microsecond
		}
		return time.Millisecond, 50 * time.Microsecond
	}, true)
	// On the whole test the slow 5% leave the p99 at 40 ms, p90 at 1 ms.
	whole := mustCheck(t, mustSLO(t, "p90<2ms", 0), r)
	if !whole.Pass {
		t.Fatalf("whole test: %s", whole.Line())
	}
	res := mustCheck(t, mustSLO(t, "p90<2ms,rate>=900", 500*time.Millisecond), r)
	c := res.Clauses[0]
	if res.Pass || c.Pass || c.Window == nil || c.Window.StartS != 1 || c.Window.Failed != 1 || c.Window.Windows != 4 ||
		c.Window.LengthS != 0.5 || c.Window.DurationS != 0.5 || c.Observed == nil || *c.Observed < 39 {
		t.Fatalf("p90 per 500 ms window: %+v %+v", c, c.Window)
	}
	if !strings.Contains(res.Line(), "in 1 of 4 windows, worst at 1 s") {
		t.Errorf("line %q", res.Line())
	}
	if c := res.Clauses[1]; !c.Pass || *c.Observed != 1000 || c.Window.Failed != 0 {
		t.Errorf("rate per window: %+v", c)
	}
	// A window is a whole number of intervals.
	if _, err := mustSLO(t, "p99<1s", 150*time.Millisecond).Check(asTest(t, r, nil)); err == nil {
		t.Error("a 150 ms window over 100 ms intervals was accepted")
	}
}

// TestSLOWindowTail: a last window shorter than half the length joins the
// one before it.
func TestSLOWindowTail(t *testing.T) {
	t.Parallel()
	r := crafted("open", 1000, func(int) (time.Duration, time.Duration) { return time.Millisecond, 0 }, true)
	// A 30 ms drain tail holding one slow reply.
	tail := histo.NewRecorder()
	tail.Record(int64(90 * time.Millisecond))
	p, err := histo.Pack(tail.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	r.Intervals = append(r.Intervals, scheduler.Interval{Start: time.Second, Duration: 30 * time.Millisecond,
		Counts: scheduler.Counts{Completed: 1}, Response: p, Service: p})
	res := mustCheck(t, mustSLO(t, "max<50ms", 500*time.Millisecond), r)
	c := res.Clauses[0]
	if c.Pass || c.Window.Windows != 2 || c.Window.StartS != 0.5 || c.Window.DurationS != 0.53 {
		t.Fatalf("%+v %+v", c, c.Window)
	}
}

// crafted builds an open (or closed) result of n requests at 1000/s, cut
// into 100 ms intervals when series is set (packing them costs time):
// request i has service time and send lag f(i); its response time is
// their sum (closed: the service time).
func crafted(mode string, n int, f func(i int) (serv, lag time.Duration), series bool) *scheduler.Result {
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	var ivs []scheduler.Interval
	var ir, is, il *histo.Recorder
	flush := func(k int) {
		if !series {
			return
		}
		iv := scheduler.Interval{Start: time.Duration(k) * 100 * time.Millisecond, Duration: 100 * time.Millisecond,
			Counts: scheduler.Counts{Scheduled: 100, Sent: 100, Completed: 100}}
		iv.Response, _ = histo.Pack(ir.Snapshot())
		iv.Service, _ = histo.Pack(is.Snapshot())
		if mode == "open" {
			iv.Lag, _ = histo.Pack(il.Snapshot())
		}
		ivs = append(ivs, iv)
	}
	for i := range n {
		if i%100 == 0 {
			if i > 0 {
				flush(i/100 - 1)
			}
			if series {
				ir, is, il = histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
			}
		}
		s, l := f(i)
		rt := s + l
		if mode == "closed" {
			rt = s
		}
		resp.Record(int64(rt))
		serv.Record(int64(s))
		lag.Record(int64(l))
		if series {
			ir.Record(int64(rt))
			is.Record(int64(s))
			il.Record(int64(l))
		}
	}
	flush(n/100 - 1)
	r := &scheduler.Result{
		Name: "GET", Mode: mode, TargetRate: timeline.RatePerSecond(1000),
		Counts:   scheduler.Counts{Scheduled: uint64(n), Sent: uint64(n), Completed: uint64(n)},
		Window:   time.Duration(n) * time.Millisecond,
		Response: resp.Snapshot(), Service: serv.Snapshot(), Lag: lag.Snapshot(),
		LagLimit: time.Millisecond,
		Interval: 100 * time.Millisecond, Intervals: ivs,
	}
	if mode == "closed" {
		r.Service = r.Response
		r.LagLimit = 2 * time.Millisecond
	}
	return r
}

// TightestLatency is the smallest upper latency bound: the send-lag budget
// of an open run follows it.
func TestSLOTightestLatency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec string
		want time.Duration
	}{
		{"p99<=1ms", time.Millisecond},
		{"p99<5ms,p50<=800us,max<1s", 800 * time.Microsecond},
		{"mean<2ms,errors<0.1%", 2 * time.Millisecond},
		{"errors<0.1%,rate>=9500,unsent<1%", 0},
		{"min>10us", 0},                               // a lower bound limits nothing
		{"p50>=1ms,p99<=40ms", 40 * time.Millisecond}, // nor does this one
		{"p99<=0ms", 0},
	} {
		if got := mustSLO(t, c.spec, 0).TightestLatency(); got != c.want {
			t.Errorf("%q: %v, want %v", c.spec, got, c.want)
		}
	}
}

// LoosestLatency bounds a sweep's abort; Metrics are the clauses' metrics.
func TestSLOLoosestLatencyAndMetrics(t *testing.T) {
	t.Parallel()
	s := mustSLO(t, "P99<5ms, p50>=1ms,max<1s,errors<0.1%", 0)
	if got := s.LoosestLatency(); got != time.Second {
		t.Errorf("loosest %v, want 1s", got)
	}
	if got := mustSLO(t, "min>10us,errors<1%", 0).LoosestLatency(); got != 0 {
		t.Errorf("loosest of lower bounds only: %v, want 0", got)
	}
	if got, want := strings.Join(s.Metrics(), ","), "p99,p50,max,errors"; got != want {
		t.Errorf("metrics %s, want %s", got, want)
	}
}

// TestSLOFor: loss and lag are refused outside the message commands, lag
// outside pacer stream, and what each command judges passes; the refusal
// is a usage error that names the clause.
func TestSLOFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec, command string
		refused       bool
	}{
		{"p99<=1ms,errors<1%", "run", false},
		{"loss<=0", "run", true},
		{"lag<=10", "sweep", true},
		{"loss<=0", "pubsub", false},
		{"lag<=10", "pubsub", true},
		{"lag<=10,loss<=0", "stream", false},
	} {
		err := mustSLO(t, c.spec, 0).For(c.command)
		if (err != nil) != c.refused {
			t.Errorf("%s for %s: %v, want refused %v", c.spec, c.command, err, c.refused)
		}
		if err != nil && (!usage.Is(err) || !strings.Contains(err.Error(), "SLO "+strings.SplitN(c.spec, "<", 2)[0]+":")) {
			t.Errorf("%s for %s: %v, want a usage error naming the clause", c.spec, c.command, err)
		}
	}
}
