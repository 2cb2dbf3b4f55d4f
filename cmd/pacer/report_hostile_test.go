package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// editJSON rewrites a result file through a generic map.
func editJSON(t *testing.T, src, dst string, edit func(d map[string]any)) string {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(readFile(t, src), &d); err != nil {
		t.Fatal(err)
	}
	edit(d)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func firstTest(d map[string]any) map[string]any { return d["tests"].([]any)[0].(map[string]any) }

// twoShards runs shard 1/2 and 2/2 of one timeline, each against its own
// embedded server.
func twoShards(t *testing.T, dir string) (string, string) {
	t.Helper()
	common := []string{"run", "--embedded", "--rate", "1k", "--duration", "300ms", "-c", "2", "-t", "get", "--seed", "3", "--lag-limit", "1s", "-q"}
	a, _ := savedRun(t, dir, "shard-1.json", append(common, "--shard", "1/2")...)
	b, _ := savedRun(t, dir, "shard-2.json", append(common, "--shard", "2/2")...)
	return a, b
}

// TestReportAndMergeExitWithTheVerdict: pacer report and pacer merge exit
// with the code of the verdicts they read or compute (a merged
// target_lost exits 1), saying why on stderr.
func TestReportAndMergeExitWithTheVerdict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, _ := savedRun(t, dir, "run.json", "run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q")
	for _, tc := range []struct {
		verdict string
		slo     bool
		code    int
		why     string
	}{
		{"target_lost", false, exitFailed, "error: target lost"},
		{"generator_behind", false, exitUntrusted, "inconclusive"},
		{"inconclusive", true, exitUntrusted, "inconclusive"},
		{"ok", true, exitSLO, "fail"},
	} {
		f := editJSON(t, run, filepath.Join(dir, tc.verdict+".json"), func(d map[string]any) {
			test := firstTest(d)
			test["verdict"], test["verdict_reason"] = tc.verdict, "because"
			if tc.slo {
				test["slo"] = map[string]any{"spec": "p99<1us", "pass": false, "violations": []string{"p99 above 1 µs"}}
			}
		})
		code, _, stderr := pacer(t, "report", f)
		if code != tc.code || !strings.Contains(stderr, tc.why) {
			t.Errorf("report of %s: exit %d, %q; want %d", tc.verdict, code, stderr, tc.code)
		}
	}
	a, b := twoShards(t, dir)
	lost := editJSON(t, b, filepath.Join(dir, "shard-2-lost.json"), func(d map[string]any) {
		firstTest(d)["verdict"] = "target_lost"
	})
	code, stdout, stderr := pacer(t, "merge", a, lost, "-o", filepath.Join(dir, "merged.json"))
	if code != exitFailed || !strings.Contains(stdout, "merged shards 1, 2 of 2") || !strings.Contains(stderr, "target lost") {
		t.Fatalf("a merged target_lost: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := pacer(t, "merge", a, b, "-o", filepath.Join(dir, "merged.json")); code != exitOK {
		t.Fatalf("two shards: exit %d, %s", code, stderr)
	}
	// Each shard ran its own embedded server: each one's side is kept.
	out := readFile(t, filepath.Join(dir, "merged.json"))
	if !bytes.Contains(out, []byte(`"servers"`)) || !bytes.Contains(out, []byte(`"shard_connections"`)) {
		t.Errorf("the merged result keeps neither the servers nor the shards' connections")
	}
}

// TestOutputsNeverOverwriteInputs: an output that names an input, or two
// outputs that name one file (by path or through links), are usage
// errors, and nothing is written.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	run, _ := savedRun(t, dir, "run.json", "run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q")
	a, b := twoShards(t, dir)
	link1, link2, toRun := filepath.Join(dir, "one.svg"), filepath.Join(dir, "two.html"), filepath.Join(dir, "torun.html")
	target := filepath.Join(dir, "target.svg")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{target, link1}, {target, link2}, {run, toRun}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]byte{run: readFile(t, run), a: readFile(t, a), b: readFile(t, b)}
	for _, args := range [][]string{
		{"merge", a, b, "-o", a},
		{"merge", a, b, "-o", "./" + filepath.Base(b)},
		{"report", run, "--html", run},
		{"report", run, "--html", toRun},
		{"report", run, "--plot", filepath.Join(dir, "a.svg"), "--html", filepath.Join(dir, "a.svg")},
		{"report", run, "--plot", link1, "--html", link2},
	} {
		cmdDir, _ := os.Getwd()
		if strings.HasPrefix(args[len(args)-1], "./") {
			os.Chdir(dir)
		}
		code, _, stderr := pacer(t, args...)
		os.Chdir(cmdDir)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", args[1:], code, stderr)
		}
	}
	for p, b := range before {
		if !bytes.Equal(readFile(t, p), b) {
			t.Errorf("%s was overwritten", p)
		}
	}
}

// closedPipe is a stdout whose reader has gone.
type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestLostOutputExits1: a result written to a closed stdout (--json -,
// merge -o -, report --html -) is lost: exit 1, not 0.
func TestLostOutputExits1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, _ := savedRun(t, dir, "run.json", "run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q")
	a, b := twoShards(t, dir)
	for _, args := range [][]string{
		{"report", run, "--html", "-"},
		{"merge", a, b, "-o", "-"},
		{"merge", a, b},
		{"run", "--embedded", "--rate", "1k", "--duration", "100ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q", "--json", "-"},
	} {
		var errb bytes.Buffer
		code := Main(append([]string{"pacer"}, args...), closedPipe{}, &errb)
		if code != exitFailed {
			t.Errorf("%v into a closed pipe: exit %d, %q; want 1", args[:2], code, errb.String())
		}
	}
}

// TestReportTitleAndLabels: --title names the plots and the page,
// --label FILE=NAME names a file's column, legend entries and title
// (before or after the files, repeated).
func TestReportTitleAndLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := savedRun(t, dir, "a.json", "run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q")
	b, _ := savedRun(t, dir, "b.json", "run", "--embedded", "--rate", "1k", "--duration", "200ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q")
	svg, page := filepath.Join(dir, "p.svg"), filepath.Join(dir, "p.html")
	code, out, stderr := pacer(t, "report", "--label", "a.json=before", a, b, "--label", b+"=after", "--title", "Freeze demo", "--plot", svg, "--html", page)
	if !runOK(code) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "[1] before:") || !strings.Contains(out, "[2] after:") || strings.Contains(out, "a.json") {
		t.Errorf("the text does not use the labels:\n%s", out)
	}
	for _, f := range []string{svg, page} {
		s := string(readFile(t, f))
		if !strings.Contains(s, "Freeze demo") || !strings.Contains(s, "before") || !strings.Contains(s, "after") {
			t.Errorf("%s lacks the title or the labels", f)
		}
	}
	if !strings.Contains(string(readFile(t, page)), "<title>Freeze demo</title>") {
		t.Error("the page is not titled")
	}
	for _, args := range [][]string{
		{"report", a, "--label", "c.json=x"},
		{"report", a, "--label", "a.json"},
		{"report", a, "--label"},
	} {
		if code, _, stderr := pacer(t, args...); code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", args[2:], code, stderr)
		}
	}
}
