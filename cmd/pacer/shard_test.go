package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/scheduler"
)

func TestShardUsageErrors(t *testing.T) {
	t.Setenv(jobIndexEnv, "x")
	os.Unsetenv(jobIndexEnv) // restored by t.Setenv
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	run := []string{"run", "--embedded", "--rate", "1k", "--duration", "1s", "--seed", "1"}
	tests := []struct {
		name string
		env  string // JOB_COMPLETION_INDEX, when set
		args []string
		want string
	}{
		{"no slash", "", []string{"--shard", "3"}, `--shard "3": want K/N`},
		{"zero shards", "", []string{"--shard", "1/0"}, "want K/N"},
		{"K zero", "", []string{"--shard", "0/3"}, "K must be from 1 to 3"},
		{"K above N", "", []string{"--shard", "4/3"}, "K must be from 1 to 3"},
		{"auto without the index", "", []string{"--shard", "auto/3"}, "JOB_COMPLETION_INDEX is not set"},
		{"auto with a bad index", "3", []string{"--shard", "auto/3"}, `JOB_COMPLETION_INDEX="3" is not an index from 0 to 2`},
		{"auto with a negative index", "-1", []string{"--shard", "auto/3"}, "is not an index"},
		{"auto with garbage", "one", []string{"--shard", "auto/3"}, "is not an index"},
		{"start in the past", "", []string{"--start-at", past}, "--start-at " + past + " has passed (it is now "},
		{"start garbage", "", []string{"--start-at", "tomorrow"}, `--start-at "tomorrow": want an RFC 3339 time`},
		{"both starts", "", []string{"--start-at", soon, "--start-in", "5s"}, "give one"},
		{"start in zero", "", []string{"--start-in", "0s"}, "--start-in 0s: want a positive duration"},
	}
	for _, tc := range tests {
		if tc.env != "" {
			os.Setenv(jobIndexEnv, tc.env)
		}
		wantUsageError(t, tc.want, append(append([]string{}, run...), tc.args...)...)
		os.Unsetenv(jobIndexEnv)
	}
	// A shard without --seed would draw its own timeline.
	code, _, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "--shard", "1/2")
	if code != exitUsage || !strings.Contains(stderr, "--shard needs --seed") {
		t.Errorf("--shard without --seed: exit %d, %q", code, stderr)
	}
}

// TestShardAutoTakesTheJobIndex: --shard auto/N is shard index+1, as in
// a Kubernetes Indexed Job, and a -n bound is the whole timeline's.
func TestShardAutoTakesTheJobIndex(t *testing.T) {
	t.Setenv(jobIndexEnv, "1")
	out := filepath.Join(t.TempDir(), "shard.json")
	code, _, stderr := pacer(t, "run", "--embedded", "--rate", "3k", "-n", "301", "-t", "ping_inline", "-c", "2",
		"--seed", "5", "--shard", "auto/3", "--lag-limit", "1s", "--start-in", "200ms", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "waiting until ") {
		t.Errorf("no waiting line on stderr:\n%s", stderr)
	}
	d := readResult(t, out)
	if d.Shard == nil || d.Shard.K != 2 || d.Shard.N != 3 || d.StartAt == "" {
		t.Fatalf("shard %+v, start_at %q; want 2/3 and a start", d.Shard, d.StartAt)
	}
	tr := d.Tests[0]
	if tr.Counts.Scheduled != 100 || tr.StartedAt != d.StartAt || *tr.TargetRate != 1000 {
		t.Fatalf("counts %+v, started %s (start_at %s), target %v; want shard 2's 100 of 301, at the start, 1000/s",
			tr.Counts, tr.StartedAt, d.StartAt, *tr.TargetRate)
	}
}

// TestShardsMergeIntoOneTimeline: three shard processes (--shard auto/3
// with JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job runs them) from
// one --start-at against one redis-server, merged,
// schedule exactly what one process schedules, interval by interval; the
// merged histograms hold every completed request; pacer report reads the
// merged result. A Poisson process following stages is the hardest
// timeline to split.
func TestShardsMergeIntoOneTimeline(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	target := hostPort(t, srv.Addr)
	bin := pacerBinary(t)
	cases := [][]string{
		{"--stages", "500ms:6k,500ms:6k", "--arrival", "poisson", "-t", "get,set", "--interval", "250ms"},
		{"--rate", "5k", "-n", "2000", "-t", "get", "--interval", "100ms"},
	}
	for ci, shape := range cases {
		if testing.Short() && ci > 0 {
			t.Log("-short: the first case only")
			break
		}
		dir := t.TempDir()
		common := append(append([]string{"run", "-c", "4", "--seed", "11", "--lag-limit", "1s", "--drain", "2s", "-q"}, target...), shape...)
		single := filepath.Join(dir, "single.json")
		if code, _, stderr := pacer(t, append(common, "--json", single)...); code != exitOK && code != exitUntrusted {
			t.Fatalf("single run: exit %d\n%s", code, stderr)
		}
		// Processes, as on several machines (and urfave/cli's help flag is
		// shared by every app in a process): K from JOB_COMPLETION_INDEX.
		// They start together 2 s from now; on a machine so starved that a
		// shard is not up by then (it refuses a --start-at that has
		// passed), the three run again with 10 s to start in.
		files := make([]string, 3)
		var start string
		for _, lead := range []time.Duration{2 * time.Second, 10 * time.Second} {
			start = time.Now().Add(lead).UTC().Format(time.RFC3339Nano)
			cmds := make([]*exec.Cmd, 3)
			stderrs := make([]bytes.Buffer, 3)
			for k := 1; k <= 3; k++ {
				files[k-1] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
				args := append(append([]string{}, common...), "--shard", "auto/3", "--start-at", start, "--json", files[k-1])
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", jobIndexEnv, k-1))
				cmd.Stderr = &stderrs[k-1]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[k-1] = cmd
			}
			late := false
			for k, cmd := range cmds {
				err := cmd.Wait()
				var ee *exec.ExitError
				if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exitUntrusted) {
					if lead < 10*time.Second && strings.Contains(stderrs[k].String(), "has passed") {
						t.Logf("shard %d was not up %v after the start was set (a starved machine): again with 10 s\n%s", k+1, lead, stderrs[k].String())
						late = true
						continue
					}
					t.Fatalf("shard %d: %v\n%s", k+1, err, stderrs[k].String())
				}
			}
			if !late {
				break
			}
		}
		merged := filepath.Join(dir, "merged.json")
		code, stdout, stderr := pacer(t, append([]string{"merge"}, append(files, "-o", merged)...)...)
		if !runOK(code) || !strings.Contains(stdout, "merged shards 1, 2, 3 of 3") {
			t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
		}
		want, got := readResult(t, single), readResult(t, merged)
		if got.Shard == nil || got.Shard.N != 3 || got.StartAt != start {
			t.Fatalf("merged shard %+v start_at %q, want 3 shards from %s", got.Shard, got.StartAt, start)
		}
		if len(got.Tests) != len(want.Tests) {
			t.Fatalf("%d tests merged, %d run", len(got.Tests), len(want.Tests))
		}
		for i, wt := range want.Tests {
			gt := got.Tests[i]
			if gt.Counts.Scheduled != wt.Counts.Scheduled || gt.Counts.Completed != gt.Counts.Scheduled {
				t.Errorf("%v %s: merged counts %+v, the single run scheduled %d", shape, gt.ID, gt.Counts, wt.Counts.Scheduled)
			}
			if *gt.TargetRate != *wt.TargetRate {
				t.Errorf("%s: merged target %v, single %v", gt.ID, *gt.TargetRate, *wt.TargetRate)
			}
			var total int64
			for _, f := range files {
				total += reference.Histogram(t, readResult(t, f).Tests[i].Histograms.Response).TotalCount()
			}
			h := reference.Histogram(t, gt.Histograms.Response)
			if h.TotalCount() != total || uint64(total) != gt.Counts.Completed {
				t.Errorf("%s: merged histogram holds %d, the shards' %d, completed %d", gt.ID, h.TotalCount(), total, gt.Counts.Completed)
			}
			// Interval by interval, the merged schedule is the single run's.
			wantIv := map[float64]uint64{}
			for _, iv := range wt.Intervals[:len(wt.Intervals)-1] { // the last holds the rest
				wantIv[iv.StartS] = iv.Scheduled
			}
			var sched, completed uint64
			for _, iv := range gt.Intervals {
				if w, ok := wantIv[iv.StartS]; ok && iv.Scheduled != w && iv.StartS < gt.Intervals[len(gt.Intervals)-1].StartS {
					t.Errorf("%s: interval at %v s schedules %d, the single run %d", gt.ID, iv.StartS, iv.Scheduled, w)
				}
				sched += iv.Scheduled
				completed += iv.Completed
			}
			if sched != gt.Counts.Scheduled || completed != gt.Counts.Completed {
				t.Errorf("%s: intervals add up to %d scheduled, %d completed; the test %+v", gt.ID, sched, completed, gt.Counts)
			}
		}
		if code, out, stderr := pacer(t, "report", merged); !runOK(code) || !strings.Contains(out, "scheduled") {
			t.Fatalf("report of the merged result: exit %d\n%s\n%s", code, out, stderr)
		}
		// The same files with one left out: refused, unless --partial.
		if code, _, stderr := pacer(t, "merge", files[0], files[2], "-o", merged); code != exitUsage || !strings.Contains(stderr, "shard 2 of 3 missing") {
			t.Fatalf("a missing shard: exit %d, %q", code, stderr)
		}
		if code, stdout, _ := pacer(t, "merge", "--partial", files[0], files[2]); !runOK(code) || !json.Valid([]byte(stdout)) {
			t.Fatalf("--partial to stdout: exit %d\n%s", code, stdout)
		}
		if code, _, stderr := pacer(t, "merge", files[0], single, "-o", merged); code != exitUsage || !strings.Contains(stderr, "single.json is not a shard's result") {
			t.Fatalf("a single run: exit %d, %q", code, stderr)
		}
	}
}

func TestMergeUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no files", []string{"merge"}, "give the shards' result files"},
		{"missing file", []string{"merge", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not a result", []string{"merge", bad}, "not a pacer result"},
		{"output dir missing", []string{"merge", bad, "-o", filepath.Join(dir, "no", "m.json")}, "-o"},
		{"output without file", []string{"merge", bad, "-o"}, "flag needs an argument"},
		{"unknown flag", []string{"merge", bad, "--bogus"}, "bogus"},
	}
	for _, tc := range tests {
		wantUsageError(t, tc.want, tc.args...)
	}
	if code, out, _ := pacer(t, "merge", "--help"); code != exitOK || !strings.Contains(out, "pacer merge shard-1.json") {
		t.Errorf("merge --help: exit %d\n%s", code, out)
	}
}

// TestLaterTestsStartAtPlannedInstants: with a fixed start, each test
// after the first starts where every shard computes it: the previous
// start + its timeline + --drain + scheduler.StartSlack.
func TestLaterTestsStartAtPlannedInstants(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "--duration", "300ms", "--drain", "200ms", "-t", "get,set",
		"-c", "2", "--seed", "3", "--shard", "1/1", "--start-in", "300ms", "--lag-limit", "1s", "-q", "--json", out)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	d := readResult(t, out)
	if len(d.Tests) != 2 {
		t.Fatalf("%d tests", len(d.Tests))
	}
	a, err1 := time.Parse(time.RFC3339Nano, d.Tests[0].StartedAt)
	b, err2 := time.Parse(time.RFC3339Nano, d.Tests[1].StartedAt)
	if err1 != nil || err2 != nil || d.Tests[0].StartedAt != d.StartAt {
		t.Fatalf("started_at %q and %q, start_at %q", d.Tests[0].StartedAt, d.Tests[1].StartedAt, d.StartAt)
	}
	if gap := b.Sub(a); gap != 300*time.Millisecond+200*time.Millisecond+scheduler.StartSlack {
		t.Fatalf("the second test started %v after the first, want 1.5s", gap)
	}
	for _, tr := range d.Tests {
		if tr.Counts.Scheduled != 300 || *tr.TargetRate != 1000 {
			t.Errorf("%s: counts %+v, target %v: one shard of one is the whole timeline", tr.ID, tr.Counts, *tr.TargetRate)
		}
	}
}
