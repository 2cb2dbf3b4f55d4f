package main

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// savedRun runs args with --json into dir and returns the file and what
// the run printed on stdout.
func savedRun(t *testing.T, dir, name string, args ...string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	code, stdout, stderr := pacer(t, append(args, "--json", path)...)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr)
	}
	return path, stdout
}

// pacer report prints a saved run as the run printed it.
func TestReportReRendersAsPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, runOut := savedRun(t, dir, "run.json", "run", "--embedded", "--rate", "1k", "--duration", "300ms", "-c", "4", "-t", "get,set", "--slo", "p99<1s")
	code, out, stderr := pacer(t, "report", run)
	if !runOK(code) || out != runOut {
		t.Fatalf("report of run: exit %d (%s)\n%s\nthe run printed:\n%s", code, stderr, out, runOut)
	}
	cmp, cmpOut := savedRun(t, dir, "compare.json", "compare", "--embedded", "--duration", "200ms", "-c", "4")
	code, out, stderr = pacer(t, "report", cmp)
	if !runOK(code) || out != cmpOut {
		t.Fatalf("report of compare: exit %d (%s)\n%s\ncompare printed:\n%s", code, stderr, out, cmpOut)
	}
	bench, _ := savedRun(t, dir, "bench.json", "bench", "--embedded", "-n", "2000", "-c", "4", "-t", "get,set", "-q")
	code, out, _ = pacer(t, "report", bench)
	if !runOK(code) || !strings.Contains(out, "SET: ") || !strings.Contains(out, " requests per second, p50=") || !strings.Contains(out, "p99.99") {
		t.Fatalf("report of bench: exit %d\n%s", code, out)
	}
}

func TestReportSideBySideAndOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := savedRun(t, dir, "a.json", "run", "--embedded", "--rate", "1k", "--duration", "300ms", "-c", "4", "-t", "get,set", "-q")
	b, _ := savedRun(t, dir, "b.json", "run", "--embedded", "--rate", "2k", "--duration", "300ms", "-c", "4", "-t", "get,incr", "-q")
	plotPNG, plotSVG, page := filepath.Join(dir, "out.png"), filepath.Join(dir, "out.svg"), filepath.Join(dir, "out.html")
	// Flags may come after the files.
	code, out, stderr := pacer(t, "report", a, b, "--plot", plotPNG, "--html="+page)
	if !runOK(code) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testrun.Contains(t, out, "[1] a.json", "[2] b.json", "====== GET ======", "[2]-[1] ms (%)", "No counterpart:", "SET: only in [1]", "INCR: only in [2]")
	checkPNG(t, plotPNG, "--plot png")
	html, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(html, []byte("<title>pacer report: a.json vs b.json</title>")) {
		t.Errorf("--html: %v, %.200q", err, html)
	}
	if code, _, stderr := pacer(t, "report", "--plot", plotSVG, a); !runOK(code) {
		t.Fatalf("svg: exit %d: %s", code, stderr)
	}
	if svg, err := os.ReadFile(plotSVG); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("--plot svg: %v", err)
	}
}

func TestReportUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, _ := savedRun(t, dir, "good.json", "run", "--embedded", "--rate", "1k", "--duration", "100ms", "-c", "2", "-t", "get", "-q")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":"something/v2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no files", []string{"report"}, "give one or more result files"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not a result", []string{"report", good, bad}, "not a pacer result"},
		{"endless binary", []string{"report", "/dev/zero"}, "not a result document"},
		{"empty", []string{"report", "/dev/null"}, "empty: not a result document"},
		{"a directory", []string{"report", dir}, dir},
		{"plot extension", []string{"report", good, "--plot", filepath.Join(dir, "x.pdf")}, "want a file name ending in .png or .svg"},
		{"plot without file", []string{"report", good, "--plot"}, "flag needs an argument"},
		{"plot dir missing", []string{"report", "--plot", filepath.Join(dir, "no", "x.png"), good}, "--plot"},
		{"html is a dir", []string{"report", good, "--html", dir}, "--html"},
		{"unknown flag", []string{"report", good, "--bogus"}, "bogus"},
	} {
		wantUsageError(t, tc.want, tc.args...)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pdf")); err == nil {
		t.Error("a refused plot was written")
	}
}

// - reads a document from stdin.
func TestReportStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc, runOut := savedRun(t, dir, "run.json", "run", "--embedded", "--rate", "1k", "--duration", "100ms", "-c", "2", "-t", "get")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pacerBinary(t), "report", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && runOK(ee.ExitCode()) { // the run's own verdict
		err = nil
	}
	if err != nil || string(out) != runOut {
		t.Fatalf("report -: %v\n%s\nwant\n%s", err, out, runOut)
	}
}

// checkPNG reports (as what) when the file at path is not a PNG that Go's
// decoder reads.
func checkPNG(t *testing.T, path, what string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}
