package histo

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/testrun"
)

// randomHistogram records n values: mostly exponential around scale ns, a
// tenth on exact multiples of 500 ns (ties for the millisecond rounding),
// and a few far out.
func randomHistogram(t *testing.T, rng *rand.Rand, n int, scale float64) *hdrhistogram.Histogram {
	t.Helper()
	h := New()
	for range n {
		v := int64(rng.ExpFloat64() * scale)
		switch rng.IntN(20) {
		case 0, 1:
			v = int64(rng.IntN(40))*500 + 1000
		case 2:
			v = int64(rng.IntN(3000)) * 1e6
		}
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func encode(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testLog is a log of 5 one-second intervals under two tags, and the
// merged histogram of each tag.
func testLog(t *testing.T) (Log, map[string]*hdrhistogram.Histogram) {
	rng := rand.New(rand.NewPCG(7, 8))
	start := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	l := Log{Comment: "Logged with pacer test", Start: start}
	merged := map[string]*hdrhistogram.Histogram{"response": New(), "service": New()}
	for k := range 5 {
		for _, tag := range []string{"response", "service"} {
			h := randomHistogram(t, rng, 1000+k*100, 1e6)
			merged[tag].Merge(h)
			l.Entries = append(l.Entries, LogEntry{Tag: tag, Start: start.Add(time.Duration(k) * time.Second),
				Duration: time.Second, Encoded: encode(t, h)})
		}
	}
	// An empty interval is written as an empty histogram.
	l.Entries = append(l.Entries, LogEntry{Tag: "response", Start: start.Add(5 * time.Second), Duration: 500 * time.Millisecond})
	return l, merged
}

func TestWriteLogHeader(t *testing.T) {
	t.Parallel()
	l, _ := testLog(t)
	var b bytes.Buffer
	if err := WriteLog(&b, l); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"#[Logged with pacer test]",
		"#[Histogram log format version 1.3]",
		"#[StartTime: 1714979289.123 (seconds since epoch), 2024-05-06T07:08:09.123Z]",
		"#[BaseTime: 1714979289.123 (seconds since epoch)]",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i+1, lines[i], w)
		}
	}
	if !strings.HasPrefix(lines[5], "Tag=response,0.000000,1.000000,") || !strings.HasPrefix(lines[6], "Tag=service,0.000000,1.000000,") {
		t.Errorf("first interval lines:\n%s\n%s", lines[5], lines[6])
	}
	if last := lines[len(lines)-2]; !strings.HasPrefix(last, "Tag=response,5.000000,0.500000,0.000000,HIST") {
		t.Errorf("empty interval line: %s", last)
	}
}

// TestWriteLogReadBack reads the log with hdrhistogram-go's reader: every
// line comes back with its tag and times, and each tag's intervals merge
// into exactly what was written.
func TestWriteLogReadBack(t *testing.T) {
	t.Parallel()
	l, merged := testLog(t)
	var b bytes.Buffer
	if err := WriteLog(&b, l); err != nil {
		t.Fatal(err)
	}
	got, lines := reference.GoLog(t, b.Bytes())
	if len(lines) != len(l.Entries) {
		t.Fatalf("read %d interval histograms, wrote %d", len(lines), len(l.Entries))
	}
	for n, h := range lines {
		e := l.Entries[n]
		if h.Tag() != e.Tag || h.StartTimeMs() != e.Start.UnixMilli() || h.EndTimeMs() != e.Start.Add(e.Duration).UnixMilli() {
			t.Errorf("line %d: tag %q start %d end %d, want %q %d %d", n, h.Tag(), h.StartTimeMs(), h.EndTimeMs(),
				e.Tag, e.Start.UnixMilli(), e.Start.Add(e.Duration).UnixMilli())
		}
	}
	for tag, want := range merged {
		g := got[tag]
		if g == nil || !g.Equals(want) {
			t.Fatalf("tag %s: merged read-back differs from the written intervals", tag)
		}
		if g.TotalCount() != want.TotalCount() || g.ValueAtQuantile(99.9) != want.ValueAtQuantile(99.9) {
			t.Errorf("tag %s: count %d p99.9 %d, want %d %d", tag, g.TotalCount(), g.ValueAtQuantile(99.9), want.TotalCount(), want.ValueAtQuantile(99.9))
		}
	}
}

// TestWriteLogLinesAreTheLibrarys: every interval line is byte for byte
// what hdrhistogram-go's own OutputIntervalHistogram writes for the
// decoded histogram, whether the max is given or read from the histogram.
func TestWriteLogLinesAreTheLibrarys(t *testing.T) {
	t.Parallel()
	l, _ := testLog(t)
	for i := range l.Entries {
		if i%2 == 0 && l.Entries[i].Encoded != "" {
			h, err := Decode(l.Entries[i].Encoded)
			if err != nil {
				t.Fatal(err)
			}
			l.Entries[i].Max = h.Max()
		}
	}
	var ours, lib bytes.Buffer
	if err := WriteLog(&ours, l); err != nil {
		t.Fatal(err)
	}
	lw := hdrhistogram.NewHistogramLogWriter(&lib)
	lw.SetBaseTime(l.Start.UnixMilli())
	for _, e := range l.Entries {
		h := New()
		if e.Encoded != "" {
			var err error
			if h, err = Decode(e.Encoded); err != nil {
				t.Fatal(err)
			}
		}
		h.SetTag(e.Tag)
		h.SetStartTimeMs(e.Start.UnixMilli())
		h.SetEndTimeMs(e.Start.Add(e.Duration).UnixMilli())
		if err := lw.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	got := ours.String()[strings.Index(ours.String(), "Tag="):]
	if got != lib.String() {
		t.Errorf("interval lines differ from the library's:\n--- ours\n%.600s\n--- library\n%.600s", got, lib.String())
	}
	bad := Log{Start: l.Start, Entries: []LogEntry{{Tag: "x", Start: l.Start, Duration: time.Second, Encoded: "not,an encoding"}}}
	if err := WriteLog(io.Discard, bad); err == nil {
		t.Error("a broken encoding was written")
	}
}

func TestWriteLogRefusesBadTags(t *testing.T) {
	t.Parallel()
	for _, tag := range []string{"a,b", "a b", "a\nb", " x", "x,"} {
		l := Log{Start: time.Unix(0, 0), Entries: []LogEntry{{Tag: tag, Start: time.Unix(0, 0), Duration: time.Second}}}
		if err := WriteLog(io.Discard, l); err == nil {
			t.Errorf("tag %q accepted", tag)
		}
	}
	if got := LogTag("response.GET key,x\x01é"); got != "response.GET_key_x___" {
		t.Errorf("LogTag = %q", got)
	}
}

func TestJavaFixed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		prec int
		want string
	}{
		{0, 3, "0.000"},
		{0.0015, 3, "0.002"}, // Go's %.3f: 0.002 (binary above the tie)
		{1.2345, 3, "1.235"}, // Go's %.3f: 1.234 (binary below the tie)
		{0.0005, 3, "0.001"},
		{0.0004999, 3, "0.000"},
		{0.00001, 3, "0.000"},
		{9.9995, 3, "10.000"},
		{999.9995, 3, "1000.000"},
		{123456.789, 3, "123456.789"},
		{3600000, 3, "3600000.000"},
		{0.5, 12, "0.500000000000"},
		{0.9998046875, 12, "0.999804687500"},
		{1.11111111111, 2, "1.11"},
		{5120, 2, "5120.00"},
		{2.5, 0, "3"},
		{1e21, 2, "1000000000000000000000.00"},
		{-1.2345, 3, "-1.235"},
	} {
		if got := javaFixed(c.v, c.prec); got != c.want {
			t.Errorf("javaFixed(%v, %d) = %q, want %q", c.v, c.prec, got, c.want)
		}
	}
}

func TestWriteSpectrumLayout(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteSpectrum(&b, microseconds(t, 1000), SpectrumTicks, 1e6); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testrun.Contains(t, out,
		"       Value     Percentile TotalCount 1/(1-Percentile)\n\n",
		"       0.001 0.000000000000          1           1.00\n",
		"       0.500 0.500000000000        500           2.00\n",
		"       1.000 1.000000000000       1000\n#[Mean    =        0.501, StdDeviation   =        0.289]\n",
		"#[Max     =        1.000, Total count    =         1000]\n#[Buckets =           32, SubBuckets     =         2048]\n",
	)
	b.Reset()
	if err := WriteSpectrum(&b, New(), SpectrumTicks, 1e6); err != nil {
		t.Fatal(err)
	}
	if want := "       Value     Percentile TotalCount 1/(1-Percentile)\n\n" +
		"#[Mean    =        0.000, StdDeviation   =        0.000]\n" +
		"#[Max     =        0.000, Total count    =            0]\n" +
		"#[Buckets =           32, SubBuckets     =         2048]\n"; b.String() != want {
		t.Errorf("empty spectrum:\n%s", b.String())
	}
}

func runJava(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil || bytes.Contains(out, []byte("Exception")) {
		if errors.As(err, &ee) || err == nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Fatal(err)
	}
}

// TestWriteSpectrumMatchesJava writes histograms of several shapes into a
// log, has the Java HistogramLogProcessor write each tag's percentile
// distribution (.hgrm), and compares it byte for byte with WriteSpectrum
// of the same merged histogram.
func TestWriteSpectrumMatchesJava(t *testing.T) {
	t.Parallel()
	proc := reference.JavaLogProcessor(t)
	rng := rand.New(rand.NewPCG(11, 12))
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string][]*hdrhistogram.Histogram{
		"wide":   {randomHistogram(t, rng, 20000, 2e5), randomHistogram(t, rng, 30000, 5e6)},
		"narrow": {randomHistogram(t, rng, 7, 1e3)},
		"edges":  {New()},
	}
	for _, v := range []int64{0, 1, 2047, 2048, 1234500, Highest} {
		if err := cases["edges"][0].RecordValues(v, 3); err != nil {
			t.Fatal(err)
		}
	}
	l := Log{Start: start}
	for tag, hs := range cases {
		for k, h := range hs {
			l.Entries = append(l.Entries, LogEntry{Tag: tag, Start: start.Add(time.Duration(k) * time.Second), Duration: time.Second, Encoded: encode(t, h)})
		}
	}
	for tag, hs := range cases {
		java := javaSpectrum(t, proc, l, tag)
		merged, _ := Merge(hs...)
		var ours bytes.Buffer
		if err := WriteSpectrum(&ours, merged, SpectrumTicks, 1e6); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(java, ours.Bytes()) {
			t.Errorf("%s: the spectrum differs from Java's:\n--- java\n%s\n--- ours\n%s", tag, java, ours.Bytes())
		} else {
			t.Logf("%s: %d lines identical to the Java HistogramLogProcessor's", tag, bytes.Count(java, []byte("\n")))
		}
	}
}

// javaSpectrum writes l as a log file and has the Java
// HistogramLogProcessor (proc) write tag's percentile distribution
// (.hgrm); it returns the distribution's table, from its header on.
func javaSpectrum(t *testing.T, proc []string, l Log, tag string) []byte {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "in.hlog")
	var b bytes.Buffer
	if err := WriteLog(&b, l); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, tag)
	runJava(t, append(append([]string{}, proc...), "-i", logPath, "-tag", tag, "-o", out)...)
	java, err := os.ReadFile(out + ".hgrm")
	if err != nil {
		t.Fatal(err)
	}
	// The processor starts with two comment lines of its own.
	i := bytes.Index(java, []byte("       Value"))
	if i < 0 {
		t.Fatalf("%s: no distribution in the Java output:\n%s", tag, java)
	}
	return java[i:]
}
