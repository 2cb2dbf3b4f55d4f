package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/metrics"
)

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestMetricsAddrErrors(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cmds := map[string][]string{
		"run":     {"run", "--embedded", "--rate", "1k", "--duration", "1s"},
		"bench":   {"bench", "--embedded", "-n", "10"},
		"compare": {"compare", "--embedded", "--duration", "1s"},
		"fill":    {"fill", "-r", "10", "-p", "1"},
	}
	cases := []struct{ addr, want string }{
		{"9464", "want HOST:PORT"},
		{"127.0.0.1:99999", "want 0 to 65535"},
		{"127.0.0.1:http", `port "http"`},
		{held.Addr().String(), "the port is in use"},
		{"192.0.2.1:9464", "cannot listen"}, // TEST-NET-1: no interface has it
	}
	for name, args := range cmds {
		for _, tc := range cases {
			code, stdout, stderr := pacer(t, append(args, "--metrics-addr", tc.addr)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "pacer: --metrics-addr") ||
				strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
				t.Errorf("%s --metrics-addr %s: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q",
					name, tc.addr, code, stderr, stdout, tc.want)
			}
		}
	}
}

// stillServed reports whether pacer's metrics are still served at addr.
// A bare connection would not say: once the command has closed its
// listener, a test running beside it may be given the same port.
func stillServed(addr string) bool {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return strings.Contains(string(body), "pacer_")
}

// scrapeWhile polls http://addr/metrics until done is closed and returns
// every distinct sample line of metric name seen, label sets only.
func scrapeWhile(addr, name string, done <-chan struct{}) map[string]bool {
	seen := map[string]bool{}
	re := regexp.MustCompile(`(?m)^` + name + `(\{[^}]*\}) `)
	pollMetrics(addr, done, func(_ int, body string) {
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			seen[m[1]] = true
		}
	})
	return seen
}

// pollMetrics scrapes http://addr/metrics every 100 ms until done is
// closed, handing each answer's status and body to each.
// backgroundPacer is a pacer command running on a goroutine of its own,
// for a test that watches it while it runs (its metrics, its files).
type backgroundPacer struct {
	done   chan struct{} // closed when the command has returned
	code   int
	stderr string
}

func startPacer(t *testing.T, args ...string) *backgroundPacer {
	b := &backgroundPacer{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.code, _, b.stderr = pacer(t, args...)
	}()
	return b
}

// wait returns the command's exit code and stderr once it has returned.
func (b *backgroundPacer) wait() (int, string) {
	<-b.done
	return b.code, b.stderr
}

func pollMetrics(addr string, done <-chan struct{}, each func(status int, body string)) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	for {
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		each(resp.StatusCode, string(body))
	}
}

// saw reports whether one of the label sets seen has every label of want
// (each written name="value").
func saw(seen map[string]bool, want ...string) bool {
next:
	for labels := range seen {
		for _, w := range want {
			if !strings.Contains(labels, w) {
				continue next
			}
		}
		return true
	}
	return false
}

// TestMetricsCompareRuns: compare's closed run and each open run get
// their own test label, and the server is gone when the command ends.
func TestMetricsCompareRuns(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	cmp := startPacer(t, "compare", "--embedded", "--duration", "1s", "-c", "4", "--rate", "2k", "-q", "--metrics-addr", addr)
	seen := scrapeWhile(addr, "pacer_requests_completed_total", cmp.done)
	code, stderr := cmp.wait()
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "metrics on http://"+addr+"/metrics") {
		t.Errorf("stderr does not say where the metrics are: %q", stderr)
	}
	for _, want := range [][]string{
		{`mode="closed"`, `test="GET (closed loop)"`, `shard=""`, `target="127.0.0.1:`},
		{`mode="open"`, `test="GET (open loop at 2000 req/s)"`, `shard=""`, `target="127.0.0.1:`},
	} {
		if !saw(seen, want...) {
			t.Errorf("never scraped pacer_requests_completed_total with %v; saw %v", want, seen)
		}
	}
	if stillServed(addr) {
		t.Errorf("%s still serves pacer's metrics after the command", addr)
	}
}

// startPrometheus runs Prometheus on a free loopback port, scraping
// target every second, with its storage in a temporary directory; it is
// stopped when the test ends. It returns Prometheus's base URL and its
// directory (prometheus.log is there).
func startPrometheus(t *testing.T, target string) (string, string) {
	t.Helper()
	bin := reference.Prometheus(t)
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: pacer
    static_configs:
      - targets: ['%s']
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen,
		"--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// .ci/run stops a Prometheus that a crashed test leaves behind by this file.
	if err := os.WriteFile(filepath.Join(dir, "prometheus.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + listen
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus exited: %s", log)
		default:
		}
		// Ready, and the target discovered (Prometheus passes discovered
		// targets on after up to 5 s): its scrapes begin within a second.
		if resp, err := client.Get(base + "/api/v1/targets?state=active"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"scrapeUrl":"http://`+target+`/metrics"`) {
				return base, dir
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus has not taken up its target after 60 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promQuery evaluates an instant PromQL query and returns its vector's
// values by their labels.
func promQuery(t *testing.T, base, query string) map[string]float64 {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if r.Status != "success" || r.Data.ResultType != "vector" {
		t.Fatalf("%s: status %s, type %s: %s", query, r.Status, r.Data.ResultType, r.Error)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("%s: value %v", query, s.Value)
		}
		out[fmt.Sprint(s.Metric)] = v
	}
	return out
}

// TestMetricsPrometheus: a real Prometheus scrapes pacer every second.
// With --metrics-linger its last scrape has the run's final numbers: the
// JSON's completed count exactly, pacer_test_running 0, every bucket the
// count the JSON's histogram has below its bound, and a histogram_quantile
// p99 within the JSON's values. A second run, sharded and named after
// a binary key, is scraped with its shard label and its name escaped.
func TestMetricsPrometheus(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "starts Prometheus and runs for seconds")
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	base, promDir := startPrometheus(t, addr)
	dir := t.TempDir()
	// The embedded target serves one command at a time with exponential
	// service times of mean 0.5 ms: at 500/s, a p99 of a few ms.
	code, stdout, stderr := pacer(t, "run", "--embedded", "--delay", "exp:500us", "--rate", "500", "--duration", "5s", "-t", "get", "-c", "4", "-q",
		"--json", filepath.Join(dir, "run.json"), "--metrics-addr", addr, "--metrics-linger", "3s")
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	var doc struct {
		Tests []struct {
			Counts struct {
				Completed uint64 `json:"completed"`
			} `json:"counts"`
			Response struct {
				P99 float64 `json:"p99"`
			} `json:"response_ms"`
			Histograms struct {
				Response string `json:"response"`
			} `json:"histograms"`
		} `json:"tests"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Tests) != 1 {
		t.Fatalf("run.json: %v, %d tests", err, len(doc.Tests))
	}
	want := doc.Tests[0]
	// The server is gone, so Prometheus has marked the series stale: take
	// the last sample, the lingering endpoint's.
	sel := `{job="pacer",test="GET",mode="open",shard=""}`
	one := func(query string) (string, float64) {
		t.Helper()
		got := promQuery(t, base, query)
		if len(got) != 1 {
			log, _ := os.ReadFile(filepath.Join(promDir, "prometheus.log"))
			t.Fatalf("%s: %v, want one series (prometheus log: %s)", query, got, log)
		}
		for labels, v := range got {
			return labels, v
		}
		return "", 0
	}
	labels, completed := one("last_over_time(pacer_requests_completed_total" + sel + "[5m])")
	if completed != float64(want.Counts.Completed) {
		t.Errorf("last scrape: completed %v, want the JSON's %d", completed, want.Counts.Completed)
	}
	if !strings.Contains(labels, "target:127.0.0.1:") {
		t.Errorf("labels %s: no target", labels)
	}
	if _, running := one("last_over_time(pacer_test_running" + sel + "[5m])"); running != 0 {
		t.Errorf("last scrape: pacer_test_running %v, want 0", running)
	}
	// Every bucket of the last scrape holds what the JSON's histogram has
	// below its bound. A value counts below a bound B when the recorder
	// slot it landed in starts below B, and a slot is at most 0.1% of its
	// value wide (docs/outputs.md): so at least the values below B, at most
	// those below B·1.001. Exact, so no load can flip it, where comparing
	// percentiles could: histogram_quantile guesses inside a bucket, and
	// on a stalled machine the tail is a few samples far apart.
	jh := reference.Histogram(t, want.Histograms.Response)
	bars := jh.Distribution()
	leOf := regexp.MustCompile(`\ble:([^ \]]+)`)
	buckets := promQuery(t, base, "last_over_time(pacer_response_seconds_bucket"+sel+"[5m])")
	if len(buckets) != len(metrics.DefaultBuckets())+1 {
		t.Fatalf("%d bucket series, want %d bounds and +Inf", len(buckets), len(metrics.DefaultBuckets()))
	}
	for labels, got := range buckets {
		m := leOf.FindStringSubmatch(labels)
		if m == nil {
			t.Fatalf("bucket without le: %s", labels)
		}
		bound, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("le %q: %v", m[1], err)
		}
		b := bound * 1e9 // ns, as the histogram holds them
		var lo, hi float64
		for _, bar := range bars {
			if float64(bar.To) < b {
				lo += float64(bar.Count)
			}
			if float64(bar.From) < b*1.001 {
				hi += float64(bar.Count)
			}
		}
		if got < lo || got > hi {
			t.Errorf("bucket le=%s holds %v, the JSON's histogram %v to %v", m[1], got, lo, hi)
		}
	}
	// Prometheus's estimate is read from those buckets: it lies within the
	// JSON's range. How close it comes to the JSON's p99 is measured by
	// bench/promquantile, not asserted here.
	_, p99 := one("histogram_quantile(0.99, last_over_time(pacer_response_seconds_bucket" + sel + "[5m]))")
	p99ms := p99 * 1e3
	t.Logf("p99: Prometheus %.3f ms, JSON %.3f ms", p99ms, want.Response.P99)
	if minMs, maxMs := float64(jh.Min())/1e6, float64(jh.Max())/1e6; p99ms < minMs*0.999 || p99ms > maxMs*1.001 {
		t.Errorf("histogram_quantile p99 %.3f ms outside the JSON's values, %.3f to %.3f ms", p99ms, minMs, maxMs)
	}

	code, stdout, stderr = pacer(t, "run", "--embedded", "--rate", "200", "--duration", "2s", "-c", "2", "-q",
		"--shard", "2/3", "--seed", "7", "--json", filepath.Join(dir, "shard.json"),
		"--metrics-addr", addr, "--metrics-linger", "3s", "--", "SET", "k\xff\xfe", "v")
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("sharded run: exit %d: %s %s", code, stdout, stderr)
	}
	shard := readDoc(t, filepath.Join(dir, "shard.json"))
	labels, completed = one(`last_over_time(pacer_requests_completed_total{job="pacer",shard="2/3"}[5m])`)
	if !strings.Contains(labels, `test:SET k\xff\xfe v`) || completed != float64(shard.Tests[0].Counts["completed"]) {
		t.Errorf("sharded run: %s = %v, want test SET k\\xff\\xfe v and the JSON's %d", labels, completed, shard.Tests[0].Counts["completed"])
	}
}

// TestMetricsBenchAndFill: bench's consecutive tests get their own test
// label (with the target of a throttled loop), and fill is served too.
func TestMetricsBenchAndFill(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "runs bench and fill for seconds with metrics")
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	bench := startPacer(t, "bench", "--embedded", "-t", "get,set", "-n", "1000", "--rate", "2k", "-c", "2", "-q", "--metrics-addr", addr)
	seen := scrapeWhile(addr, "pacer_target_requests_per_second", bench.done)
	code, stderr := bench.wait()
	// A throttled loop that fell behind its rate is generator_behind (4).
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	for _, want := range [][]string{
		{`mode="closed"`, `test="GET [closed loop at 2000 req/s]"`},
		{`mode="closed"`, `test="SET [closed loop at 2000 req/s]"`},
	} {
		if !saw(seen, want...) {
			t.Errorf("bench: never scraped pacer_target_requests_per_second with %v; saw %v", want, seen)
		}
	}

	srv := redistest.Start(t)
	fill := startPacer(t, append(append([]string{"fill"}, hostPort(t, srv.Addr)...), "-r", "20000", "-c", "1", "-P", "1", "--metrics-addr", addr)...)
	seen = scrapeWhile(addr, "pacer_requests_completed_total", fill.done)
	code, stderr = fill.wait()
	if code != exitOK {
		t.Fatalf("fill: exit %d: %s", code, stderr)
	}
	if !saw(seen, `mode="closed"`, `test="fill"`, `target="`+srv.Addr+`"`) {
		t.Errorf("fill: never scraped pacer_requests_completed_total with mode closed, test fill and target %s; saw %v", srv.Addr, seen)
	}
}

func TestMetricsFlagErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-buckets", "1ms,2ms"}, "--metrics-buckets needs --metrics-addr"},
		{[]string{"--metrics-linger", "5s"}, "--metrics-linger needs --metrics-addr"},
		{[]string{"--metrics-addr", "127.0.0.1:0", "--metrics-buckets", "1,2,5"}, `--metrics-buckets: "1": want a duration with its unit`},
		{[]string{"--metrics-addr", "127.0.0.1:0", "--metrics-buckets", "0ms"}, "--metrics-buckets: 0ms: want a bound from"},
		{[]string{"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, "--metrics-linger -1s: want a duration of 0 or more"},
	}
	for _, tc := range cases {
		wantUsageError(t, tc.want, append([]string{"run", "--embedded", "--rate", "1k", "--duration", "1s"}, tc.args...)...)
	}
}

// TestMetricsBinaryTestName: a test named after a binary key (not UTF-8)
// is served under its escaped name, and every scrape answers 200.
func TestMetricsBinaryTestName(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	run := startPacer(t, "run", "--embedded", "--rate", "200", "--duration", "2s", "-c", "2", "-q",
		"--metrics-addr", addr, "--", "SET", "k\xff\xfe", "v")
	scrapes, named := 0, false
	pollMetrics(addr, run.done, func(status int, body string) {
		scrapes++
		if status != http.StatusOK {
			t.Fatalf("scrape: %d: %q", status, body)
		}
		named = named || strings.Contains(body, `test="SET k\\xff\\xfe v"`)
	})
	if code, stderr := run.wait(); code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if scrapes == 0 || !named {
		t.Errorf("%d scrapes, escaped test name seen: %v", scrapes, named)
	}
}

// TestMetricsLinger: with --metrics-linger the endpoint outlives the run,
// serving its final counts with pacer_test_running 0.
func TestMetricsLinger(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	doc, body, wait := scrapeLingering(t, addr, "run", "--embedded", "--rate", "500", "--duration", "1s", "-c", "2", "-t", "get", "-q",
		"--metrics-addr", addr, "--metrics-linger", "5s")
	want := []string{
		fmt.Sprintf(`pacer_requests_completed_total{mode="open",shard="",target="127.0.0.1:`),
		fmt.Sprintf(`,test="GET"} %d`+"\n", doc.Tests[0].Counts["completed"]),
		`pacer_test_running{mode="open",shard="",target="127.0.0.1:`,
		`,test="GET"} 0` + "\n",
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("lingering endpoint lacks %q:\n%s", w, body)
		}
	}
	code, stderr := wait()
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "pacer: serving the final metrics for 5s (--metrics-linger; Ctrl-C ends it)\n") {
		t.Errorf("stderr does not say why pacer waits: %q", stderr)
	}
	if stillServed(addr) {
		t.Errorf("%s still serves pacer's metrics after the linger", addr)
	}
}

// TestMetricsLingerEndsOnCtrlC: the first Ctrl-C ends the linger at once;
// the results were complete, so they are not marked interrupted.
func TestMetricsLingerEndsOnCtrlC(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "run.json")
	cmd, _, stderr := startBinary(t, nil, "run", "--embedded", "--rate", "500", "--duration", "1s", "-c", "2", "-t", "get", "-q",
		"--json", out, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "10m")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "serving the final metrics") {
		if time.Now().After(deadline) {
			t.Fatalf("no linger after 60 s: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	code, _ := waitFor(t, cmd, 10*time.Second)
	doc := readDoc(t, out)
	if doc.Interrupted || len(doc.Tests) != 1 || doc.Tests[0].Counts["completed"] == 0 {
		t.Errorf("result after a Ctrl-C in the linger: %+v", doc)
	}
	// A run that exited 0 stays 0; one that was untrusted (4) reads as
	// interrupted (130), as app.go ranks a signal over any failure.
	if code != exitOK && code != exitInterrupted {
		t.Errorf("exit %d, want 0 (or 130)", code)
	}
}

// TestMetricsConnectionFlood: thousands of idle connections to the metrics
// port, under a descriptor limit the flood alone would exhaust, cost the
// run none of its own connections: every test dials its 100 and completes
// every request.
func TestMetricsConnectionFlood(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "runs the binary against redis-server for seconds")
	srv := redistest.Start(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	out := filepath.Join(t.TempDir(), "run.json")
	args := append(append([]string{"run"}, hostPort(t, srv.Addr)...), "-t", "get,set,incr", "--rate", "1k", "--duration", "2s", "-c", "100", "-q",
		"--json", out, "--metrics-addr", addr)
	// 400 descriptors: the run's 100 connections and the endpoint's 64
	// fit; the flood's 2,000 do not.
	cmd, _, stderr := startBinary(t, func(cmd *exec.Cmd) {
		sh := exec.Command("sh", append([]string{"-c", `ulimit -n 400 && exec "$0" "$@"`}, cmd.Args...)...)
		cmd.Path, cmd.Args, cmd.Err = sh.Path, sh.Args, sh.Err
	}, args...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics endpoint after 30 s: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range 2000 {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			flood = append(flood, c)
		}
	}
	code, _ := waitFor(t, cmd, 2*time.Minute)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d under a flood of %d connections: %s", code, len(flood), stderr.String())
	}
	doc := readJSON[struct {
		Tests []struct {
			Name        string            `json:"name"`
			Connections int               `json:"connections"`
			Lost        int               `json:"connections_lost"`
			Counts      map[string]uint64 `json:"counts"`
		} `json:"tests"`
	}](t, out)
	if len(doc.Tests) != 3 {
		t.Fatalf("%d tests, want 3", len(doc.Tests))
	}
	for _, ts := range doc.Tests {
		if ts.Connections != 100 || ts.Lost != 0 || ts.Counts["completed"] != ts.Counts["scheduled"] || ts.Counts["scheduled"] == 0 {
			t.Errorf("%s: %d connections, %d lost, counts %v; want 100, none lost, every request completed", ts.Name, ts.Connections, ts.Lost, ts.Counts)
		}
	}
}

// TestMetricsCommandsOfAMix: a mix's commands have series of their own
// (pacer_command_*, command= the mix's name for it, as in the JSON's
// commands), which add up to the test's, and the
// final scrape (kept by --metrics-linger) holds the run's final counts,
// scheduled included.
func TestMetricsCommandsOfAMix(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	doc, body, wait := scrapeLingering(t, addr, "run", "--embedded", "--rate", "500", "--duration", "1s", "-c", "2", "--mix", "get:3,set:1", "-r", "100", "-q",
		"--metrics-addr", addr, "--metrics-linger", "3s")
	wait()
	value := func(prefix string) (float64, bool) {
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, prefix) {
				var v float64
				if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
					return v, true
				}
			}
		}
		return 0, false
	}
	total, ok := value(`pacer_requests_completed_total{`)
	get, okGet := value(`pacer_command_requests_completed_total{command="get"`)
	set, okSet := value(`pacer_command_requests_completed_total{command="set"`)
	if !ok || !okGet || !okSet || get+set != total || get == 0 || set == 0 {
		t.Errorf("completed: test %v, GET %v, SET %v (found %v %v %v)\n%s", total, get, set, ok, okGet, okSet, body)
	}
	if n, ok := value(`pacer_requests_scheduled_total{`); !ok || uint64(n) != doc.Tests[0].Counts["scheduled"] {
		t.Errorf("final scheduled %v, the JSON's %d", n, doc.Tests[0].Counts["scheduled"])
	}
	if !strings.Contains(body, `pacer_command_response_seconds_bucket{command="get"`) {
		t.Errorf("no per-command histogram:\n%s", body)
	}
}

// scrapeLingering runs pacer with args (a run serving metrics at addr with
// --metrics-linger) and a --json output, waits for the JSON, which is
// written before the linger, and scrapes the endpoint that must still
// answer with the final numbers. wait waits for the command to end.
func scrapeLingering(t *testing.T, addr string, args ...string) (doc partialDoc, body string, wait func() (code int, stderr string)) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	run := startPacer(t, append(args, "--json", out)...)
	wait = run.wait
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(out); err == nil {
			break
		}
		select {
		case <-run.done:
			t.Fatalf("ended before lingering: exit %d: %s", run.code, run.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no JSON after 60 s")
		}
	}
	time.Sleep(200 * time.Millisecond) // the file is renamed into place whole; let the command reach its linger
	doc = readDoc(t, out)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("no endpoint after the run: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return doc, string(raw), wait
}
