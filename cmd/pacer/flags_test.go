package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment/bench"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// The commands run in-process here; main sets GOMAXPROCS once for the
// binary (procsFor), so the tests do what it does for run and compare: one
// P more than the CPUs, as the sleeping pacer holds one.
func init() { runtime.GOMAXPROCS(runtime.NumCPU() + 1) }

// loadCommands are the commands that share the target, workload and
// output flags.
var loadCommands = []string{"run", "bench", "compare", "fill", "sweep"}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

// minimal are the arguments each command needs to get past its own
// required flags.
func minimal(cmd string) []string {
	switch cmd {
	case "run":
		return []string{"--rate", "1k", "-n", "10", "-q"}
	case "bench":
		return []string{"-n", "10", "-q", "-t", "ping"}
	case "compare":
		return []string{"--rate", "1k", "--duration", "100ms", "-q"}
	case "fill":
		return []string{"-r", "10", "-q"}
	case "sweep":
		return []string{"--rates", "1k", "--step-duration", "100ms", "--settle", "0s", "-q"}
	}
	return nil
}

// TestEveryLoadCommandSharesTheTargetFlags: -u, -s, -a, --user, --dbnum,
// -3 and --enable-tracking mean the same in every load command, and
// --cluster makes each of them (a closed sweep too) ask the seed for the
// slot map. Before, run said "flag provided but not defined: -u", "-tls"
// was "not defined" everywhere but in bench, and sweep refused --cluster.
func TestEveryLoadCommandSharesTheTargetFlags(t *testing.T) {
	t.Parallel()
	port := closedPort(t)
	for _, cmd := range loadCommands {
		for _, f := range []string{"-u", "--enable-tracking"} {
			args := append([]string{cmd}, minimal(cmd)...)
			if f == "-u" {
				args = append(args, "-u", "redis://127.0.0.1:"+port+"/1")
			} else {
				args = append(args, f, "-p", port)
			}
			code, _, stderr := pacer(t, args...)
			if code != exitFailed || strings.Contains(stderr, "not defined") {
				t.Errorf("%v: exit %d %q, want 1 (nothing listens there)", args, code, stderr)
			}
		}
		variants := [][]string{minimal(cmd)}
		if cmd == "sweep" {
			variants = append(variants, []string{"--closed", "-c", "1,2", "--step-duration", "100ms", "-q"})
		}
		for _, v := range variants {
			args := append(append([]string{cmd}, v...), "--cluster", "-p", port)
			code, _, stderr := pacer(t, args...)
			if code != exitFailed || !strings.Contains(stderr, "Failed to fetch cluster configuration from 127.0.0.1:"+port) {
				t.Errorf("%v: exit %d %q, want 1 (nothing listens there)", args, code, stderr)
			}
		}
	}
}

// TestUsageErrorsInEveryCommand: -t "" (which ran the whole suite), -P 0
// (silently clamped by fill and compare) and -c above maxConnections are
// usage errors.
func TestUsageErrorsInEveryCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rate", "1k", "-t", ""}, `-t ""`},
		{[]string{"run", "--rate", "1k", "-t", " , "}, `-t`},
		{[]string{"bench", "-t", ""}, `-t ""`},
		{[]string{"compare", "-t", ""}, `-t ""`},
		{[]string{"fill", "-r", "10", "-P", "0"}, "-P 0"},
		{[]string{"compare", "-P", "0"}, "-P 0"},
		{[]string{"serve", "--maxmemory", "lots"}, "--maxmemory"},
		{[]string{"serve", "--maxmemory-clients", "0"}, "--maxmemory-clients"},
		{[]string{"serve", "--maxmemory-clients", "4GiB"}, "--maxmemory-clients"},
		{[]string{"compare", "-P", "-3"}, "-P -3"},
		{[]string{"run", "--rate", "1k", "-c", "10001"}, "want 1 to 10000 connections"},
		{[]string{"bench", "-c", "10001"}, "want 1 to 10000 connections"},
		{[]string{"compare", "-c", "10001"}, "want 1 to 10000 connections"},
		{[]string{"fill", "-r", "10", "-c", "10001"}, "want 1 to 10000 connections"},
		{[]string{"run", "--rate", "1k", "--ratio", "1:x"}, "--ratio"},
		{[]string{"run", "--rate", "1k", "--ratio", "0:0"}, "--ratio"},
		{[]string{"run", "--rate", "1k", "--ratio", "1:1", "--mix", "get:1"}, "--ratio"},
		{[]string{"fill", "-r", "10", "extra"}, "no arguments"},
		{[]string{"compare", "--drain", "-1s"}, "--drain"},
		{[]string{"compare", "--timeout", "0s"}, "--timeout"},
		{[]string{"compare", "--slo", "p99<"}, "p99"},
		{[]string{"fill", "-r", "10", "--slo", "nope"}, "nope"},
	}
	for _, tc := range cases {
		wantUsageError(t, tc.want, tc.args...)
	}
}

// TestMemoryBudgets: the limits of contracts.md are usage errors that
// name the numbers, in every command they apply to.
func TestMemoryBudgets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string
	}{
		// A single command larger than --max-buffer can never be sent.
		{[]string{"run", "--rate", "1k", "-t", "set", "-d", "2000", "--max-buffer", "1KiB"}, []string{"--max-buffer 1KiB", "2"}},
		{[]string{"compare", "--rate", "1k", "-t", "set", "-d", "5000", "--max-buffer", "4KB"}, []string{"--max-buffer 4000"}},
		{[]string{"run", "--rate", "1k", "--max-buffer", "lots"}, []string{"--max-buffer \"lots\""}},
		{[]string{"run", "--rate", "1k", "--max-buffer", "0"}, []string{"--max-buffer"}},
		// FIFOs: c × max-inflight × 32 B above 4 GiB.
		{[]string{"run", "--rate", "1k", "-c", "10000", "--max-inflight", "16777216"}, []string{"-c 10000 × --max-inflight 16777216 × 32 B", "at most 4GiB"}},
		// Values above 512 MiB, in every command (bench used to clamp to 1 GiB).
		{[]string{"bench", "-d", "1000000000"}, []string{"-d 1000000000", "536870912"}},
		{[]string{"run", "--rate", "1k", "-d", "600000000"}, []string{"-d 600000000"}},
		{[]string{"compare", "-d", "600000000"}, []string{"-d 600000000"}},
		{[]string{"fill", "-r", "10", "-d", "600000000"}, []string{"-d 600000000"}},
		// Closed loops hold whole batches: c × P × largest command above 1 GiB.
		{[]string{"bench", "-t", "set", "-d", "100000000", "-c", "50"}, []string{"-c 50 × -P 1 ×", "at most 1GiB"}},
		{[]string{"bench", "-t", "get,set", "-d", "1000000", "-c", "100", "-P", "16"}, []string{"-c 100 × -P 16 ×", "SET"}},
		{[]string{"compare", "-t", "set", "-d", "300000000", "-c", "4", "--max-buffer", "1GiB"}, []string{"-c 4 × -P 1"}},
		{[]string{"fill", "-r", "10", "-d", "100000000", "-c", "16"}, []string{"-c 16 × -P 64"}},
	}
	for _, tc := range cases {
		code, _, stderr := pacer(t, tc.args...)
		ok := code == exitUsage && strings.Count(strings.TrimSpace(stderr), "\n") == 0
		for _, w := range tc.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestLargestCommand checks the computed size of the largest command
// against the bytes the stream really sends.
func TestLargestCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--rate", "1k", "-t", "set,get,mset,xadd,ping_inline,hset", "-d", "77", "-r", "10"},
		{"run", "--rate", "1k", "-t", "set", "-d", "9"},
		{"run", "--rate", "1k", "-t", "lrange_100", "-d", "1000"},
		{"run", "--rate", "1k", "--", "HSET", "h:__rand_int__", "f__data__x", "__data____data__"},
		{"run", "--rate", "1k", "-r", "5", "--command", "SET k:__key__ v__data__", "--command", "GET __rand_int__"},
	} {
		var got []int64
		var want []int64
		app := newApp(io.Discard, io.Discard)
		for _, c := range app.Commands {
			if c.Name == "run" {
				c.Action = func(ctx *cli.Context) error {
					cfg, err := parseRunConfig(ctx)
					if err != nil {
						return err
					}
					for _, tt := range cfg.work.tests {
						got = append(got, int64(tt.Recipe.MaxCommandSize()))
						s, err := tt.Stream(1)
						if err != nil {
							return err
						}
						most := 0
						for range 200 {
							b, _ := s.Next()
							most = max(most, len(b))
						}
						want = append(want, int64(most))
					}
					return nil
				}
			}
		}
		if err := app.Run(append([]string{"pacer"}, args...)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: largest %v, streams sent up to %v", args, got, want)
		}
	}
}

// TestRatioIsAMixOfSetAndGet: memtier's --ratio SET:GET is the same test
// as --mix set:SET,get:GET.
func TestRatioIsAMixOfSetAndGet(t *testing.T) {
	t.Parallel()
	doc, _ := runJSON(t, anyVerdict, "run", "--embedded", "--rate", "2k", "-n", "400", "-c", "2", "-r", "100", "--ratio", "1:3", "-q", "--lag-limit", "1s", "--seed", "3")
	if len(doc.Tests) != 1 || doc.Tests[0].Name != "MIX set:1,get:3" {
		t.Fatalf("--ratio 1:3 ran %+v, want the test MIX set:1,get:3", doc.Tests)
	}
}

// TestCompareHasSLOErrorsAndTimeout: compare takes --slo (judging the open
// runs, exit 3 on a miss), -e and --timeout like run.
func TestCompareHasSLOErrorsAndTimeout(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "c.json")
	code, stdout, stderr := pacer(t, "compare", "--embedded", "--error-rate", "0.2", "--rate", "500", "--duration", "300ms", "-c", "2",
		"-q", "-e", "--timeout", "5s", "--slo", "errors<1%", "--json", out, "--seed", "1")
	// 4 (generator behind) outranks 3 and depends on the machine's load.
	if (code != exitSLO && code != exitUntrusted) || !strings.Contains(stdout, "slo: VIOLATED: errors") || !strings.Contains(stderr, "Error from server: ERR injected") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var doc struct {
		Tests []struct {
			Mode string          `json:"mode"`
			SLO  json.RawMessage `json:"slo"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(readFile(t, out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tests) != 2 || doc.Tests[0].SLO != nil || doc.Tests[1].SLO == nil {
		t.Fatalf("the open run carries the SLO, the closed one not: %+v", doc.Tests)
	}
}

// TestFillWritesJSONAndChecksSLO: fill takes the output flags too.
func TestFillWritesJSONAndChecksSLO(t *testing.T) {
	srv := redistest.Start(t)
	doc, stdout := runJSON(t, exitOK, "fill", "-p", srv.PortString(), "-r", "500", "-d", "8", "-q", "--slo", "errors<1%")
	if len(doc.Tests) != 1 || doc.Tests[0].Counts["completed"] != 500 || !strings.Contains(stdout, "slo: pass") {
		t.Fatalf("fill --json: %+v %q", doc.Tests, stdout)
	}
}

// TestHelpWaysReachMain: helpArgs is what Main runs: pacer -h and pacer
// help print the overview, pacer help run the command's help, all exit 0.
// Before, pacer -h said "flag: help requested" (exit 2) and pacer help run
// "unknown command".
func TestHelpWaysReachMain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"-h"}, "\nCOMMANDS:"},
		{[]string{"help"}, "\nCOMMANDS:"},
		{[]string{"--help"}, "\nCOMMANDS:"},
		{[]string{"help", "run"}, "pacer run - "},
		{[]string{"bench", "-h"}, "pacer bench - "},
	} {
		code, out, stderr := pacer(t, tc.args...)
		if code != exitOK || !strings.Contains(out, tc.want) || !strings.Contains(out, "EXIT CODES") || stderr != "" {
			t.Errorf("pacer %q: exit %d, stderr %q, stdout lacks %q or the exit codes:\n%s", tc.args, code, stderr, tc.want, out)
		}
	}
}

// TestUsageErrorsPrintOneLine: cases FuzzCLI found where exit 2 came with
// more than the one line: pacer with no command printed the whole help
// (and nothing on stderr), bench printed its warnings, and every load
// command the --metrics-addr banner, before a usage error found after them.
func TestUsageErrorsPrintOneLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"bench", "-p", closedPort(t), "--threads", "900", "-k", "0", "--stall", "1ms"},
		{"bench", "-p", closedPort(t), "-t", "get", "--stall", "1ms", "--", "PING"},
		{"bench", "--embedded", "--metrics-addr", "127.0.0.1:0", "-h", "127.0.0.1", "-n", "10"},
		{"run", "--embedded", "--rate", "1k", "--metrics-addr", "127.0.0.1:0", "-p", "6379"},
		{"compare", "--metrics-addr", "127.0.0.1:0", "--stall", "1ms", "-p", closedPort(t)},
	} {
		code, out, stderr := pacer(t, args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "pacer: ") || out != "" {
			t.Errorf("pacer %q: exit %d, stdout %q, stderr %q: want 2 and one line on stderr", args, code, out, stderr)
		}
	}
}

// TestCommandHelp: every command's --help lists its flags by category in
// the order target, load, workload, output, with a placeholder for every
// value (never "value"), and ends with two examples and the exit codes.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range append(loadCommands, "serve") {
		code, out, stderr := pacer(t, cmd, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: exit %d %s", cmd, code, stderr)
		}
		last := -1
		for _, cat := range helpCategories {
			i := strings.Index(out, "\n"+strings.ToUpper(cat)+":\n")
			if i < 0 {
				continue
			}
			if i < last {
				t.Errorf("%s --help: %s out of order", cmd, cat)
			}
			last = i
		}
		for _, cat := range []string{catTarget, catLoad, catOutput} {
			if cmd != "serve" && !strings.Contains(out, "\n"+strings.ToUpper(cat)+":\n") {
				t.Errorf("%s --help has no %s section", cmd, cat)
			}
		}
		if strings.Contains(out, "VALUE") || strings.Contains(strings.ToLower(out), " value ") && strings.Contains(out, " value\t") {
			t.Errorf("%s --help has a flag without a placeholder:\n%s", cmd, out)
		}
		ex := strings.Index(out, "\nEXAMPLES:\n")
		codes := strings.Index(out, "\nEXIT CODES")
		if ex < 0 || codes < ex || strings.Count(out[ex:codes], "pacer "+cmd) != 2 || !strings.Contains(out[codes:], "130") {
			t.Errorf("%s --help does not end with two examples and the exit codes:\n%s", cmd, out)
		}
		for _, f := range commandFlags(cmd) {
			if !strings.Contains(out, f) {
				t.Errorf("%s --help does not list %s", cmd, f)
			}
		}
	}
	// The users' first flags come first.
	_, out, _ := pacer(t, "run", "--help")
	if !(strings.Index(out, "-h HOST") < strings.Index(out, "--rate RATE") &&
		strings.Index(out, "--rate RATE") < strings.Index(out, "-c N") &&
		strings.Index(out, "-c N") < strings.Index(out, "-t TESTS")) {
		t.Errorf("run --help: target, rate, connections and tests should come first:\n%s", out)
	}
	testrun.Contains(t, out, "--duration DURATION", "-n N", "--rate RATE", "--max-buffer BYTES", "--ratio SET:GET")
}

// commandFlags lists a command's flags as help shows them.
func commandFlags(name string) []string {
	var out []string
	for _, c := range newApp(io.Discard, io.Discard).Commands {
		if c.Name != name {
			continue
		}
		for _, f := range c.Flags {
			n := f.Names()[0]
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return out
}

// TestCommandsLeaveGOMAXPROCSAlone: actions used to raise GOMAXPROCS
// (run, compare) or set it to 1 (bench) and never restore it; procsFor
// decides it once in main instead.
func TestCommandsLeaveGOMAXPROCSAlone(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, args := range [][]string{
		{"run", "--embedded", "--rate", "1k", "-n", "20", "-c", "1", "-t", "ping", "-q", "--lag-limit", "1s"},
		{"bench", "-p", closedPort(t), "-n", "10", "-q", "-t", "ping"},
		{"compare", "--embedded", "--rate", "1k", "--duration", "100ms", "-c", "1", "-q"},
	} {
		pacer(t, args...)
		if now := runtime.GOMAXPROCS(0); now != before {
			runtime.GOMAXPROCS(before)
			t.Errorf("%v changed GOMAXPROCS from %d to %d", args, before, now)
		}
	}
}

func TestProcsFor(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	n := runtime.NumCPU()
	for in, want := range map[string]int{
		"pacer run --rate 1k":               n + 1,
		"pacer compare":                     n + 1,
		"pacer bench -q":                    1,
		"pacer bench --threads 3":           3,
		"pacer bench --cluster -q":          n + 1,
		"pacer bench --cluster --threads 2": 2,
		"pacer bench --threads=4":           4,
		"pacer bench --threads 900":         500,
		"pacer bench --embedded -t get":     0,
		"pacer fill -r 10":                  0,
		"pacer serve":                       0,
		"pacer":                             0,
		"pacer bench -- ECHO --threads 30":  1,
	} {
		if got := procsFor(strings.Fields(in)); got != want {
			t.Errorf("procsFor(%q) = %d, want %d", in, got, want)
		}
	}
	t.Setenv("GOMAXPROCS", "2")
	if got := procsFor([]string{"pacer", "run"}); got != 0 {
		t.Errorf("GOMAXPROCS set: procsFor = %d, want 0 (leave it)", got)
	}
}

// TestBenchLoopJSONOneEntryPerTest: bench -l --json wrote an entry per
// loop (memory growing with the run); now one per test, summed.
func TestBenchLoopJSONOneEntryPerTest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "loop.json")
	threeLoops := func(stdout string) bool { return strings.Count(stdout, "GET:") >= 3 }
	done, _, _ := startMain(t, threeLoops, "no loops", "bench", "--embedded", "-l", "-n", "300", "-c", "2", "-q", "-t", "set,get", "--json", out)
	if code := interrupt(t, done, "bench -l"); code != exitInterrupted {
		t.Fatalf("exit %d", code)
	}
	doc := readJSON[resultDoc](t, out)
	if len(doc.Tests) != 2 || doc.Tests[0].Name != "SET" || doc.Tests[1].Name != "GET" || doc.Tests[1].Counts["completed"] < 3*300 {
		t.Fatalf("tests %+v: want SET and GET once each, with every loop's requests", doc.Tests)
	}
	// The loops' interval series follow one another and still add up.
	var series struct {
		Tests []struct {
			Counts    map[string]uint64 `json:"counts"`
			Intervals []struct {
				StartS    float64 `json:"start_s"`
				DurationS float64 `json:"duration_s"`
				Completed uint64  `json:"completed"`
			} `json:"intervals"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(readFile(t, out), &series); err != nil {
		t.Fatal(err)
	}
	for _, ts := range series.Tests {
		sum, end := uint64(0), 0.0
		for _, iv := range ts.Intervals {
			// start_s and duration_s are each rounded to the µs: their
			// sum may exceed the next start by up to 1 µs, plus float error.
			if iv.StartS < end-1.5e-6 {
				t.Fatalf("interval at %v s starts before the previous one ended (%v s)", iv.StartS, end)
			}
			sum, end = sum+iv.Completed, iv.StartS+iv.DurationS
		}
		if len(ts.Intervals) < 3 || sum != ts.Counts["completed"] {
			t.Fatalf("%d intervals with %d completed, the test %d", len(ts.Intervals), sum, ts.Counts["completed"])
		}
	}
}

// TestServerConfigIgnoresHugeReplies: the header's CONFIG GET values are
// a few bytes; a server answering with a megabyte is shown as no CONFIG.
func TestServerConfigIgnoresHugeReplies(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2, 1 << 20} {
		v := strings.Repeat("x", size)
		srv := hostile.Start(t, hostile.Answer(fmt.Sprintf("*2\r\n$4\r\nsave\r\n$%d\r\n%s\r\n", len(v), v)))
		id := endpoint.AskServer(context.Background(), conn.Options{Network: "tcp", Addr: srv.Addr}, nil, nil).ID
		save, _, ok := bench.ServerConfig(id)
		srv.Close()
		if want := size <= 1024; ok != want || ok && save != "xx" {
			t.Errorf("a %d-byte value: ok %v save %d bytes", size, ok, len(save))
		}
	}
}

// TestURIErrorsNeverEchoThePassword: a bad -u is one line that does not
// repeat the password it holds.
func TestURIErrorsNeverEchoThePassword(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"rediss://bob:s3cret@h:1/x", "redis://bob:s3cret@h:99999", "redis://:s3cret@h/x", "http://:s3cret@h", "redis://bob:s3cret@[::1"} {
		code, _, stderr := pacer(t, "run", "--rate", "1k", "-u", u)
		if code != exitUsage || strings.Contains(stderr, "s3cret") || !strings.HasPrefix(stderr, "pacer: -u") {
			t.Errorf("-u %s: exit %d %q", u, code, stderr)
		}
	}
}

// TestAppHelpTemplate renders the overview app.go shows for pacer --help.
func TestAppHelpTemplate(t *testing.T) {
	t.Parallel()
	app := newApp(io.Discard, io.Discard)
	var b bytes.Buffer
	cli.HelpPrinter(&b, appHelpTemplate, app)
	out := b.String()
	testrun.Contains(t, out, "run ", "bench ", "compare ", "fill ", "serve ", "EXAMPLES:", "EXIT CODES", "130")
}
