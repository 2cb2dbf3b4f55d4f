package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
)

// runPlan replays a plan already made to the sink at addr.
func runPlan(t *testing.T, addr string, cfg Config, plan *Plan) (*scheduler.Result, error) {
	t.Helper()
	env := &experiment.Env{Target: &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: addr, Now: scheduler.Now}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, _, err := Run(ctx, env, cfg, plan, "replay", openloop.Config{Pacing: scheduler.Coarse})
	return res, err
}

// TestReplaySendsWhatWasChecked: a trace replaced at its path after it
// was checked (during --start-in, between --loop passes) is not what is
// sent: the replay reads the file it checked. A trace changed in place
// stops the replay with an error when a pass's digest is not the
// check's.
func TestReplaySendsWhatWasChecked(t *testing.T) {
	cmds := []traceCmd{
		{t: 0, argv: [][]byte{[]byte("SET"), []byte("k"), []byte("checked")}},
		{t: int64(time.Millisecond), argv: [][]byte{[]byte("GET"), []byte("k")}},
	}
	path := writeTrace(t, cmds)
	evil := writeTrace(t, []traceCmd{
		{t: 0, argv: [][]byte{[]byte("FLUSHALL")}},
		{t: int64(time.Millisecond), argv: [][]byte{[]byte("SET"), []byte("k"), []byte("swapped")}},
	})
	cfg := Config{Path: path, Speed: 1, Loops: 3, Conns: 1}
	t.Run("replaced at its path", func(t *testing.T) {
		s, err := sink.Start(sink.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		plan, err := Scan(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer plan.Close()
		if err := os.Rename(evil, path); err != nil {
			t.Fatal(err)
		}
		res, err := runPlan(t, s.Addr(), cfg, plan)
		if err != nil {
			t.Fatal(err)
		}
		var sent []string
		for _, r := range s.Records() {
			if n := string(r.Argv[0]); n == "SET" || n == "GET" || n == "FLUSHALL" {
				sent = append(sent, string(bytes.Join(r.Argv, []byte(" "))))
			}
		}
		want := slices.Repeat([]string{"SET k checked", "GET k"}, 3)
		if !slices.Equal(sent, want) || res.Counts.Completed != 6 {
			t.Errorf("sent %q (completed %d), want the checked trace's %q", sent, res.Counts.Completed, want)
		}
	})
	// Changed in place: the same length, other bytes (what a size check
	// alone misses). With its modification time moved, as a later write
	// moves it, nothing is sent; with the time kept, the pass's digest
	// stops the replay at the pass's end.
	for _, keepTime := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed in place, time kept %v", keepTime), func(t *testing.T) {
			path := writeTrace(t, cmds)
			cfg := cfg
			cfg.Path = path
			s, err := sink.Start(sink.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			plan, err := Scan(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer plan.Close()
			fi, _ := os.Stat(path)
			b, _ := os.ReadFile(path)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(bytes.Replace(b, []byte("checked"), []byte("changed"), 1))
			f.Close()
			at := fi.ModTime().Add(time.Second)
			if keepTime {
				at = fi.ModTime()
			}
			if err := os.Chtimes(path, at, at); err != nil {
				t.Fatal(err)
			}
			_, err = runPlan(t, s.Addr(), cfg, plan)
			if err == nil || !strings.Contains(err.Error(), "changed") || !plan.Changed() {
				t.Errorf("Run: %v (changed %v), want an error that the trace changed", err, plan.Changed())
			}
			sets := 0
			for _, r := range s.Records() {
				if bytes.Equal(r.Argv[0], []byte("SET")) {
					sets++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[keepTime]; sets != want {
				t.Errorf("%d SETs sent, want %d (the first pass, read before its end showed the change)", sets, want)
			}
		})
	}
}

// TestReplayPrefixesSubcommandsKeys: --key-prefix finds keys by the
// command table, subcommands included: OBJECT ENCODING k prefixes k, not
// ENCODING; ZUNIONSTORE's keys come from its key count, XREAD's after
// STREAMS.
func TestReplayPrefixesSubcommandsKeys(t *testing.T) {
	t.Parallel()
	lines := []string{
		"OBJECT ENCODING k", "MEMORY USAGE k SAMPLES 5", "XINFO STREAM s", "ZUNIONSTORE d 2 a b WEIGHTS 1 2",
		"XREAD COUNT 1 STREAMS s t 0 0", "GEORADIUS g 0 0 1 km STORE d", "MSET a 1 b 2", "LMPOP 2 a b LEFT", "GET k",
	}
	want := []string{
		"OBJECT ENCODING p:k", "MEMORY USAGE p:k SAMPLES 5", "XINFO STREAM p:s", "ZUNIONSTORE p:d 2 p:a p:b WEIGHTS 1 2",
		"XREAD COUNT 1 STREAMS p:s p:t 0 0", "GEORADIUS p:g 0 0 1 km STORE p:d", "MSET p:a 1 p:b 2", "LMPOP 2 p:a p:b LEFT", "GET p:k",
	}
	var cmds []traceCmd
	for i, l := range lines {
		var argv [][]byte
		for _, w := range strings.Fields(l) {
			argv = append(argv, []byte(w))
		}
		cmds = append(cmds, traceCmd{t: int64(i) * int64(time.Millisecond), argv: argv})
	}
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, _ := replayTo(t, s.Addr(), Config{Path: writeTrace(t, cmds), Speed: 1, Loops: 1, Conns: 1, KeyPrefix: "p:"})
	var got []string
	for _, r := range s.Records() {
		if n := string(r.Argv[0]); n != "PING" && n != "HELLO" && n != "SELECT" && n != "CLIENT" && n != "INFO" {
			got = append(got, string(bytes.Join(r.Argv, []byte(" "))))
		}
	}
	if !slices.Equal(got, want) || res.Counts.Completed != uint64(len(lines)) {
		t.Errorf("sent (%d completed):\n%s\nwant:\n%s", res.Counts.Completed, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEncodedSize: the size --max-buffer is checked against is the size
// of what the replay sends, its keys prefixed.
func TestEncodedSize(t *testing.T) {
	var keys []int
	for _, c := range []struct {
		cmd    string
		prefix string
	}{
		{"GET k", ""}, {"GET k", "p:"}, {"SET 123456789 v", "p:"}, {"MSET a 1 b 2", "prefix:"},
		{"OBJECT ENCODING k", "p:"}, {"ZUNIONSTORE d 2 a b", "x"}, {"NOSUCH a b", "p:"}, {"PING", "p:"},
	} {
		var argv [][]byte
		for _, w := range strings.Fields(c.cmd) {
			argv = append(argv, []byte(w))
		}
		got := encodedSize(argv, len(c.prefix), &keys)
		if c.prefix != "" {
			if at, ok := cluster.KeyIndexes(nil, argv); ok {
				argv, _ = scenarios.PrefixKeys(argv, at, []byte(c.prefix), nil)
			}
		}
		if want := len(conn.AppendArgs(nil, argv)); got != want {
			t.Errorf("%q with %q: %d, want %d", c.cmd, c.prefix, got, want)
		}
	}
}
