// Command ab measures how far pacer ab's words can be trusted on this
// machine: how often an A/A comparison (two identically configured
// servers) says worse or better (false alarms), and how often a known
// change is found (power). It starts its own servers on loopback, runs
// pacer ab -runs times, and tallies each run's word at p50 and p99 with
// the change's interval, why it could not tell when it could not, and the
// exit code; the load average is printed with every run.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/ab -bin /tmp/pacer -scenario aa -runs 20            # two redis-servers, GET at 10k/s
//	go run ./bench/ab -bin /tmp/pacer -scenario aa -runs 3 -busy 2     # the same under two busy loops
//	go run ./bench/ab -bin /tmp/pacer -scenario serve -b-delay exp:130us -runs 10
//	go run ./bench/ab -bin /tmp/pacer -scenario aof -runs 3            # appendonly no against appendfsync always
//
// Scenarios:
//
//	aa     two redis-servers alike; pacer ab --rate 10k -t get
//	serve  two pacer serve processes, --delay -a-delay against -b-delay; --rate 4k -t get
//	aof    redis-server appendonly no against appendonly yes with appendfsync always;
//	       --rate 5k -t set -d 1024 --max-regression p99:10%
//
// -rounds, -round-duration and -rate change the comparison; -extra adds
// flags to pacer ab. See README.md for the figures measured.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

func main() {
	bin := flag.String("bin", "", "the pacer binary (required)")
	scenario := flag.String("scenario", "aa", "aa, serve or aof")
	runs := flag.Int("runs", 10, "comparisons")
	busy := flag.Int("busy", 0, "busy loops competing for the cores during each comparison")
	rate := flag.String("rate", "", "pacer ab's --rate (default: the scenario's)")
	rounds := flag.Int("rounds", 6, "pacer ab's --rounds")
	roundDuration := flag.Duration("round-duration", 5*time.Second, "pacer ab's --round-duration")
	aDelay := flag.String("a-delay", "exp:100us", "serve: the baseline's --delay")
	bDelay := flag.String("b-delay", "exp:130us", "serve: the candidate's --delay")
	extra := flag.String("extra", "", "more flags for pacer ab, space-separated")
	decideWithin := flag.Duration("decide-within", 0, "pacer ab's --decide-within (0: none); the scenario needs a gate (aof has one, else -extra \"--max-regression ...\")")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "ab: -bin is required")
		os.Exit(2)
	}
	s := setup{bin: *bin, scenario: *scenario, rate: *rate, aDelay: *aDelay, bDelay: *bDelay, budget: *decideWithin}
	if err := s.run(*runs, *busy, *rounds, *roundDuration, strings.Fields(*extra)); err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
}

type setup struct {
	bin, scenario, rate, aDelay, bDelay string
	budget                              time.Duration // --decide-within
}

// targets starts the scenario's two servers and returns their URIs, the
// flags of its workload and what stops them.
func (s setup) targets() (a, b string, flags []string, stop func(), err error) {
	switch s.scenario {
	case "aa", "aof":
		var extra []string
		rate, flags := "10k", []string{"-t", "get"}
		if s.scenario == "aof" {
			extra = []string{"--appendonly", "yes", "--appendfsync", "always"}
			rate, flags = "5k", []string{"-t", "set", "-d", "1024", "--max-regression", "p99:10%"}
		}
		sa, err := kit.Start()
		if err != nil {
			return "", "", nil, nil, err
		}
		sb, err := kit.Start(extra...)
		if err != nil {
			sa.Stop()
			return "", "", nil, nil, err
		}
		return "redis://" + sa.Addr, "redis://" + sb.Addr, append(flags, "--rate", or(s.rate, rate)),
			func() { sa.Stop(); sb.Stop() }, nil
	case "serve":
		pa, aa, err := s.serve(s.aDelay)
		if err != nil {
			return "", "", nil, nil, err
		}
		pb, ab, err := s.serve(s.bDelay)
		if err != nil {
			pa.Process.Kill()
			pa.Wait()
			return "", "", nil, nil, err
		}
		return "redis://" + aa, "redis://" + ab, []string{"-t", "get", "--rate", or(s.rate, "4k")},
			func() {
				for _, p := range []*exec.Cmd{pa, pb} {
					p.Process.Kill()
					p.Wait()
				}
			}, nil
	}
	return "", "", nil, nil, fmt.Errorf("-scenario %q: want aa, serve or aof", s.scenario)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

var listening = regexp.MustCompile(`listening on (127\.0\.0\.1:[0-9]+)`)

// serve starts pacer serve with a delay on a free loopback port.
func (s setup) serve(delay string) (*exec.Cmd, string, error) {
	cmd := exec.Command(s.bin, "serve", "--port", "0", "--bind", "127.0.0.1", "--delay", delay)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			if _, _, err := net.SplitHostPort(m[1]); err == nil {
				return cmd, m[1], nil
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", errors.New("pacer serve printed no address")
}

// figure is what a run's diff says of one figure.
type figure struct {
	Figure      string     `json:"figure"`
	ChangePct   *float64   `json:"change_pct"`
	IntervalPct []*float64 `json:"interval_pct"`
	Word        string     `json:"word"`
	Why         string     `json:"why"`
}

// sideDoc is the part of a side's pacer.result/v1 the rounds are read
// from: each round's percentiles and verdict.
type sideDoc struct {
	Tests []struct {
		Repeats *struct {
			Runs []struct {
				ResponseMs map[string]float64 `json:"response_ms"`
				Verdict    string             `json:"verdict"`
			} `json:"runs"`
		} `json:"repeats"`
	} `json:"tests"`
}

// roundsOf describes the rounds of a comparison from its sides' files: the
// per-round change at p50 and p99 (candidate/baseline − 1) and their
// standard deviation, which decides the paired interval's width, and how
// many rounds of each side were not ok.
func roundsOf(a, b string) string {
	var docs [2]sideDoc
	for i, p := range []string{a, b} {
		raw, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(raw, &docs[i]) != nil || len(docs[i].Tests) == 0 || docs[i].Tests[0].Repeats == nil {
			return ""
		}
	}
	ra, rb := docs[0].Tests[0].Repeats.Runs, docs[1].Tests[0].Repeats.Runs
	if len(ra) != len(rb) {
		return ""
	}
	var out []string
	for _, q := range []string{"p50", "p99"} {
		var ch []float64
		for i := range ra {
			if x, y := ra[i].ResponseMs[q], rb[i].ResponseMs[q]; x > 0 && y > 0 {
				ch = append(ch, 100*(y/x-1))
			}
		}
		var m, ss float64
		for _, c := range ch {
			m += c
		}
		m /= float64(max(len(ch), 1))
		for _, c := range ch {
			ss += (c - m) * (c - m)
		}
		parts := make([]string, len(ch))
		for i, c := range ch {
			parts[i] = fmt.Sprintf("%+.0f", c)
		}
		sd := 0.0
		if len(ch) > 1 {
			sd = math.Sqrt(ss / float64(len(ch)-1))
		}
		out = append(out, fmt.Sprintf("%s per round %s%% (sd %.1f%%)", q, strings.Join(parts, " "), sd))
	}
	behind := [2]int{}
	for s, runs := range [][]struct {
		ResponseMs map[string]float64 `json:"response_ms"`
		Verdict    string             `json:"verdict"`
	}{ra, rb} {
		for _, r := range runs {
			if r.Verdict != "ok" {
				behind[s]++
			}
		}
	}
	out = append(out, fmt.Sprintf("rounds not ok: a %d, b %d of %d", behind[0], behind[1], len(ra)))
	return strings.Join(out, "; ")
}

type diffDoc struct {
	Tests []struct {
		Figures []figure `json:"figures"`
		Decide  *struct {
			Rounds       int     `json:"rounds"`
			Looks        int     `json:"looks"`
			PlannedLooks int     `json:"planned_looks"`
			Level        float64 `json:"level"`
			By           string  `json:"by"`
		} `json:"decide"`
	} `json:"tests"`
	Gate *struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
	} `json:"gate"`
}

func (s setup) run(runs, busy, rounds int, roundDuration time.Duration, extra []string) error {
	a, b, flags, stop, err := s.targets()
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "pacer-ab")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := append([]string{"ab", "--a", a, "--b", b, "--rounds", fmt.Sprint(rounds), "--round-duration", roundDuration.String(), "-q"}, flags...)
	args = append(args, extra...)
	if s.budget > 0 {
		args = append(args, "--decide-within", s.budget.String())
	}
	fmt.Printf("ab: pacer %s; %d runs, %d busy loops, %d CPUs\n", strings.Join(args, " "), runs, busy, runtime.NumCPU())
	tally := map[string]map[string]int{"p50": {}, "p99": {}}
	codes := map[int]int{}
	alarms := 0
	length := max(time.Duration(2*rounds)*(roundDuration+time.Second), s.budget)
	for i := range runs {
		load := loadAverage()
		out := filepath.Join(dir, "d.json")
		stopBusy := startBusy(busy, length+30*time.Second)
		cmd := exec.Command(s.bin, append(args, "--diff-json", out, "--json", filepath.Join(dir, "ab.json"))...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		_ = cmd.Run()
		stopBusy()
		code := cmd.ProcessState.ExitCode()
		codes[code]++
		line := fmt.Sprintf("run %2d (load %s): exit %d", i+1, load, code)
		var d diffDoc
		if raw, err := os.ReadFile(out); err == nil && json.Unmarshal(raw, &d) == nil && len(d.Tests) > 0 {
			alarm := false
			for _, f := range d.Tests[0].Figures {
				if f.Figure != "p50" && f.Figure != "p99" {
					continue
				}
				tally[f.Figure][f.Word]++
				alarm = alarm || f.Word == "worse" || f.Word == "better"
				line += fmt.Sprintf("; %s %s %s %s", f.Figure, f.Word, pct(f.ChangePct), interval(f.IntervalPct))
				if f.Word == "cannot tell" {
					line += " (" + short(f.Why) + ")"
				}
			}
			if alarm {
				alarms++
			}
			if dec := d.Tests[0].Decide; dec != nil {
				line += fmt.Sprintf("; %s at look %d of %d, %d rounds, %.1f%%", dec.By, dec.Looks, dec.PlannedLooks, dec.Rounds, 100*dec.Level)
			}
			if d.Gate != nil {
				line += "; gate " + d.Gate.Outcome
				if d.Gate.Outcome != "pass" {
					line += " (" + d.Gate.Reason + ")"
				}
			}
		} else {
			line += "; no comparison: " + short(stderr.String())
		}
		fmt.Println(line)
		if r := roundsOf(filepath.Join(dir, "ab.a.json"), filepath.Join(dir, "ab.b.json")); r != "" {
			fmt.Println("        " + r)
		}
		os.Remove(out)
	}
	for _, f := range []string{"p50", "p99"} {
		var parts []string
		for _, w := range []string{"worse", "better", "same", "cannot tell"} {
			parts = append(parts, fmt.Sprintf("%s %d", w, tally[f][w]))
		}
		fmt.Printf("summary %s: %s of %d\n", f, strings.Join(parts, ", "), runs)
	}
	var parts []string
	for _, c := range []int{0, 3, 4, 1, 2} {
		if n := codes[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("exit %d: %d", c, n))
		}
	}
	fmt.Printf("summary: worse or better at p50 or p99 in %d of %d runs; %s\n", alarms, runs, strings.Join(parts, ", "))
	return nil
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func interval(iv []*float64) string {
	if len(iv) != 2 {
		return "[-]"
	}
	end := func(v *float64) string {
		if v == nil {
			return "…"
		}
		return fmt.Sprintf("%+.1f%%", *v)
	}
	return "[" + end(iv[0]) + ", " + end(iv[1]) + "]"
}

// short cuts a reason to its first clause.
func short(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " ("); i > 0 && i < 120 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:117] + "…"
	}
	return s
}

// loadAverage is the 1-minute load average (/proc/loadavg), "?" where
// there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// startBusy starts n processes that each spin on a core for at most d,
// and returns what stops them.
func startBusy(n int, d time.Duration) func() {
	if n == 0 {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	var cmds []*exec.Cmd
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if c.Start() == nil {
			cmds = append(cmds, c)
		}
	}
	return func() {
		cancel()
		for _, c := range cmds {
			_ = c.Wait()
		}
	}
}
