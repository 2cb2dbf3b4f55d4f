package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/report"
)

// TestHdrFlagsUsageErrors: bad --percentiles, two outputs on stdout, an
// unwritable or shared path: exit 2 with one line, before any connection.
func TestHdrFlagsUsageErrors(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.OK)
	dir := t.TempDir()
	same := filepath.Join(dir, "same")
	for _, extra := range []struct {
		args []string
		want string
	}{
		{[]string{"--percentiles", "50,abc"}, "--percentiles"},
		{[]string{"--percentiles", "0"}, "--percentiles"},
		{[]string{"--percentiles", "100.5"}, "--percentiles"},
		{[]string{"--percentiles", ""}, "--percentiles"},
		{[]string{"--json", "-", "--hdr-log", "-"}, "only one output can go to stdout"},
		{[]string{"--hdr-log", "-", "--hdr-spectrum", "-"}, "only one output can go to stdout"},
		{[]string{"--hdr-log", dir}, "--hdr-log"},
		{[]string{"--hdr-spectrum", filepath.Join(dir, "missing", "s.hgrm")}, "--hdr-spectrum"},
		{[]string{"--json", same, "--hdr-log", same}, "both name"},
		{[]string{"--hdr-log", same, "--hdr-spectrum", filepath.Join(dir, ".", "same")}, "both name"},
	} {
		for _, args := range [][]string{
			{"run", "--rate", "1k", "-n", "10", "-t", "get"},
			{"bench", "-n", "10", "-t", "get"},
			{"compare", "--rate", "1k", "--duration", "100ms"},
		} {
			wantUsageError(t, extra.want, append(append(args, hostPort(t, srv.Addr)...), extra.args...)...)
		}
	}
	if n := srv.Accepted(); n != 0 {
		t.Errorf("%d connections were made before the flags were checked", n)
	}
	if _, err := os.Stat(same); err == nil {
		t.Error("a refused invocation wrote a file")
	}
}

// readHlog reads an interval log with hdrhistogram-go: each tag's lines
// merged, and the number of lines.
func readHlog(t *testing.T, data []byte) (map[string]*hdrhistogram.Histogram, int) {
	t.Helper()
	merged, lines := reference.GoLog(t, data)
	return merged, len(lines)
}

// tagList is m's tags, sorted and separated by spaces.
func tagList(m map[string]*hdrhistogram.Histogram) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), " ")
}

// TestRunWritesHdrLogAndSpectrum: pacer run writes the interval log, the
// spectrum and the JSON from one document: the log's response lines merge
// into the JSON's response histogram, the spectrum is that histogram's,
// and --percentiles sets the quiet line.
func TestRunWritesHdrLogAndSpectrum(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, l, s := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.hgrm")
	code, stdout, stderr := pacer(t, "run", "--embedded", "--rate", "2k", "--duration", "1s", "-c", "4", "-t", "get", "-q",
		"--lag-limit", "1s", "--json", j, "--hdr-log", l, "--hdr-spectrum", s, "--percentiles", "99.9,50")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "response p50=") || !strings.Contains(stdout, " p99.9=") || strings.Contains(stdout, " p99=") {
		t.Errorf("quiet line with --percentiles 99.9,50: %q", stdout)
	}
	doc := readResult(t, j)
	logData := readFile(t, l)
	if !bytes.HasPrefix(logData, []byte("#[Logged with pacer ")) {
		t.Errorf("log header: %.200s", logData)
	}
	merged, _ := readHlog(t, logData)
	if got := tagList(merged); got != "hiccup receive_lag response send_lag service" {
		t.Fatalf("tags %q", got)
	}
	want := reference.Histogram(t, doc.Tests[0].Histograms.Response)
	if got := merged["response"]; !got.Equals(want) || got.TotalCount() != int64(doc.Tests[0].Counts.Completed) {
		t.Errorf("log response: %d values, p99.9 %d; JSON: %d, %d (completed %d)", got.TotalCount(), got.ValueAtQuantile(99.9),
			want.TotalCount(), want.ValueAtQuantile(99.9), doc.Tests[0].Counts.Completed)
	}
	spec, err := report.Spectrum(doc.Tests[0])
	if err != nil || !bytes.Equal(readFile(t, s), spec) {
		t.Errorf("--hdr-spectrum is not the JSON's response spectrum: %v", err)
	}
}

// TestHdrLogToStdout: with --hdr-log -, stdout carries the log alone and
// the text goes to stderr.
func TestHdrLogToStdout(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "-n", "300", "-c", "2", "-t", "set", "-q", "--lag-limit", "1s", "--hdr-log", "-")
	if code != exitOK || !strings.HasPrefix(stdout, "#[Logged with pacer ") || strings.Contains(stdout, "requests per second") ||
		!strings.Contains(stderr, "SET: ") {
		t.Fatalf("exit %d\nstdout %.300s\nstderr %s", code, stdout, stderr)
	}
	merged, _ := readHlog(t, []byte(stdout))
	if merged["response"] == nil || merged["response"].TotalCount() != 300 {
		t.Errorf("tags %q", tagList(merged))
	}
}

// TestBenchHdrOutputsSeveralTests: bench's tests each get their tags and
// their own spectrum file; --percentiles sets the quiet line.
func TestBenchHdrOutputsSeveralTests(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, s := filepath.Join(dir, "b.hlog"), filepath.Join(dir, "b.hgrm")
	code, stdout, stderr := pacer(t, "bench", "--embedded", "-t", "set,get", "-n", "2000", "-c", "4", "-q",
		"--hdr-log", l, "--hdr-spectrum", s, "--percentiles", "50,99")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "SET: ") || !strings.Contains(stdout, " msec p99=") {
		t.Errorf("quiet output with --percentiles 50,99: %q", stdout)
	}
	merged, _ := readHlog(t, readFile(t, l))
	if got := tagList(merged); got != "get:hiccup get:receive_lag get:response get:service set:hiccup set:receive_lag set:response set:service" {
		t.Fatalf("tags %q", got)
	}
	for _, tag := range []string{"get:response", "set:response"} {
		if n := merged[tag].TotalCount(); n != 2000 {
			t.Errorf("%s: %d values, want 2000", tag, n)
		}
	}
	first, other := readFile(t, s), readFile(t, filepath.Join(dir, "b.get.hgrm"))
	if !bytes.Contains(first, []byte("Total count    =         2000]")) || !bytes.Contains(other, []byte("Total count    =         2000]")) {
		t.Errorf("spectra:\n%s\n%s", first, other)
	}
}

// TestComparePercentilesAndHdrLog: compare's table shows the chosen
// percentiles, and its log tags the closed and the open run apart.
func TestComparePercentilesAndHdrLog(t *testing.T) {
	t.Parallel()
	l := filepath.Join(t.TempDir(), "c.hlog")
	code, stdout, stderr := pacer(t, "compare", "--embedded", "--rate", "2k", "--duration", "500ms", "-c", "4", "-q",
		"--percentiles", "50,99.99", "--hdr-log", l)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "\np99.99 ") || strings.Contains(stdout, "\np90 ") || !strings.Contains(stdout, "\nmax ") {
		t.Errorf("compare table with --percentiles 50,99.99:\n%s", stdout)
	}
	merged, _ := readHlog(t, readFile(t, l))
	got := tagList(merged)
	if !strings.Contains(got, "get_closed_loop:response") || !strings.Contains(got, "_open_loop_at_2") || !strings.Contains(got, ":send_lag") {
		t.Errorf("tags %q", got)
	}
}

// TestCtrlCWritesHdrFiles: the first Ctrl-C writes the interval log and
// the spectrum of the partial result too.
func TestCtrlCWritesHdrFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, s := filepath.Join(dir, "p.hlog"), filepath.Join(dir, "p.hgrm")
	cmd, _, stderr := startBinary(t, nil, "run", "--embedded", "--rate", "2k", "--duration", "60s", "-c", "4", "-t", "get", "-q",
		"--hdr-log", l, "--hdr-spectrum", s)
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if code, took := waitFor(t, cmd, 30*time.Second); code != exitInterrupted {
		t.Fatalf("exit %d after %v, want 130; stderr %q", code, took, stderr)
	}
	merged, _ := readHlog(t, readFile(t, l))
	if merged["response"] == nil || merged["response"].TotalCount() == 0 {
		t.Fatalf("partial log: tags %q", tagList(merged))
	}
	if n := merged["response"].TotalCount(); !bytes.Contains(readFile(t, s), []byte("Total count    = ")) || n > 2000*60 {
		t.Errorf("partial spectrum, %d responses", n)
	}
}
