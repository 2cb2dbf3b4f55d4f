package metrics

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/histo"
)

// TestLabelsScopeAndBinaryNames: target and shard label the tests watched
// after SetScope; a test name that is not UTF-8 (a binary key) is served
// escaped instead of failing every scrape; a long name is cut, and two
// long names stay two label sets.
func TestLabelsScopeAndBinaryNames(t *testing.T) {
	t.Parallel()
	c := NewCollector(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	c.SetScope("/tmp/redis\xff.sock", "2/3")
	defer c.watch("SET k\xff\xfe\x01 v", ModeOpen, newFake(true))()
	for _, accept := range []string{acceptText, acceptOM} {
		fams := scrape(t, reg, accept)
		want := map[string]string{"test": `SET k\xff\xfe\x01 v`, "mode": "open", "target": `/tmp/redis\xff.sock`, "shard": "2/3"}
		if m := find(t, fams, "pacer_requests_completed_total", want); m == nil || m.GetCounter().GetValue() != 970 {
			t.Errorf("%s: no series %v: %v", accept, want, fams["pacer_requests_completed_total"])
		}
	}
	// (The OpenMetrics parser of the tests takes seconds over long labels.)
	long := strings.Repeat("SET key ", 100)
	defer c.watch(long+"a", ModeOpen, newFake(true))()
	defer c.watch(long+"b", ModeOpen, newFake(true))()
	names := map[string]bool{}
	for _, m := range scrape(t, reg, acceptText)["pacer_requests_completed_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "test" {
				names[lp.GetValue()] = true
				if len(lp.GetValue()) > maxLabel {
					t.Errorf("test label of %d bytes, want at most %d", len(lp.GetValue()), maxLabel)
				}
			}
		}
	}
	if len(names) != 3 {
		t.Errorf("test labels %v, want three", names)
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"GET":                    "GET",
		"SET k\xff v":            `SET k\xff v`,
		"a\nb\x1b[31m":           `a\x0ab\x1b[31m`,
		"héllo ✓":                "héllo ✓",
		strings.Repeat("é", 200): strings.Repeat("é", 90) + "…#",
	} {
		got := labelValue(in)
		if !strings.HasPrefix(got, want) || (!strings.HasSuffix(want, "#") && got != want) {
			t.Errorf("labelValue(%.20q) = %q, want %q", in, got, want)
		}
		if len(got) > maxLabel {
			t.Errorf("labelValue(%.20q): %d bytes", in, len(got))
		}
	}
}

// TestCommandSeries: a mix's commands are served as pacer_command_* with
// a command label, beside (not inside) the test's families; a second run
// of the test adds to them by name.
func TestCommandSeries(t *testing.T) {
	c := NewCollector(nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mix := func(getDone, setDone uint64) *fake {
		f := newFake(true)
		get, set := histo.NewRecorder(), histo.NewRecorder()
		get.Record(100_000)
		set.Record(3_000_000)
		f.cmds = []commandSource{
			{name: "GET", completed: func() uint64 { return getDone }, replyErrors: func() uint64 { return 1 }, recs: [numCmdHists]*histo.Recorder{get, get, nil, get}},
			{name: "SET", completed: func() uint64 { return setDone }, replyErrors: func() uint64 { return 0 }, recs: [numCmdHists]*histo.Recorder{set, set, nil, set}},
		}
		return f
	}
	c.watch("mix", ModeOpen, mix(600, 370))()
	fams := scrape(t, reg, acceptText)
	for cmd, want := range map[string]float64{"GET": 600, "SET": 370} {
		lv := map[string]string{"test": "mix", "command": cmd}
		if m := find(t, fams, "pacer_command_requests_completed_total", lv); m == nil || m.GetCounter().GetValue() != want {
			t.Errorf("%s completed: %v, want %v", cmd, m, want)
		}
		if m := find(t, fams, "pacer_command_response_seconds", lv); m == nil || m.GetHistogram().GetSampleCount() != 1 {
			t.Errorf("%s response: %v", cmd, m)
		}
	}
	if m := find(t, fams, "pacer_command_requests_errors_total", map[string]string{"command": "GET", "kind": "reply"}); m == nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("GET errors: %v", m)
	}
	if fams["pacer_command_send_lag_seconds"] != nil {
		t.Error("a send lag without a recorder")
	}
	for _, m := range fams["pacer_requests_completed_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "command" {
				t.Errorf("the test's family has a command label: %v", m)
			}
		}
	}
	defer c.watch("mix", ModeOpen, mix(10, 20))()
	fams = scrape(t, reg, acceptText)
	if m := find(t, fams, "pacer_command_requests_completed_total", map[string]string{"command": "SET"}); m == nil || m.GetCounter().GetValue() != 390 {
		t.Errorf("SET after a second run: %v, want 390", m)
	}
	if m := find(t, fams, "pacer_command_response_seconds", map[string]string{"command": "GET"}); m == nil || m.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("GET response after a second run: %v, want 2 samples", m)
	}
}

// panicky is a collector that fails as a bad label value once did.
type panicky struct{}

func (panicky) Describe(ch chan<- *prometheus.Desc) {}
func (panicky) Collect(ch chan<- prometheus.Metric) {
	panic("label value \"x\\xff\" is not valid UTF-8")
}

// TestErrorsAreOneLine: a failed scrape is a 500 whose body is one line,
// without the collector's stack or a source path; so is a handler's panic.
func TestErrorsAreOneLine(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(panicky{})
	mux := http.NewServeMux()
	mux.Handle("/gather", oneLineErrors(promhttpHandler(reg)))
	mux.Handle("/panic", oneLineErrors(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for _, path := range []string{"/gather", "/panic"} {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || string(body) != errorLine {
			t.Errorf("%s: %s %q, want 500 %q", path, resp.Status, body, errorLine)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "127.1.2.3:1": true, "[::1]:1": true,
		"0.0.0.0:1": false, "[::]:1": false, "192.0.2.1:1": false} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := isLoopback(a); got != want {
			t.Errorf("isLoopback(%s) = %v", addr, got)
		}
	}
	s, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Loopback() {
		t.Errorf("%s: not loopback", s.Addr())
	}
}

// TestConnectionLimit: a flood of idle connections holds at most MaxConns
// of the process's descriptors, and a scrape still gets through: the
// oldest idle connection makes room for it.
func TestConnectionLimit(t *testing.T) {
	const max = 8
	s, err := Listen(Config{Addr: "127.0.0.1:0", MaxConns: max})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 100 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	half := []byte("GET /metrics HTTP/1.1\r\nHost: x\r\n") // a request never finished
	idle[99].Write(half)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for i := range 3 {
		resp, err := client.Get("http://" + s.Addr() + Path)
		if err != nil {
			t.Fatalf("scrape %d under the flood: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "go_goroutines") {
			t.Fatalf("scrape %d: %s", i, resp.Status)
		}
	}
	if n := s.ln.open(); n > max {
		t.Errorf("%d connections held, want at most %d", n, max)
	}
	if n := s.ln.shed.Load(); n < 100-max {
		t.Errorf("%d connections closed to make room, want at least %d", n, 100-max)
	}
}

// TestLimitKeepsServedConnections: a connection whose request is being
// served is never closed to make room; a newcomer is, when all are.
func TestLimitKeepsServedConnections(t *testing.T) {
	l := newLimitListener(nil, 2)
	a, b, c := fakeConn(1), fakeConn(2), fakeConn(3)
	if !l.admit(a) || !l.admit(b) {
		t.Fatal("room refused")
	}
	doneA := l.serve(a)
	doneB := l.serve(b)
	if l.admit(c) {
		t.Error("admitted past the limit with every connection served")
	}
	doneB()
	if !l.admit(c) {
		t.Error("no room made from an idle connection")
	}
	if _, ok := l.conns[a]; !ok {
		t.Error("the served connection was closed")
	}
	if _, ok := l.conns[b]; ok {
		t.Error("the idle connection was kept")
	}
	doneA()
}

// fakeConn is a distinct net.Conn that closes without error.
type fakeConn int

func (fakeConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (fakeConn) Write(p []byte) (int, error)      { return len(p), nil }
func (fakeConn) Close() error                     { return nil }
func (fakeConn) LocalAddr() net.Addr              { return nil }
func (fakeConn) RemoteAddr() net.Addr             { return nil }
func (fakeConn) SetDeadline(time.Time) error      { return nil }
func (fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (fakeConn) SetWriteDeadline(time.Time) error { return nil }

// TestLinger: Linger waits Config.Linger after a watched test, says so
// first, and ends early with its context; it does not wait for a nil
// Exporter, an interrupted run or an endpoint that served no test.
func TestLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var nilExporter *Exporter
		nilExporter.Linger(context.Background(), func(time.Duration) { t.Error("a nil Exporter lingers") })
		nilExporter.SetScope("x", "y")

		s := &Exporter{Collector: NewCollector(nil), linger: time.Minute}
		s.Linger(context.Background(), func(time.Duration) { t.Error("lingers with no test served") })
		s.Collector.watch("GET", ModeOpen, newFake(true))()

		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		s.Linger(cancelled, func(time.Duration) { t.Error("an interrupted run lingers") })

		var noted time.Duration
		start := time.Now()
		s.Linger(context.Background(), func(d time.Duration) { noted = d })
		if noted != time.Minute || time.Since(start) != time.Minute {
			t.Errorf("noted %v, waited %v; want a minute each", noted, time.Since(start))
		}

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		s.Linger(ctx, nil)
		if time.Since(start) != time.Second {
			t.Errorf("waited %v after the context ended at 1 s", time.Since(start))
		}
	})
}
