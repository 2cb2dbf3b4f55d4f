package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a running test whose numbers the test sets.
type fake struct {
	mu       sync.Mutex
	totals   scheduler.Totals
	progress scheduler.Progress
	hists    [numHists]*histo.Recorder
	rate     timeline.Rate
	cmds     []commandSource
	server   serverSnap
	topo     topologySource
}

func (f *fake) Totals() scheduler.Totals {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.totals
}

func (f *fake) Progress() scheduler.Progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.progress
}

func (f *fake) recorders() [numHists]*histo.Recorder { return f.hists }
func (f *fake) target() timeline.Rate                { return f.rate }
func (f *fake) commands() []commandSource            { return f.cmds }
func (f *fake) serverProcess() serverSnap            { return f.server }
func (f *fake) topology() topologySource             { return f.topo }

func newFake(open bool) *fake {
	f := &fake{rate: timeline.RatePerSecond(5000)}
	f.hists[histResponse], f.hists[histService] = histo.NewRecorder(), histo.NewRecorder()
	if open {
		f.hists[histLag] = histo.NewRecorder()
	} else {
		f.rate = timeline.Rate{}
	}
	f.totals = scheduler.Totals{
		Counts:      scheduler.Counts{Scheduled: 1000, Sent: 990, Completed: 970, Errors: 7, Timeouts: 2, Unsent: 10},
		ReplyErrors: 5, ConnErrors: 2, BytesSent: 12345, BytesReceived: 67890,
	}
	f.progress = scheduler.Progress{Elapsed: 3 * time.Second, InFlight: 11, OldestAge: 250 * time.Millisecond}
	return f
}

// scrape serves reg through promhttp (as Exporter does) and decodes the
// answer in the format negotiated by accept.
func scrape(t *testing.T, reg prometheus.Gatherer, accept string) map[string]*dto.MetricFamily {
	t.Helper()
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Accept", accept)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if strings.Contains(accept, "openmetrics") != (format.FormatType() == expfmt.TypeOpenMetrics) {
		t.Fatalf("asked %q, got %q", accept, format)
	}
	if format.FormatType() == expfmt.TypeOpenMetrics && !strings.HasSuffix(string(body), "# EOF\n") {
		t.Fatalf("OpenMetrics without # EOF:\n%s", body)
	}
	dec := expfmt.NewDecoder(strings.NewReader(string(body)), format)
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s does not parse: %v\n%s", format, err, body)
		}
		out[mf.GetName()] = mf
	}
	return out
}

// find returns the metric of family name whose labels include want.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

const (
	acceptText = "text/plain;version=0.0.4"
	acceptOM   = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5"
)

func TestCollectorExposition(t *testing.T) {
	t.Parallel()
	for _, accept := range []string{acceptText, acceptOM} {
		t.Run(strings.Fields(strings.ReplaceAll(accept, ";", " "))[0], func(t *testing.T) {
			c := NewCollector(nil)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			f := newFake(true)
			// 1 ms is inside a recorder slot (999,936 to 1,000,447 ns):
			// 1,000,100 counts within it, the rest of its slot too.
			values := []int64{5_000, 9_999, 10_000, 10_001, 150_000, 999_000, 1_000_000, 1_000_100, 1_000_500, 3_000_000_000, 20_000_000_000}
			for _, v := range values {
				f.hists[histResponse].Record(v)
			}
			f.hists[histService].Record(42_000)
			end := c.watch("GET", ModeOpen, f)
			fams := scrape(t, reg, accept)
			lv := map[string]string{"test": "GET", "mode": "open"}

			counters := map[string]uint64{
				"pacer_requests_scheduled_total": 1000, "pacer_requests_sent_total": 990,
				"pacer_requests_completed_total": 970, "pacer_requests_timeouts_total": 2,
				"pacer_requests_unsent_total": 10, "pacer_sent_bytes_total": 12345, "pacer_received_bytes_total": 67890,
			}
			for name, want := range counters {
				m := find(t, fams, name, lv)
				if m == nil || fams[name].GetType() != dto.MetricType_COUNTER {
					t.Errorf("%s: no counter", name)
					continue
				}
				if got := m.GetCounter().GetValue(); got != float64(want) {
					t.Errorf("%s = %v, want %d", name, got, want)
				}
			}
			for kind, want := range map[string]float64{"reply": 5, "connection": 2} {
				m := find(t, fams, "pacer_requests_errors_total", map[string]string{"test": "GET", "mode": "open", "kind": kind})
				if m == nil || m.GetCounter().GetValue() != want {
					t.Errorf("errors{kind=%s}: %v, want %v", kind, m, want)
				}
			}
			gauges := map[string]float64{
				"pacer_test_running": 1, "pacer_target_requests_per_second": 5000,
				"pacer_requests_in_flight": 11, "pacer_oldest_unanswered_seconds": 0.25,
			}
			for name, want := range gauges {
				m := find(t, fams, name, lv)
				if m == nil || m.GetGauge().GetValue() != want {
					t.Errorf("%s = %v, want %v", name, m, want)
				}
			}
			if m := find(t, fams, "pacer_achieved_requests_per_second", lv); m == nil {
				t.Error("no achieved rate while running")
			}

			// The response histogram: exact counts below each bound.
			m := find(t, fams, "pacer_response_seconds", lv)
			if m == nil {
				t.Fatal("no pacer_response_seconds")
			}
			h := m.GetHistogram()
			if h.GetSampleCount() != uint64(len(values)) {
				t.Errorf("count %d, want %d", h.GetSampleCount(), len(values))
			}
			var sum float64
			for _, v := range values {
				sum += float64(v) / 1e9
			}
			if math.Abs(h.GetSampleSum()-sum)/sum > 1e-3 {
				t.Errorf("sum %v, want %v within 0.1%%", h.GetSampleSum(), sum)
			}
			bounds := DefaultBuckets()
			buckets := h.GetBucket()
			if n := len(buckets); n == len(bounds)+1 && math.IsInf(buckets[n-1].GetUpperBound(), 1) {
				if buckets[n-1].GetCumulativeCount() != h.GetSampleCount() {
					t.Errorf("+Inf bucket %d, count %d", buckets[n-1].GetCumulativeCount(), h.GetSampleCount())
				}
				buckets = buckets[:n-1] // the parser made +Inf explicit
			}
			if len(buckets) != len(bounds) {
				t.Fatalf("%d buckets, want %d", len(buckets), len(bounds))
			}
			for i, b := range buckets {
				if b.GetUpperBound() != bounds[i].Seconds() {
					t.Errorf("bucket %d: le=%v, want %v", i, b.GetUpperBound(), bounds[i].Seconds())
				}
				// A value counts below a bound when its recorder slot
				// starts below it (histo.Recorder.Cumulative).
				var want uint64
				for _, v := range values {
					if f.hists[histResponse].LowestEquivalent(v) < int64(bounds[i]) {
						want++
					}
				}
				if b.GetCumulativeCount() != want {
					t.Errorf("le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
				}
			}
			if s := find(t, fams, "pacer_service_seconds", lv); s == nil || s.GetHistogram().GetSampleCount() != 1 {
				t.Errorf("service histogram %v, want one sample", s)
			}
			if s := find(t, fams, "pacer_send_lag_seconds", lv); s == nil || s.GetHistogram().GetSampleCount() != 0 {
				t.Errorf("send lag histogram %v, want present and empty", s)
			}

			// Ended: counters and histograms stay, the gauges of a running
			// test go, running is 0.
			end()
			end() // twice is harmless
			fams = scrape(t, reg, accept)
			if m := find(t, fams, "pacer_test_running", lv); m == nil || m.GetGauge().GetValue() != 0 {
				t.Errorf("running after the end: %v", m)
			}
			for _, name := range []string{"pacer_target_requests_per_second", "pacer_achieved_requests_per_second", "pacer_requests_in_flight", "pacer_oldest_unanswered_seconds"} {
				if find(t, fams, name, lv) != nil {
					t.Errorf("%s still exposed after the end", name)
				}
			}
			if m := find(t, fams, "pacer_response_seconds", lv); m == nil || m.GetHistogram().GetSampleCount() != uint64(len(values)) {
				t.Errorf("response histogram after the end: %v", m)
			}
		})
	}
}

// TestCollectorTestsAndRepeats: consecutive tests get their own labels; a
// test that runs again under the same labels adds to what it had (bench
// -l), so counters never go down; closed mode has no send lag.
func TestCollectorTestsAndRepeats(t *testing.T) {
	c := NewCollector(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	get, set := newFake(false), newFake(false)
	get.hists[histResponse].Record(1000)
	c.watch("GET", ModeClosed, get)()
	endSet := c.watch("SET", ModeClosed, set)
	fams := scrape(t, reg, acceptText)
	for _, test := range []string{"GET", "SET"} {
		m := find(t, fams, "pacer_requests_completed_total", map[string]string{"test": test, "mode": "closed"})
		if m == nil || m.GetCounter().GetValue() != 970 {
			t.Errorf("%s completed: %v", test, m)
		}
	}
	if find(t, fams, "pacer_target_requests_per_second", map[string]string{"test": "SET"}) != nil {
		t.Error("an unthrottled closed loop has a target rate")
	}
	if fams["pacer_send_lag_seconds"] != nil {
		t.Error("closed mode exposes a send lag")
	}
	endSet()
	again := newFake(false)
	again.hists[histResponse].Record(2000)
	endAgain := c.watch("GET", ModeClosed, again)
	fams = scrape(t, reg, acceptText)
	lv := map[string]string{"test": "GET", "mode": "closed"}
	if m := find(t, fams, "pacer_requests_completed_total", lv); m == nil || m.GetCounter().GetValue() != 2*970 {
		t.Errorf("GET completed after a second run: %v, want %d", m, 2*970)
	}
	if m := find(t, fams, "pacer_response_seconds", lv); m == nil || m.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("GET response histogram after a second run: %v, want 2 samples", m)
	}
	if m := find(t, fams, "pacer_test_running", lv); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("GET running again: %v", m)
	}
	endAgain()
	if n := len(fams["pacer_requests_completed_total"].GetMetric()); n != 2 {
		t.Errorf("%d label sets, want 2 (GET, SET)", n)
	}
}

func TestCollectorLint(t *testing.T) {
	c := NewCollector(nil)
	f := newFake(true)
	f.hists[histResponse].Record(123456)
	defer c.watch("GET", ModeOpen, f)()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestDefaultBuckets: the bounds the docs list, with every common SLO
// bound among them, ascending, and each bucket at most a third wider
// than the one below it from 50 µs to 1 s (what keeps histogram_quantile
// close to the recorders' percentiles).
func TestDefaultBuckets(t *testing.T) {
	got := DefaultBuckets()
	var want []time.Duration
	for _, us := range []float64{10, 20, 50, 60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800,
		1e3, 1.2e3, 1.5e3, 2e3, 2.5e3, 3e3, 4e3, 5e3, 6e3, 8e3, 1e4, 1.2e4, 1.5e4, 2e4, 2.5e4, 3e4, 4e4, 5e4, 6e4, 8e4,
		1e5, 1.2e5, 1.5e5, 2e5, 2.5e5, 3e5, 4e5, 5e5, 6e5, 8e5, 1e6, 2e6, 5e6, 1e7} {
		want = append(want, time.Duration(us*1e3))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("DefaultBuckets:\n%v\nwant (the docs' list)\n%v", got, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= 50*time.Microsecond && got[i] <= time.Second && float64(got[i]) > float64(got[i-1])*4/3+1 {
			t.Errorf("%v after %v: more than a third wider", got[i], got[i-1])
		}
	}
}

func TestParseBuckets(t *testing.T) {
	good := map[string][]time.Duration{
		"1ms,2ms,5ms":         {time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond},
		" 5ms, 1ms ,2ms,1ms ": {time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond},
		"1us,1h":              {time.Microsecond, time.Hour},
		"1.5ms,250µs":         {250 * time.Microsecond, 1500 * time.Microsecond},
	}
	for in, want := range good {
		got, err := ParseBuckets(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseBuckets(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                  "want durations",
		"1,2,5":                             `"1": want a duration with its unit`,
		"1ms,,2ms":                          `"": want a duration`,
		"999ns":                             "want a bound from 1µs to 1h0m0s",
		"2h":                                "want a bound from",
		"-1ms":                              "want a bound from",
		strings.Repeat("1ms,", 200) + "1ms": "201 bounds: at most 200",
		"1ms," + strings.Repeat("x", 100):   `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"`,
	}
	for in, want := range bad {
		if _, err := ParseBuckets(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBuckets(%.40q): %v, want an error with %q", in, err, want)
		}
	}
}

// TestCollectorBuckets: the histograms have the bounds asked for.
func TestCollectorBuckets(t *testing.T) {
	bounds := []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}
	c := NewCollector(bounds)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	f := newFake(true)
	for _, v := range []int64{500_000, 1_500_000, 1_900_000, 4_000_000, 7_000_000} {
		f.hists[histResponse].Record(v)
	}
	defer c.watch("GET", ModeOpen, f)()
	m := find(t, scrape(t, reg, acceptText), "pacer_response_seconds", map[string]string{"test": "GET"})
	if m == nil {
		t.Fatal("no pacer_response_seconds")
	}
	var got []string
	for _, b := range m.GetHistogram().GetBucket() {
		got = append(got, fmt.Sprintf("%v:%d", b.GetUpperBound(), b.GetCumulativeCount()))
	}
	if want := "0.001:1 0.002:3 0.005:4"; strings.Join(got, " ") != want && strings.Join(got, " ") != want+" +Inf:5" {
		t.Errorf("buckets %v, want %s", got, want)
	}
}

func TestWindowRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := newWindow(t0, 0)
	// During the first second: since the start.
	if got := w.rate(at(500), 250); got != 500 {
		t.Errorf("after 0.5 s: %v/s, want 500", got)
	}
	// Samples every 200 ms at 1000/s, then a stop at 1.6 s.
	for ms := 200; ms <= 1600; ms += 200 {
		w.add(at(ms), uint64(ms))
	}
	for ms := 1800; ms <= 2400; ms += 200 {
		w.add(at(ms), 1600)
	}
	// At 2.5 s: from the newest sample ≥ 1 s old (1.4 s, 1400) to 1600.
	if got, want := w.rate(at(2500), 1600), 200/1.1; math.Abs(got-want) > 1e-9 {
		t.Errorf("at 2.5 s: %v/s, want %v", got, want)
	}
	if n := len(w.samples); n > 7 {
		t.Errorf("%d samples kept, want at most 7 (1.2 s of 200 ms ticks)", n)
	}
	if got := w.rate(at(3700), 1600); got != 0 {
		t.Errorf("stopped: %v/s, want 0", got)
	}
}

func TestListen(t *testing.T) {
	for _, bad := range []string{"9464", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "127.0.0.1:-1", "[::1:9464"} {
		if _, err := Listen(Config{Addr: bad}); err == nil || CheckAddr(bad) == nil {
			t.Errorf("Listen(%q) accepted", bad)
		}
	}
	s, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := Listen(Config{Addr: s.Addr()}); !errors.Is(err, ErrAddrInUse) {
		t.Errorf("second Listen on %s: %v, want ErrAddrInUse", s.Addr(), err)
	}
	f := newFake(true)
	end := s.Collector.watch("GET", ModeOpen, f)
	defer end()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.Addr() + Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	testrun.Contains(t, string(body), `pacer_requests_completed_total{mode="open",shard="",target="",test="GET"} 970`, "process_cpu_seconds_total", "go_goroutines")
	if resp, err := client.Get("http://" + s.Addr() + "/other"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("/other: %s", resp.Status)
		}
	}
	// A scrape keeps its connection open; Close must still return.
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
}
