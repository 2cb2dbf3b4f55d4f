// Command topology checks the acceptance of "When the topology moves" at
// full scale and prints the figures it measured, with PASS or MISS per
// acceptance line. It starts its own redis-server and redis-sentinel
// processes on loopback (internal/redistest's helpers), runs the pacer
// binary given with -bin against them while it moves the topology, reads
// the result documents and the servers' own counters, and stops every
// process it started when it ends, on error and on Ctrl-C.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/topology -bin /tmp/pacer -scenario all
//	go run ./bench/topology -bin /tmp/pacer -scenario failover -duration 12s -at 4s   # scaled down
//
// Scenarios:
//
//	failover       a primary, two replicas, three sentinels: run --sentinel --rate 5k -t set,get
//	               --duration 30s with SENTINEL FAILOVER at 10 s, against runs without one
//	cluster        three primaries with a replica each: run --cluster --rate 10k with CLUSTER
//	               FAILOVER on a replica at 8 s and redis-cli --cluster reshard of 1000 slots 4 s later
//	replicas       a primary, two replicas: run --read-from replicas --visibility 100 --rate 10k
//	               -t get, one replica frozen (SIGSTOP) for 200 ms at 10 s
//	sentinel-down  sentinels with ACLs over TLS; dead and frozen sentinels skipped; all down
//	all            each in turn
//
// -duration, -at and the rates scale a scenario down; see README.md for
// what each line measures and the figures measured.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	bin      string
	duration time.Duration // each test's --duration
	at       time.Duration // when the failover (or the freeze) comes
	rate     string        // overrides each scenario's rate
	verbose  bool
	out      string // where the result documents are kept ("": removed)
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "", "the pacer binary (required)")
	scenario := flag.String("scenario", "all", "failover, cluster, replicas, sentinel-down or all")
	flag.DurationVar(&c.duration, "duration", 30*time.Second, "each run's --duration (failover: of each of its two tests)")
	flag.DurationVar(&c.at, "at", 0, "when the topology moves, after pacer starts (its timeline starts some ms later; default: failover 10s, cluster 8s, replicas 10s; scaled with -duration)")
	flag.StringVar(&c.rate, "rate", "", "pacer's --rate (default: the scenario's: failover 5k, cluster 10k, replicas 10k)")
	flag.StringVar(&c.out, "out", "", "keep pacer's result documents in this directory (default: removed at the end)")
	flag.BoolVar(&c.verbose, "v", false, "print pacer's whole output, not only its events and per-node sections")
	flag.Parse()
	if c.bin == "" {
		fmt.Fprintln(os.Stderr, "topology: -bin is required")
		os.Exit(2)
	}
	if c.duration < 5*time.Second {
		fmt.Fprintln(os.Stderr, "topology: -duration: at least 5s")
		os.Exit(2)
	}
	scenarios := map[string]func(config){
		"failover":      failover,
		"cluster":       clusterScenario,
		"replicas":      replicas,
		"sentinel-down": sentinelDown,
	}
	order := []string{"failover", "cluster", "replicas", "sentinel-down"}
	run := []string{*scenario}
	if *scenario == "all" {
		run = order
	} else if scenarios[*scenario] == nil {
		fmt.Fprintf(os.Stderr, "topology: -scenario %q: want failover, cluster, replicas, sentinel-down or all\n", *scenario)
		os.Exit(2)
	}
	stopOnSignal()
	ver, _ := exec.Command("redis-server", "--version").Output()
	pv, _ := exec.Command(c.bin, "--version").Output()
	fmt.Printf("topology: %s; %s; %d CPUs; load %s; %s\n", strings.TrimSpace(string(pv)), strings.TrimSpace(string(ver)),
		runtime.NumCPU(), loadAverage(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	for _, s := range run {
		fmt.Printf("\n== %s (load %s)\n", s, loadAverage())
		scenarioName = s
		scenarios[s](c)
	}
	fmt.Printf("\nsummary (load %s)\n", loadAverage())
	for _, l := range tally {
		fmt.Println("  " + l)
	}
}

// scaled is def scaled from a 30 s run to the run's -duration, unless -at
// was given.
func (c config) scaled(def time.Duration) time.Duration {
	if c.at > 0 {
		return c.at
	}
	return time.Duration(float64(def) * c.duration.Seconds() / 30)
}

// dir is where a scenario's result documents go: under -out, or a
// directory removed when the scenario ends.
func (c config) dir(e *env, scenario string) string {
	if c.out == "" {
		return e.TempDir()
	}
	d := filepath.Join(c.out, scenario)
	e.check(os.MkdirAll(d, 0o755))
	return d
}

// rateOr is -rate, or the scenario's default.
func (c config) rateOr(def string) string {
	if c.rate != "" {
		return c.rate
	}
	return def
}

// show prints pacer's sections named by their first words, indented (all
// of its output with -v).
func (c config) show(o outcome, sections ...string) {
	if c.verbose {
		fmt.Print(indent(o.stdout))
		return
	}
	for _, s := range sections {
		text := o.stdout
		for {
			i := strings.Index(text, s)
			if i < 0 {
				break
			}
			text = text[i:]
			end := strings.Index(text, "\n\n")
			if end < 0 {
				end = len(text) - 1
			}
			fmt.Print(indent(text[:end+1]))
			text = text[end+1:]
		}
	}
}

func indent(s string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString("    " + l)
	}
	return b.String()
}

// tail is the last line of s, for an error.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func join(a []string) string { return strings.Join(a, " ") }
