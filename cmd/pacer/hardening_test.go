package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBadInvocations: every bad input is one line on stderr and exit 2,
// never a stack trace, for every command.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	// A regular file as the directory: unwritable even for root.
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	cases := [][]string{
		{"run"},
		{"run", "--rate", "0"},
		{"run", "--rate", "-1"},
		{"run", "--rate", "1e3"},
		{"run", "--rate", "10x"},
		{"run", "--rate", "1k", "--duration", "ten"},
		{"run", "--rate", "1k", "--duration", "-1s"},
		{"run", "--rate", "1k", "-n", "0"},
		{"run", "--rate", "1k", "-c", "-4"},
		{"run", "--rate", "1k", "-c", "100000"},
		{"run", "--rate", "1k", "-t", "get,bogus"},
		{"run", "--rate", "1k", "-d", "-3"},
		{"run", "--rate", "1k", "-d", "1k"},
		{"run", "--rate", "1k", "-d", "5-2"},
		{"run", "--rate", "1k", "-r", "ten"},
		{"run", "--rate", "1k", "--arrival", "burst"},
		{"run", "--rate", "1k", "--pacing", "fast"},
		{"run", "--rate", "1k", "--drain", "-1s"},
		{"run", "--rate", "1k", "--timeout", "0s"},
		{"run", "--rate", "1k", "--max-backlog", "0s"},
		{"run", "--rate", "1k", "--max-inflight", "-1"},
		{"run", "--rate", "1k", "--lag-limit", "-1ms"},
		{"run", "--rate", "1k", "--slo", "p99"},
		{"run", "--rate", "1k", "--slo", "p99<soon"},
		{"run", "--rate", "1k", "--slo", "latency<5ms"},
		{"run", "--rate", "1k", "--slo", "errors<200%"},
		{"run", "--rate", "1k", "--json", filepath.Join(notDir, "x.json")},
		{"run", "--rate", "1k", "--json", filepath.Join(dir, "missing", "x.json")},
		{"run", "--rate", "1k", "-t", "get", "--", "SET", "a", "b"},
		{"run", "--rate", "1k", "--mix", "get:1", "--", "PING"},
		{"run", "--rate", "1k", "--embedded", "-h", "10.0.0.1"},
		{"run", "--rate", "1k", "--stall", "1s", "--every", "2s"},
		{"run", "--rate", "1k", "-p", "0"},
		{"run", "--rate", "1k", "--dbnum", "-1"},
		{"run", "--rate", "1k", "--no-such-flag"},
		{"bench", "-n", "-5"},
		{"bench", "-c", "0"},
		{"bench", "--tls"},
		{"bench", "--cluster"},
		{"bench", "--slo", "p99<"},
		{"bench", "-u", "redis://"},
		{"bench", "--latency", "avg"},
		{"bench", "-x"},
		{"compare", "--duration", "0s"},
		{"compare", "-t", "get,set"},
		{"compare", "--rate", "zero"},
		{"compare", "--pacing", "slow"},
		{"fill", "-r", "0"},
		{"fill", "-r", "10", "-d", "0"},
		{"serve", "--port", "99999"},
		{"serve", "--delay", "soon"},
		{"serve", "extra-arg"},
		{"nosuchcommand"},
	}
	for _, args := range cases {
		code, _, stderr := pacer(t, args...)
		msg := strings.TrimSpace(stderr)
		if code != exitUsage || msg == "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "pacer: ") ||
			strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 and one line starting with 'pacer: '", args, code, stderr)
		}
	}
	if len(cases) < 48 {
		t.Fatal("keep dozens of cases")
	}
}

func TestSLOExitCodes(t *testing.T) {
	base := []string{"run", "--embedded", "--rate", "1k", "-n", "500", "-c", "2", "-t", "get", "-q", "--lag-limit", "1s"}
	code, out, stderr := pacer(t, append(base, "--slo", "p99<1s,errors<1%")...)
	if code != exitOK || !strings.Contains(out, "slo pass") {
		t.Fatalf("passing SLO: exit %d %q %q", code, out, stderr)
	}
	code, out, _ = pacer(t, append(base, "--slo", "p99<1ns")...)
	if code != exitSLO || !strings.Contains(out, "slo violated") {
		t.Fatalf("violated SLO: exit %d %q", code, out)
	}
	// An injected error rate breaks an error budget; bench reports on stderr.
	code, _, stderr = pacer(t, "bench", "--embedded", "--error-rate", "0.05", "-e", "-n", "1000", "-q", "-t", "get", "--slo", "errors<1%")
	if code != exitSLO || !strings.Contains(stderr, "slo: VIOLATED: errors") {
		t.Fatalf("bench: exit %d stderr %q", code, stderr)
	}
}

// buildPacer builds the binary once per test run.
var buildOnce struct {
	sync.Once
	path string
	err  error
}

func pacerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pacer-bin")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "pacer")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, ".").CombinedOutput()
		if err != nil {
			buildOnce.err = &exec.ExitError{Stderr: out}
		}
	})
	if buildOnce.err != nil {
		t.Fatalf("build: %v", buildOnce.err)
	}
	return buildOnce.path
}

// TestFirstCtrlCDrainsAndWritesPartialResults sends a real SIGINT to the
// binary: it stops the timeline, writes the JSON marked interrupted with
// every request accounted for, and exits 130.
func TestFirstCtrlCDrainsAndWritesPartialResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "partial.json")
	cmd := exec.Command(pacerBinary(t), "run", "--embedded", "--rate", "2k", "--duration", "60s", "-c", "4", "-t", "get", "-q", "--json", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v, want 130 within the 2 s drain", code, time.Since(start))
	}
	var doc struct {
		Interrupted bool `json:"interrupted"`
		Tests       []struct {
			Interrupted bool              `json:"interrupted"`
			Counts      map[string]uint64 `json:"counts"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(readFile(t, out), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Tests[0].Counts
	if !doc.Interrupted || !doc.Tests[0].Interrupted || c["scheduled"] == 0 || c["scheduled"] > 20000 ||
		c["scheduled"] != c["completed"]+c["errors"]+c["timeouts"]+c["unsent"] {
		t.Fatalf("partial result %+v", doc)
	}
}

// TestSecondCtrlCExitsAtOnce: with the server frozen, the drain would wait
// its 2 s; a second SIGINT ends the process at once.
func TestSecondCtrlCExitsAtOnce(t *testing.T) {
	cmd := exec.Command(pacerBinary(t), "run", "--embedded", "--stall", "9s", "--every", "10s", "--rate", "1k", "--duration", "60s", "-c", "2", "-t", "get", "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(11 * time.Second) // inside the first stall: requests pile up unanswered
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || time.Since(start) > time.Second {
		t.Fatalf("exit %d %v after the second SIGINT, want 130 at once", code, time.Since(start))
	}
}
