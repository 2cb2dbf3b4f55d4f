package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// underLimit runs the binary with args under ulimit -v of kib KiB (and
// enough open files for thousands of connections), returning its exit
// code, stdout and stderr.
func underLimit(t *testing.T, kib int, args ...string) (int, string, string) {
	t.Helper()
	script := "{ ulimit -n 8192 2>/dev/null || ulimit -n $(ulimit -Hn); } && ulimit -v " + strconv.Itoa(kib) + ` && exec "$0" "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, pacerBinary(t)}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestMemoryLimitIsMetBeforeTheRun: under ulimit -v, pacer run -c 9000 at
// its default caps (up to 1 MiB of unsent bytes and 10,000 commands in
// flight per connection) ended in the runtime's "fatal error: out of
// memory" and a dump of every goroutine (89,000 lines, exit 2). A limit
// that cannot hold the connections is said in one line, exit 1, before
// anything is dialled; one that can has the default caps lowered to fit,
// said in a note, and the run goes on with them (the JSON says which).
func TestMemoryLimitIsMetBeforeTheRun(t *testing.T) {
	t.Parallel()
	code, _, stderr := underLimit(t, 2560<<10, "run", "--embedded", "-c", "9000", "--rate", "10k", "-n", "100", "-q")
	if code != exitFailed || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "9000 connections need at least") ||
		!strings.Contains(stderr, "ulimit -v") {
		t.Errorf("ulimit -v 2.5 GiB, -c 9000: exit %d, stderr %q; want one line naming the limit, exit 1", code, head(stderr))
	}
	testrun.SkipShort(t, "runs 2,000 connections")
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr = underLimit(t, 4<<20, "run", "--embedded", "-c", "2000", "--rate", "10k", "-n", "200", "-q", "--json", out)
	// A loaded machine may make the run untrustworthy (4): it ran all the same.
	if code != exitOK && code != exitUntrusted || !strings.Contains(stderr, "pacer: note: ulimit -v of 4096 MiB holds 2000 connections at --max-buffer") {
		t.Fatalf("ulimit -v 4 GiB, -c 2000: exit %d, stderr %q", code, head(stderr))
	}
	var doc struct {
		Config map[string]any `json:"config"`
		Tests  []struct {
			Counts map[string]uint64 `json:"counts"`
		} `json:"tests"`
	}
	b, err := os.ReadFile(out)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil || len(doc.Tests) != 1 || doc.Tests[0].Counts["completed"] != 200 {
		t.Fatalf("%v: %+v", err, doc)
	}
	if mb, _ := doc.Config["max_buffer"].(float64); mb <= 0 || mb >= 1<<20 {
		t.Errorf("config max_buffer %v: want the lowered cap", doc.Config["max_buffer"])
	}
}

// head is the start of a long output, for a failure message.
func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
