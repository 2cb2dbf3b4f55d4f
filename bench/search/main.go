// Command search measures whether `pacer sweep --search` agrees with
// itself. It runs -pairs pairs of searches for one SLO against each
// target, interleaved (pair k: each target's first search, then each
// target's second), and reads from each search's JSON its sustainable
// interval [lo, hi] (lo surely passes, hi surely fails), its steps, how
// it ended and its exit code. Per pair it says whether the two intervals
// overlap (they must, if both are right: the sustainable rate lies in
// each); per target, how many pairs overlapped and the medians of lo, hi
// and the steps. A search that agrees with itself has at least 4 of 5
// pairs overlapping for p99<=5ms.
//
// Targets: embedded (`--embedded --delay exp:100us`, an M/M/1-like
// server of 100 µs services, in pacer's own process), serve (the same
// server as `pacer serve --delay exp:100us` in a process of its own, which
// it starts on loopback: the in-process figure should lie within 10% of
// it) and redis (a redis-server it starts on loopback, -t get -r 100000). Before and after the searches it measures
// the machine's noise floor: the worst service-time p99 of `pacer run`
// at 1k/s and 16k/s for 2 s against the target without its own share
// (the embedded target without delay, or the redis-server). Where that
// floor nears the SLO's bound a search measures the machine, not the
// server.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/search -bin /tmp/pacer                                  # 5 pairs, embedded, p99<=5ms
//	go run ./bench/search -bin /tmp/pacer -targets embedded,redis -slo 'p99<=1ms'
//	go run ./bench/search -bin /tmp/pacer -pairs 1 -step-duration 1s -settle 250ms -max-steps 6
//
// It builds nothing: -bin is the pacer to measure. Searches take minutes
// each; the machine must be quiet for the numbers to say anything about
// the search.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

// result is one search, read from its JSON document.
type result struct {
	lo, hi    float64 // 0: none (hi: no rate surely failed)
	steps     int
	converged bool
	reason    string
	code      int
	table     string // the rates measured, with how each was decided
	took      time.Duration
}

// doc is the part of pacer.result/v1 a search's result is read from.
type doc struct {
	Tests []struct {
		Step *struct {
			TargetRate float64 `json:"target_rate"`
			Decision   string  `json:"decision"`
		} `json:"step"`
		Response *struct {
			P99 float64 `json:"p99"`
		} `json:"response_ms"`
	} `json:"tests"`
	Sweep *struct {
		SustainableInterval []*float64 `json:"sustainable_interval"`
		Steps               int        `json:"steps"`
		Converged           bool       `json:"converged"`
		Reason              string     `json:"reason"`
	} `json:"sweep"`
}

// marks abbreviates a step's decision in the rates line.
var marks = map[string]string{"pass": "", "fail": "x", "unsustainable": "x~", "aborted": "x!", "saturated": "x%", "uncertain": "?", "inconclusive": "c", "unjudged": "-"}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	pairs := flag.Int("pairs", 5, "pairs of searches per target (interleaved)")
	targets := flag.String("targets", "embedded", "targets: embedded (--embedded --delay exp:100us), serve (pacer serve --delay exp:100us in its own process), redis (a redis-server on loopback)")
	slo := flag.String("slo", "p99<=5ms", "--slo")
	stepDur := flag.Duration("step-duration", 0, "--step-duration (0: pacer's default)")
	settle := flag.Duration("settle", -1, "--settle (negative: pacer's default)")
	maxSteps := flag.Int("max-steps", 0, "--max-steps (0: pacer's default)")
	floor := flag.Bool("noise-floor", true, "measure the machine's noise floor before and after")
	flag.Parse()
	if *pairs < 1 {
		fmt.Fprintln(os.Stderr, "bench: -pairs must be at least 1")
		os.Exit(2)
	}

	names := strings.Split(*targets, ",")
	var srv *kit.Server
	var servePort string
	for _, n := range names {
		switch n {
		case "serve":
			stop, port, err := startServe(*bin)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: pacer serve: %v\n", err)
				os.Exit(1)
			}
			defer stop()
			servePort = port
		case "embedded":
		case "redis":
			if srv != nil {
				continue
			}
			srv = kit.Must(kit.Start())
			defer srv.Stop()
		default:
			fmt.Fprintf(os.Stderr, "bench: -targets: unknown target %q (want embedded, serve or redis)\n", n)
			os.Exit(2)
		}
	}
	dir := kit.Must(os.MkdirTemp("", "pacer-bench-search"))
	defer os.RemoveAll(dir)

	args := []string{"sweep", "--search", "--slo", *slo, "-t", "get", "-q"}
	if *stepDur > 0 {
		args = append(args, "--step-duration", stepDur.String())
	}
	if *settle >= 0 {
		args = append(args, "--settle", settle.String())
	}
	if *maxSteps > 0 {
		args = append(args, "--max-steps", fmt.Sprint(*maxSteps))
	}
	fmt.Printf("pacer sweep --search --slo '%s' -t get%s: %d pairs per target, interleaved\n", *slo, flagText(*stepDur, *settle, *maxSteps), *pairs)

	floors := func(when string) {
		if !*floor {
			return
		}
		for _, n := range names {
			f, err := noiseFloor(*bin, n, srv)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s noise floor: %v\n", n, err)
				continue
			}
			fmt.Printf("%-8s noise floor %s: service p99 %.3f ms (the worst of 1k/s and 16k/s for 2 s)\n", n, when, f)
		}
	}
	floors("before")
	// res[target][pair] holds the pair's two searches.
	res := map[string][][2]*result{}
	for _, n := range names {
		res[n] = make([][2]*result, *pairs)
	}
	failed := false
	for k := range *pairs {
		for half := range 2 {
			for _, n := range names {
				target := []string{"--embedded", "--delay", "exp:100us"}
				switch n {
				case "redis":
					target = []string{"-h", "127.0.0.1", "-p", srv.Port, "-r", "100000"}
				case "serve":
					target = []string{"-h", "127.0.0.1", "-p", servePort}
				}
				out := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.json", n, k, half))
				s, err := search(*bin, append(append(append([]string{}, args...), target...), "--json", out), out)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: %s pair %d search %d: %v\n", n, k+1, half+1, err)
					failed = true
					continue
				}
				res[n][k][half] = &s
				fmt.Printf("%-8s pair %d/%d: %s in %2d steps, exit %d, %s: %s\n", n, k+1, half+1, interval(s), s.steps, s.code, s.took.Round(time.Second), s.reason)
				fmt.Printf("         rates: %s\n", s.table)
			}
		}
	}
	floors("after")
	fmt.Println()
	fmt.Printf("%-8s %4s  %-26s %-26s %s\n", "target", "pair", "first [lo, hi] /s", "second [lo, hi] /s", "overlap")
	for _, n := range names {
		var all []*result
		overlaps, complete := 0, 0
		for k, p := range res[n] {
			a, b := p[0], p[1]
			for _, s := range p {
				if s != nil {
					all = append(all, s)
				}
			}
			if a == nil || b == nil {
				continue
			}
			complete++
			ok := overlap(*a, *b)
			if ok {
				overlaps++
			}
			fmt.Printf("%-8s %4d  %-26s %-26s %s\n", n, k+1, interval(*a), interval(*b), map[bool]string{true: "yes", false: "NO"}[ok])
		}
		if len(all) == 0 {
			continue
		}
		codes := map[int]int{}
		for _, s := range all {
			codes[s.code]++
		}
		fmt.Printf("%-8s %d of %d pairs overlap; medians of %d searches: lo %s/s, hi %s/s, %.0f steps; exits %s\n",
			n, overlaps, complete, len(all), rateText(kit.Median(all, func(s *result) float64 { return s.lo })),
			rateText(kit.Median(all, func(s *result) float64 { return upper(*s) })), kit.Median(all, func(s *result) float64 { return float64(s.steps) }), codeText(codes))
	}
	if failed {
		os.Exit(1)
	}
}

// upper is a search's hi, +Inf when no rate surely failed.
func upper(s result) float64 {
	if s.hi == 0 {
		return math.Inf(1)
	}
	return s.hi
}

// overlap reports whether two sustainable intervals share a rate: each
// says the sustainable rate lies in [lo, hi) (lo 0: none passed; hi
// none: no rate failed).
func overlap(a, b result) bool {
	return max(a.lo, b.lo) < min(upper(a), upper(b))
}

// search runs one search and reads its document. Exit codes 0, 3 and 4
// are results (found; none found, the server's; not sure).
func search(bin string, args []string, out string) (result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = os.Stderr // the step table, for the record
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	s := result{took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && (ee.ExitCode() == 3 || ee.ExitCode() == 4):
		s.code = ee.ExitCode()
	default:
		return s, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return s, err
	}
	var d doc
	if err := json.Unmarshal(data, &d); err != nil {
		return s, err
	}
	if d.Sweep == nil || len(d.Sweep.SustainableInterval) != 2 {
		return s, fmt.Errorf("%s: no sweep with a sustainable_interval", out)
	}
	if v := d.Sweep.SustainableInterval[0]; v != nil {
		s.lo = *v
	}
	if v := d.Sweep.SustainableInterval[1]; v != nil {
		s.hi = *v
	}
	s.steps, s.converged, s.reason = d.Sweep.Steps, d.Sweep.Converged, d.Sweep.Reason
	var cells []string
	for _, t := range d.Tests {
		if t.Step == nil {
			continue
		}
		cell := fmt.Sprintf("%.0f%s", t.Step.TargetRate, marks[t.Step.Decision])
		if t.Response != nil {
			cell += fmt.Sprintf("(%.2f)", t.Response.P99)
		}
		cells = append(cells, cell)
	}
	s.table = strings.Join(cells, " ") + "  (x failed, x~ unsustainable, x! aborted, x% saturated (the host full with the test itself), ? uncertain, c the client's, - unjudged; p99 ms)"
	return s, nil
}

// noiseFloor is the worst service-time p99 in ms of `pacer run` at 1k/s
// and at 16k/s for 2 s against the target without its own share: what the
// machine's scheduling adds to every step.
func noiseFloor(bin, target string, srv *kit.Server) (float64, error) {
	floor := 0.0
	for _, rate := range []string{"1k", "16k"} {
		out, err := os.CreateTemp("", "pacer-bench-floor-*.json")
		if err != nil {
			return 0, err
		}
		out.Close()
		defer os.Remove(out.Name())
		args := []string{"run", "--embedded"}
		if target == "redis" {
			args = []string{"run", "-h", "127.0.0.1", "-p", srv.Port}
		}
		// serve's floor is the embedded target's: the same server, without
		// its delay.
		args = append(args, "--rate", rate, "--duration", "2s", "-t", "get", "-q", "--json", out.Name())
		cmd := exec.Command(bin, args...)
		var ee *exec.ExitError
		if err := cmd.Run(); err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 4) {
			return 0, err
		}
		data, err := os.ReadFile(out.Name())
		if err != nil {
			return 0, err
		}
		var d struct {
			Tests []struct {
				Service struct {
					P99 float64 `json:"p99"`
				} `json:"service_ms"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &d); err != nil || len(d.Tests) != 1 {
			return 0, fmt.Errorf("%s: %v", out.Name(), err)
		}
		floor = max(floor, d.Tests[0].Service.P99)
	}
	return floor, nil
}

// startServe starts `pacer serve --delay exp:100us` on a free loopback
// port, in a process of its own, and returns what stops it and its port.
func startServe(bin string) (func(), string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	cmd := exec.Command(bin, "serve", "--bind", "127.0.0.1", "--port", port, "--delay", "exp:100us")
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	for range 200 {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port)); err == nil {
			c.Close()
			return stop, port, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	return nil, "", fmt.Errorf("pacer serve on port %s did not come up", port)
}

// interval prints a search's [lo, hi]: "[1800, 2200]", "[none, 250]",
// "[50000, -]".
func interval(s result) string {
	hi := "-"
	if s.hi > 0 {
		hi = fmt.Sprintf("%.0f", s.hi)
	}
	return fmt.Sprintf("[%s, %s]", rateText(s.lo), hi)
}

func rateText(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "-"
	case r == 0:
		return "none"
	}
	return fmt.Sprintf("%.0f", r)
}

func codeText(codes map[int]int) string {
	var parts []string
	for _, c := range []int{0, 3, 4} {
		if codes[c] > 0 {
			parts = append(parts, fmt.Sprintf("exit %d: %d", c, codes[c]))
		}
	}
	return strings.Join(parts, ", ")
}

func flagText(stepDur, settle time.Duration, maxSteps int) string {
	var s string
	if stepDur > 0 {
		s += " --step-duration " + stepDur.String()
	}
	if settle >= 0 {
		s += " --settle " + settle.String()
	}
	if maxSteps > 0 {
		s += fmt.Sprintf(" --max-steps %d", maxSteps)
	}
	return s
}
