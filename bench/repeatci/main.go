// Command repeatci checks --repeat's confidence intervals on this
// machine: it runs `pacer run --repeat 3 --ci` against a local
// redis-server (which it starts on loopback), then -further single runs of
// the same test, and says whether the three runs' 95% interval of each
// percentile holds the further runs' median of it, and how many of the
// further runs' own values fall in it. An interval that held only the
// requests' spread (every request independent) would hold almost none.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/repeatci -bin /tmp/pacer
//	go run ./bench/repeatci -bin /tmp/pacer -rate 5k -duration 5s -further 20
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

// doc is the part of pacer.result/v1 read here.
type doc struct {
	Tests []struct {
		Percentiles []struct {
			P          string     `json:"p"`
			ValueMs    float64    `json:"value_ms"`
			CI95       []*float64 `json:"ci95"`
			CI95Method string     `json:"ci95_method"`
		} `json:"response_percentiles"`
	} `json:"tests"`
}

func main() {
	bin := flag.String("bin", "", "the pacer binary (required)")
	rate := flag.String("rate", "10k", "--rate")
	duration := flag.Duration("duration", 5*time.Second, "--duration of each run")
	further := flag.Int("further", 20, "single runs after the repeats")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "repeatci: -bin is required")
		os.Exit(2)
	}
	srv := kit.Must(kit.Start())
	defer srv.Stop()
	dir := kit.Must(os.MkdirTemp("", "pacer-repeatci"))
	defer os.RemoveAll(dir)
	base := []string{"run", "-p", srv.Port, "--rate", *rate, "--duration", duration.String(), "-t", "get", "-r", "100000", "-q", "--ci"}
	fmt.Printf("repeatci: pacer %s --repeat 3, then %d single runs; load %s\n", strings.Join(base, " "), *further, load())
	rep := filepath.Join(dir, "repeat.json")
	d, err := runDoc(*bin, append(append([]string{}, base...), "--repeat", "3", "--json", rep), rep)
	kit.Check(err)
	values := map[string][]float64{}
	for i := range *further {
		out := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		one, err := runDoc(*bin, append(append([]string{}, base...), "--json", out), out)
		kit.Check(err)
		for _, p := range one.Tests[0].Percentiles {
			values[p.P] = append(values[p.P], p.ValueMs)
		}
	}
	fmt.Printf("load after: %s\n", load())
	fmt.Printf("%-7s %-10s %-24s %-14s %s\n", "p", "method", "3 runs' 95% interval ms", "20 runs' median", "further runs in it")
	for _, p := range d.Tests[0].Percentiles {
		vs := values[p.P]
		if len(vs) == 0 {
			continue
		}
		sort.Float64s(vs)
		med := kit.Median(vs, func(v float64) float64 { return v })
		lo, hi := end(p.CI95, 0, 0), end(p.CI95, 1, 1e18)
		in := 0
		for _, v := range vs {
			if v >= lo && v <= hi {
				in++
			}
		}
		holds := "holds"
		if med < lo || med > hi {
			holds = "MISSES"
		}
		fmt.Printf("%-7s %-10s [%s, %s] %-6s %8.3f ms %s  %d of %d (values %.3f … %.3f)\n", p.P, p.CI95Method, text(p.CI95, 0), text(p.CI95, 1), holds, med, "", in, len(vs), vs[0], vs[len(vs)-1])
	}
}

func end(ci []*float64, i int, none float64) float64 {
	if len(ci) != 2 || ci[i] == nil {
		return none
	}
	return *ci[i]
}

func text(ci []*float64, i int) string {
	if len(ci) != 2 || ci[i] == nil {
		return "…"
	}
	return fmt.Sprintf("%.3f", *ci[i])
}

// runDoc runs pacer and reads its document; exit 4 is a result too.
func runDoc(bin string, args []string, out string) (doc, error) {
	var d doc
	err := exec.Command(bin, args...).Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 4) {
		return d, fmt.Errorf("pacer %s: %w", strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d.Tests) != 1 {
		return d, fmt.Errorf("%s: %v", out, err)
	}
	return d, nil
}

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
