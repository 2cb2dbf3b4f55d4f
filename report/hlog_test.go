package report

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
)

// docBuilder builds result documents by hand: each test's intervals hold
// random histograms, and its total histograms are their merge, as the
// scheduler guarantees.
type docBuilder struct {
	t   *testing.T
	rng *rand.Rand
}

func (b docBuilder) hist(n int, scale float64) *hdrhistogram.Histogram {
	h := histo.New()
	for range n {
		if err := h.RecordValue(int64(b.rng.ExpFloat64()*scale) + 1); err != nil {
			b.t.Fatal(err)
		}
	}
	return h
}

func (b docBuilder) enc(h *hdrhistogram.Histogram) string {
	s, err := histo.Encode(h)
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// test returns a test of n one-second intervals (the last one half a
// second); open tests carry send lag; commands, when given, split each
// interval's response histogram.
func (b docBuilder) test(id, name, mode, startedAt string, n int, commands ...string) Test {
	t := Test{ID: id, Name: name, Mode: mode, StartedAt: startedAt, IntervalS: 1, DurationS: float64(n) - 0.5}
	total := map[string]*hdrhistogram.Histogram{"response": histo.New(), "service": histo.New(), "send_lag": histo.New()}
	cmdTotal := map[string]*hdrhistogram.Histogram{}
	cmdIvs := map[string][]Interval{}
	for k := range n {
		iv := Interval{StartS: float64(k), DurationS: 1}
		if k == n-1 {
			iv.DurationS = 0.5
		}
		resp, serv, lag := histo.New(), b.hist(300+k, 2e5), b.hist(300+k, 1e4)
		for _, c := range append([]string{""}, commands...) {
			if c == "" && len(commands) > 0 {
				continue
			}
			h := b.hist(300+k*10, 1e6)
			resp.Merge(h)
			if c != "" {
				if cmdTotal[c] == nil {
					cmdTotal[c] = histo.New()
				}
				cmdTotal[c].Merge(h)
				cmdIvs[c] = append(cmdIvs[c], Interval{StartS: iv.StartS, DurationS: iv.DurationS, Latencies: Latencies{Histograms: Histograms{Response: b.enc(h), Service: b.enc(histo.New())}}})
			}
		}
		iv.Histograms = Histograms{Response: b.enc(resp), Service: b.enc(serv)}
		if k%2 == 0 { // summaries on some intervals: the log takes their max
			rs, ss := histo.Summarize(resp), histo.Summarize(serv)
			iv.ResponseMs, iv.ServiceMs = &rs, &ss
		}
		total["response"].Merge(resp)
		total["service"].Merge(serv)
		if mode == "open" {
			total["send_lag"].Merge(lag)
			s := b.enc(lag)
			iv.Histograms.SendLag = &s
		}
		t.Intervals = append(t.Intervals, iv)
	}
	t.Histograms = Histograms{Response: b.enc(total["response"]), Service: b.enc(total["service"])}
	if mode == "open" {
		s := b.enc(total["send_lag"])
		t.Histograms.SendLag = &s
	}
	for _, c := range commands {
		if t.Commands == nil {
			t.Commands = map[string]Command{}
		}
		t.Commands[c] = Command{Latencies: Latencies{Histograms: Histograms{Response: b.enc(cmdTotal[c])}}, Intervals: cmdIvs[c]}
	}
	return t
}

func newDoc(tests ...Test) *Document {
	return &Document{Schema: Schema, Mode: "open", Tool: Tool{Name: "pacer", Version: "test"},
		StartedAt: "2025-03-04T05:06:07Z", Tests: tests}
}

// readLog reads an interval log with hdrhistogram-go's reader: each tag's
// intervals merged, and the lines in order.
func readLog(t *testing.T, data []byte) (map[string]*hdrhistogram.Histogram, []*hdrhistogram.Histogram) {
	t.Helper()
	return reference.GoLog(t, data)
}

func tags(m map[string]*hdrhistogram.Histogram) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestHdrLogReadBack writes the log of a one-test mix and reads it back
// with hdrhistogram-go: plain tags, one line per interval and tag in time
// order, and each tag's intervals merge into the test's histogram (same
// count, same p99.9, same counts in every bucket).
func TestHdrLogReadBack(t *testing.T) {
	t.Parallel()
	b := docBuilder{t, rand.New(rand.NewPCG(1, 2))}
	test := b.test("mix", "MIX", "open", "2025-03-04T05:06:08.250Z", 6, "get", "set")
	doc := newDoc(test)
	var out bytes.Buffer
	if err := writeHdrLog(&out, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "#[StartTime: 1741064768.250 (seconds since epoch), 2025-03-04T05:06:08.250Z]\n#[BaseTime: 1741064768.250 (seconds since epoch)]\n") {
		t.Errorf("header:\n%s", out.String()[:400])
	}
	merged, lines := readLog(t, out.Bytes())
	if got := tags(merged); got != "response response.get response.set send_lag service" {
		t.Fatalf("tags %q", got)
	}
	if len(lines) != 6*5 {
		t.Fatalf("%d lines, want 30", len(lines))
	}
	order := []string{"response", "service", "send_lag", "response.get", "response.set"}
	for i, h := range lines {
		k := i / 5
		wantStart := time.Date(2025, 3, 4, 5, 6, 8, 250e6, time.UTC).Add(time.Duration(k) * time.Second).UnixMilli()
		wantLen := int64(1000)
		if k == 5 {
			wantLen = 500
		}
		if h.Tag() != order[i%5] || h.StartTimeMs() != wantStart || h.EndTimeMs()-h.StartTimeMs() != wantLen {
			t.Errorf("line %d: %s at %d for %d ms, want %s at %d for %d ms", i, h.Tag(), h.StartTimeMs(), h.EndTimeMs()-h.StartTimeMs(), order[i%5], wantStart, wantLen)
		}
	}
	// The max column (from the summaries where the intervals have them)
	// is each histogram's max in milliseconds.
	k := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "Tag=") {
			continue
		}
		if f := strings.Split(line, ","); f[3] != strconv.FormatFloat(float64(lines[k].Max())/1e6, 'f', 6, 64) {
			t.Errorf("line %d: max column %s, the histogram's max is %d ns", k, f[3], lines[k].Max())
		}
		k++
	}
	check := func(tag, enc string) {
		want := reference.Histogram(t, enc)
		got := merged[tag]
		if got.TotalCount() != want.TotalCount() || got.ValueAtQuantile(99.9) != want.ValueAtQuantile(99.9) || !got.Equals(want) {
			t.Errorf("%s: intervals merge to count %d p99.9 %d, the test has %d %d", tag,
				got.TotalCount(), got.ValueAtQuantile(99.9), want.TotalCount(), want.ValueAtQuantile(99.9))
		}
	}
	check("response", test.Histograms.Response)
	check("service", test.Histograms.Service)
	check("send_lag", *test.Histograms.SendLag)
	check("response.get", test.Commands["get"].Histograms.Response)
	check("response.set", test.Commands["set"].Histograms.Response)
}

// TestHdrLogSeveralTests: compare's shape, a closed loop and two open
// loops that share the id "get": tags carry keys from the names, closed
// tests have no send_lag, and a test without started_at follows the one
// before it.
func TestHdrLogSeveralTests(t *testing.T) {
	t.Parallel()
	b := docBuilder{t, rand.New(rand.NewPCG(3, 4))}
	doc := newDoc(
		b.test("get", "GET (closed loop)", "closed", "2025-03-04T05:06:07.100Z", 3),
		b.test("get", "GET (open loop at 5k req/s)", "open", "", 2),
		b.test("get", "GET (open loop at 8k req/s)", "open", "2025-03-04T05:06:20Z", 2),
	)
	var out bytes.Buffer
	if err := writeHdrLog(&out, doc); err != nil {
		t.Fatal(err)
	}
	merged, lines := readLog(t, out.Bytes())
	want := "get_closed_loop:response get_closed_loop:service " +
		"get_open_loop_at_5k_req_s:response get_open_loop_at_5k_req_s:send_lag get_open_loop_at_5k_req_s:service " +
		"get_open_loop_at_8k_req_s:response get_open_loop_at_8k_req_s:send_lag get_open_loop_at_8k_req_s:service"
	if got := tags(merged); got != want {
		t.Fatalf("tags\n%s\nwant\n%s", got, want)
	}
	if len(lines) != 3*2+2*3+2*3 {
		t.Fatalf("%d lines", len(lines))
	}
	first := time.Date(2025, 3, 4, 5, 6, 7, 100e6, time.UTC)
	// The second test has no started_at: it starts when the first ended (2.5 s later).
	if got := lines[6]; got.Tag() != "get_open_loop_at_5k_req_s:response" || got.StartTimeMs() != first.Add(2500*time.Millisecond).UnixMilli() {
		t.Errorf("line 7: %s at %d", got.Tag(), got.StartTimeMs()-first.UnixMilli())
	}
	if got := lines[12]; got.StartTimeMs() != time.Date(2025, 3, 4, 5, 6, 20, 0, time.UTC).UnixMilli() {
		t.Errorf("line 13 at %d", got.StartTimeMs()-first.UnixMilli())
	}
	for i, test := range doc.Tests {
		key := TestKeys(doc)[i]
		if g, w := merged[key+":response"], reference.Histogram(t, test.Histograms.Response); !g.Equals(w) {
			t.Errorf("%s: merged intervals differ from the test", key)
		}
	}
}

// TestHdrLogWithoutIntervals: a result written before intervals existed
// gets one line per tag spanning each test's window.
func TestHdrLogWithoutIntervals(t *testing.T) {
	t.Parallel()
	b := docBuilder{t, rand.New(rand.NewPCG(5, 6))}
	a, c := b.test("", "SET", "open", "", 2), b.test("", "GET", "open", "", 3)
	a.Intervals, c.Intervals = nil, nil
	var out bytes.Buffer
	if err := writeHdrLog(&out, newDoc(a, c)); err != nil {
		t.Fatal(err)
	}
	merged, lines := readLog(t, out.Bytes())
	if got := tags(merged); got != "get:response get:send_lag get:service set:response set:send_lag set:service" {
		t.Fatalf("tags %q", got)
	}
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	for i, h := range lines {
		wantStart, wantLen := start, 1500*time.Millisecond
		if i >= 3 {
			wantStart, wantLen = start.Add(1500*time.Millisecond), 2500*time.Millisecond
		}
		if h.StartTimeMs() != wantStart.UnixMilli() || h.EndTimeMs()-h.StartTimeMs() != wantLen.Milliseconds() {
			t.Errorf("line %d (%s): at %d for %d ms", i, h.Tag(), h.StartTimeMs()-start.UnixMilli(), h.EndTimeMs()-h.StartTimeMs())
		}
	}
	if !merged["set:response"].Equals(reference.Histogram(t, a.Histograms.Response)) {
		t.Error("set:response differs from the test's histogram")
	}
}

func TestHdrLogErrors(t *testing.T) {
	t.Parallel()
	doc := newDoc()
	doc.StartedAt = "yesterday"
	if err := writeHdrLog(&bytes.Buffer{}, doc); err == nil {
		t.Error("a bad started_at was accepted")
	}
	doc = newDoc(Test{Name: "x", Latencies: Latencies{Histograms: Histograms{Response: "not base64"}}})
	if err := writeHdrLog(&bytes.Buffer{}, doc); err == nil {
		t.Error("a bad histogram was accepted")
	}
	// No tests: a valid log with no lines.
	var out bytes.Buffer
	if err := writeHdrLog(&out, newDoc()); err != nil || !strings.Contains(out.String(), "#[StartTime: 1741064767.000") {
		t.Errorf("empty document: %v\n%s", err, out.String())
	}
}

func TestTestKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tests []Test
		want  string
	}{
		{[]Test{{Name: "SET"}, {Name: "GET"}}, "set get"},
		{[]Test{{ID: "lpush_for_lrange", Name: "LPUSH (needed to benchmark LRANGE)"}, {ID: "lrange_100", Name: "LRANGE_100 (first 100 elements)"}}, "lpush_for_lrange lrange_100"},
		{[]Test{{ID: "get", Name: "GET (closed loop)"}, {ID: "get", Name: "GET (open loop at 2.5k req/s)"}}, "get_closed_loop get_open_loop_at_2_5k_req_s"},
		{[]Test{{ID: "custom", Name: "SET k v"}, {ID: "custom", Name: "SET k v"}}, "set_k_v_1 set_k_v_2"},
		{[]Test{{Name: "¿?"}, {Name: ""}}, "test_1 test_2"},
		{[]Test{{Name: "GET [closed loop at 5k req/s]"}}, "get_closed_loop_at_5k_req_s"},
	} {
		if got := strings.Join(TestKeys(&Document{Tests: c.tests}), " "); got != c.want {
			t.Errorf("TestKeys(%v) = %q, want %q", c.tests, got, c.want)
		}
	}
}

func TestSpectrumOutputs(t *testing.T) {
	t.Parallel()
	b := docBuilder{t, rand.New(rand.NewPCG(7, 8))}
	one := newDoc(b.test("get", "GET", "open", "", 2))
	outs, err := spectrumOutputs("x/run.hgrm", one)
	if err != nil || len(outs) != 1 || outs[0].Path != "x/run.hgrm" || !bytes.HasPrefix(outs[0].Data, []byte("       Value     Percentile")) {
		t.Fatalf("one test: %v %v", outs, err)
	}
	var want bytes.Buffer
	if err := histo.WriteSpectrum(&want, reference.Histogram(t, one.Tests[0].Histograms.Response), 5, 1e6); err != nil || !bytes.Equal(outs[0].Data, want.Bytes()) {
		t.Errorf("the spectrum is not the test's response histogram's: %v", err)
	}
	dir := t.TempDir()
	several := newDoc(b.test("get", "GET (closed loop)", "closed", "", 2), b.test("get", "GET (open loop at 5k req/s)", "open", "", 2))
	outs, err = spectrumOutputs(filepath.Join(dir, "cmp.hgrm"), several)
	if err != nil || len(outs) != 2 || outs[0].Path != filepath.Join(dir, "cmp.hgrm") || outs[1].Path != filepath.Join(dir, "cmp.get_open_loop_at_5k_req_s.hgrm") {
		t.Fatalf("several tests: %v", err)
	}
	for _, path := range []string{"-", os.DevNull} {
		outs, err = spectrumOutputs(path, several)
		if err != nil || len(outs) != 1 || !bytes.HasPrefix(outs[0].Data, []byte("#[Test get_closed_loop: GET (closed loop)]\n       Value")) ||
			!bytes.Contains(outs[0].Data, []byte("#[Test get_open_loop_at_5k_req_s: GET (open loop at 5k req/s)]\n       Value")) {
			t.Errorf("%s: one stream with a comment per test: %v", path, err)
		}
	}
	outs, err = spectrumOutputs("e.hgrm", newDoc())
	if err != nil || len(outs) != 1 || !bytes.Contains(outs[0].Data, []byte("Total count    =            0")) {
		t.Errorf("no tests: an empty distribution: %v", err)
	}
	for in, want := range map[string]string{"a.hgrm": "a.k.hgrm", "dir.d/a": "dir.d/a.k", ".hidden": ".hidden.k", "a.b.c": "a.b.k.c"} {
		if got := insertKey(in, "k"); got != want {
			t.Errorf("insertKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHdrLogJavaReader has the Java reference implementation read the log
// of a two-test document: for the second test's response, its CSV interval output
// ends with the total count and p99.9 of the merged intervals, which must
// equal the test's histogram as Go reads it; and its percentile
// distribution must be byte for byte what --hdr-spectrum writes.
func TestHdrLogJavaReader(t *testing.T) {
	t.Parallel()
	proc := reference.JavaLogProcessor(t)
	b := docBuilder{t, rand.New(rand.NewPCG(9, 10))}
	doc := newDoc(
		b.test("get", "GET (closed loop)", "closed", "2025-03-04T05:06:07.100Z", 4),
		b.test("get", "GET (open loop at 5k req/s)", "open", "2025-03-04T05:06:12.300Z", 5, "get", "set"),
	)
	var out bytes.Buffer
	if err := writeHdrLog(&out, doc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "run.hlog")
	if err := os.WriteFile(logPath, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spectra, err := spectrumOutputs(filepath.Join(dir, "s.hgrm"), doc)
	if err != nil {
		t.Fatal(err)
	}
	// One tag: each run of the JVM takes about a second.
	for _, c := range []struct {
		i     int
		tag   string
		enc   string
		lines int
	}{
		{1, "get_open_loop_at_5k_req_s:response", doc.Tests[1].Histograms.Response, 5},
	} {
		i := c.i
		csvOut := filepath.Join(dir, "csv"+strconv.Itoa(i))
		cmd := exec.Command(proc[0], append(proc[1:], "-i", logPath, "-tag", c.tag, "-csv", "-o", csvOut)...)
		if msg, err := cmd.CombinedOutput(); err != nil || bytes.Contains(msg, []byte("Exception")) {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, msg)
		}
		data, err := os.ReadFile(csvOut)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]string
		for _, line := range strings.Split(string(data), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			r, err := csv.NewReader(strings.NewReader(line)).Read()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			rows = append(rows, r)
		}
		// "Timestamp","Int_Count",…,"Total_Count",…,"Total_99.9%",…
		if len(rows) != c.lines+1 || rows[0][5] != "Total_Count" || rows[0][9] != "Total_99.9%" {
			t.Fatalf("%s: unexpected Java output:\n%s", c.tag, data)
		}
		last := rows[len(rows)-1]
		want := reference.Histogram(t, c.enc)
		wantCount := strconv.FormatInt(want.TotalCount(), 10)
		wantP999 := strconv.FormatFloat(float64(want.ValueAtQuantile(99.9))/1e6, 'f', 3, 64)
		if last[5] != wantCount || last[9] != wantP999 {
			t.Errorf("%s: Java reads count %s p99.9 %s ms; Go has %s %s", c.tag, last[5], last[9], wantCount, wantP999)
		} else {
			t.Logf("%s: Java HistogramLogProcessor: total count %s, p99.9 %s ms, equal to the Go side", c.tag, last[5], last[9])
		}

		hgrmOut := filepath.Join(dir, "hgrm"+strconv.Itoa(i))
		cmd = exec.Command(proc[0], append(proc[1:], "-i", logPath, "-tag", c.tag, "-o", hgrmOut)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, msg)
		}
		java, err := os.ReadFile(hgrmOut + ".hgrm")
		if err != nil {
			t.Fatal(err)
		}
		j := bytes.Index(java, []byte("       Value"))
		if j < 0 || !bytes.Equal(java[j:], spectra[i].Data) {
			t.Errorf("%s: --hdr-spectrum differs from Java's distribution:\n--- java\n%s\n--- ours\n%s", c.tag, java, spectra[i].Data)
		}
	}
}
