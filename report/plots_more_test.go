package report_test

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/peers"
	"github.com/pacer-load/pacer/report/plots"
	reporttext "github.com/pacer-load/pacer/report/text"
)

// From diff_test.go.
func TestDiffPlot(t *testing.T) {
	t.Parallel()
	d := diffFixture()
	b, err := plots.DiffPlot(d, plots.PNG, plots.PlotOptions{Title: "Upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	keepPlots(t, "diff.png", b)
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	notBlank(t, img)
	svg, err := plots.DiffPlot(d, plots.SVG, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, string(svg), "latency by percentile", "change by percentile", "baseline before.json", "no change: ±5%", "worse")
	// Nothing to draw is a picture that says so, not an error.
	if _, err := plots.DiffPlot(&diff.Document{}, plots.SVG, plots.PlotOptions{}); err != nil {
		t.Errorf("empty: %v", err)
	}
}

// From diff_test.go.
func TestDiffHTMLSelfContainedAndEscaped(t *testing.T) {
	t.Parallel()
	b, err := plots.DiffHTML(diffFixture(), "the text <report>", "")
	if err != nil {
		t.Fatal(err)
	}
	keepPlots(t, "diff.html", b)
	s := string(b)
	testrun.Contains(t, s, "<title>pacer diff: before.json → after.json</title>", "GET &lt;b&gt;&#34;x&#34;&lt;/b&gt;",
		"the text &lt;report&gt;", `class="bad">worse`, `class="same">same`, "too few samples", "SET: only in the baseline",
		"--max-regression p99:10%", "<svg")
	if strings.Contains(s, "<b>") || strings.Contains(s, "<?xml") {
		t.Error("unescaped markup or an xml prologue in the page")
	}
	if m := regexp.MustCompile(`(?i)[\s:](src|href)\s*=|@import|url\(`).FindString(s); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
}

// From diff_test.go.
// The comparison's page in headless chromium: not blank, its title and
// its pictures in the DOM.
func TestDiffHTMLInBrowser(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "starts Chromium, which takes seconds on its own; .ci/run runs it")
	bin := reference.Chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "diff.html")
	b, err := plots.DiffHTML(diffFixture(), "text", "Upgrade")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	chromium := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1200,2000"}
		cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.Bytes()
	}
	chromium("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	notBlank(t, img)
	testrun.Contains(t, string(chromium("--dump-dom")), "<title>Upgrade</title>", "change by percentile", "<svg", "worse")
}

// From events_test.go.
// TestPlotEvents: the interval plot marks the events and shades their
// windows; the spectrum draws each replica's visibility lag and WAIT's
// latency beside response time.
func TestPlotEvents(t *testing.T) {
	t.Parallel()
	skipDrawingUnderRace(t)
	f := report.Craft(t, report.Fixture{Name: "SET", Mode: "open", Rate: 10000, Seconds: 1, Base: 0.1, Interval: 0.5, Seed: 3})
	top := report.AsTest(t, resulttest.WithTopology(), nil)
	f.Events, f.EventBoundMs, f.Visibility, f.Wait = top.Events, top.EventBoundMs, top.Visibility, top.Wait
	in := []report.Input{report.InputOf(t, "topology.json", report.CraftDoc("open", f))}
	notBlank(t, plotPNG(t, in, "topology.png"))
	s, err := plots.Plot(in, plots.SVG, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keepPlots(t, "topology.svg", s)
	checkSVG(t, s, "topology event", "writes unavailable (an event's window)",
		"SET — visibility lag 127.0.0.1:7003", "SET — visibility lag 127.0.0.1:7004", "SET — WAIT latency")
}

// From events_test.go.
// TestHTMLEvents: the page lists each test's events, their nodes, what
// was seen and both windows; a node's name from the server is escaped.
func TestHTMLEvents(t *testing.T) {
	t.Parallel()
	f := report.Craft(t, report.Fixture{Name: "SET", Mode: "open", Rate: 10000, Seconds: 1, Base: 0.1, Interval: 0.5, Seed: 3})
	top := report.AsTest(t, resulttest.WithTopology(), nil)
	f.Events = top.Events
	f.Events[1].Nodes = []string{"<node>"}
	b, err := plots.HTML(plots.Page{Inputs: []report.Input{report.InputOf(t, "topology.json", report.CraftDoc("open", f))}, Text: "text"})
	if err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, string(b), "<h2>Events</h2>", "<td>failover</td>", "127.0.0.1:7001, 127.0.0.1:7002",
		"&#43;switch-master, READONLY (3)", "unavailable 0.120 s (0.580–0.700 s), 3 failed, spike 45.000 ms", "&lt;node&gt;")
}

// From foreign_test.go.
// TestForeignSideBySide: pacer's run, redis-benchmark's CSV and
// memtier's JSON side by side: GET matched across the three, the figures
// a format lacks shown as n/a, the lacks said in the header.
func TestForeignSideBySide(t *testing.T) {
	t.Parallel()
	run := report.CraftDoc("closed", report.Craft(t, report.Fixture{Name: "GET", Mode: "closed", Rate: 5000, Seconds: 2, Base: 0.4, Interval: 0.5, Seed: 3}))
	run.Tests[0].ID = "get"
	csv, err := peers.ReadInput("bench.csv", []byte(benchmarkCSV))
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := memtierInput(t)
	in := []report.Input{report.InputOf(t, "run.json", run), csv, mt}
	var b bytes.Buffer
	if err := reporttext.SideBySide(&b, in); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	testrun.Contains(t, s,
		"[2] bench.csv: redis-benchmark --csv, closed loop (latency from the send), 4 tests; it lacks p90, p99.9, p99.99, counts",
		"[3] memtier.json: memtier_benchmark --json-out-file",
		"====== GET ======",
		"n/a: a figure the file's format does not carry",
	)
	get := testrun.Section(s, "====== GET ======")
	for _, row := range []string{"  p99.9 ", "scheduled "} {
		line := get[strings.Index(get, row):]
		line = line[:strings.Index(line, "\n")]
		if f := strings.Fields(line); len(f) < 4 || f[2] != "n/a" || f[1] == "n/a" || f[1] == "-" {
			t.Errorf("row %q: %q, want pacer's figure then n/a for the csv", row, line)
		}
	}
	if !strings.Contains(get, "1.423") || !strings.Contains(get, "0.839") {
		t.Errorf("the GET table lacks the tools' p99s:\n%s", get)
	}
	for _, f := range []string{plots.PNG, plots.SVG} {
		b, err := plots.Plot(in, f, plots.PlotOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		keepPlots(t, "foreign."+f, b)
	}
	page, err := plots.HTML(plots.Page{Inputs: in, Text: s})
	if err != nil || !bytes.Contains(page, []byte("its format lacks p90")) || bytes.Contains(page, []byte("hunter2")) {
		t.Fatalf("html: %v", err)
	}
	spec, _, err := plots.SVGs(in, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, spec, "bench.csv — GET — latency (closed), printed percentiles", "memtier.json", "run.json")
}

// From hostile_read_test.go.
// TestReadCutsLongTexts: a first error of a megabyte of "<" is cut to a
// few KB, so neither the text nor the plots.HTML page grows with it.
func TestReadCutsLongTexts(t *testing.T) {
	t.Parallel()
	doc := report.HostileDoc(t)
	doc.Tests[0].FirstError = strings.Repeat("<", 1<<20)
	doc.Tests[0].Errors = map[string]uint64{strings.Repeat("E", 1<<16): 1}
	doc.Config["user"] = strings.Repeat("u", 1<<16)
	in, err := report.ReadBack(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(in.Doc.Tests[0].FirstError); n > report.MaxText+64 {
		t.Fatalf("first error kept at %d bytes", n)
	}
	for k := range in.Doc.Tests[0].Errors {
		if len(k) > report.MaxText+64 {
			t.Fatalf("an error code kept at %d bytes", len(k))
		}
	}
	var text bytes.Buffer
	if err := reporttext.Render(&text, in.Doc); err != nil {
		t.Fatal(err)
	}
	page, err := plots.HTML(plots.Page{Inputs: []report.Input{in}, Text: text.String()})
	if err != nil {
		t.Fatal(err)
	}
	if text.Len() > 64<<10 || len(page) > 2<<20 {
		t.Fatalf("text %d bytes, page %d bytes", text.Len(), len(page))
	}
}

// From hostile_read_test.go.
// TestPlotClampsAbsurdValues: an interval max of 1e250 ms (or any figure
// beyond what a histogram holds) draws, clamped, instead of panicking.
func TestPlotClampsAbsurdValues(t *testing.T) {
	t.Parallel()
	doc := report.HostileDoc(t)
	for i := range doc.Tests[0].Intervals {
		iv := &doc.Tests[0].Intervals[i]
		iv.ResponseMs.Max, iv.ResponseMs.P99 = 1e250, 1e250
		big := 1e300
		iv.OldestInflightMs, iv.OldestInflightMaxMs = &big, &big
	}
	in, err := report.ReadBack(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{plots.PNG, plots.SVG} {
		if _, err := plots.Plot([]report.Input{in}, f, plots.PlotOptions{}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := plots.HTML(plots.Page{Inputs: []report.Input{in}}); err != nil {
		t.Error(err)
	}
	// Not read back: a document built in memory is clamped when drawn.
	raw := report.HostileDoc(t)
	raw.Tests[0].Intervals[0].ResponseMs.Max = math.Inf(1)
	raw.Tests[0].Intervals[1].ResponseMs.P50 = math.NaN()
	raw.Tests[0].Intervals[2].ResponseMs.P99 = 1e250
	if _, err := plots.Plot([]report.Input{{Label: "raw", Doc: raw}}, plots.SVG, plots.PlotOptions{}); err != nil {
		t.Error(err)
	}
}

// From messages_test.go.
// TestMessagesPlotsAndLogs: a messages test's plots name its deliveries
// and draw them per second, its page renders, and its .hlog logs them
// under delivery tags that merge back into the test's histograms.
func TestMessagesPlotsAndLogs(t *testing.T) {
	t.Parallel()
	tt, err := report.NewMessagesTest(report.StreamRun(t, 1000, 3, 4, 2, []int64{10, 12, 9}), report.TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc := report.CraftDoc("stream", *tt)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.ReadInput("stream.json", b)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := plots.Plot([]report.Input{in}, plots.SVG, plots.PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg, "PUBLISH — delivery", "PUBLISH — delivery from the send", "delivered per second")
	page, err := plots.HTML(plots.Page{Inputs: []report.Input{in}, Text: "text"})
	if err != nil || !bytes.Contains(page, []byte("delivered per second")) {
		t.Errorf("page: %v", err)
	}
	l, err := report.HdrLog(in.Doc)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	tags := map[string]bool{}
	for _, e := range l.Entries {
		tags[e.Tag] = true
		if e.Tag == "delivery" && e.Encoded != "" {
			h, err := histo.Decode(e.Encoded)
			if err != nil {
				t.Fatal(err)
			}
			n += h.TotalCount()
		}
	}
	if !tags["delivery"] || !tags["delivery_service"] || tags["response"] || n != int64(tt.Messages.Delivered) {
		t.Errorf("tags %v, %d deliveries logged of %d", tags, n, tt.Messages.Delivered)
	}
}
