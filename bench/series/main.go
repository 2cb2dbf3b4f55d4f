// Command series measures what the interval series costs: it runs the same
// `pacer run` with two binaries (or two flag sets) against a redis-server it
// starts itself, interleaved, and reports the medians of client CPU per
// request, peak RSS and the size of the JSON result, and the interval
// series' share of that JSON.
//
//	git stash; go build -o /tmp/pacer-a ./cmd/pacer; git stash pop   # a build without series
//	go build -o /tmp/pacer-b ./cmd/pacer
//	go run ./bench/series -a /tmp/pacer-a -b /tmp/pacer-b -rate 100k -duration 60s -runs 5 \
//	    -b-extra '--hdr-log /tmp/series.hlog'
//
// The machine is shared and noisy: read the medians, and the ratio b/a.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

type sample struct {
	cpuPerReq float64 // µs of user+system time per completed request
	maxRSS    float64 // MB
	jsonBytes float64
	series    float64 // bytes of the JSON's intervals arrays
	completed float64
}

func main() {
	a := flag.String("a", "", "baseline pacer binary")
	b := flag.String("b", "", "pacer binary under test")
	bExtra := flag.String("b-extra", "", "extra flags for b only (space separated)")
	rate := flag.String("rate", "100k", "target rate")
	duration := flag.String("duration", "60s", "run length")
	runs := flag.Int("runs", 5, "runs per binary, interleaved")
	flag.Parse()
	if *a == "" || *b == "" {
		fmt.Fprintln(os.Stderr, "series: -a and -b are required")
		os.Exit(2)
	}
	redis, err := kit.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "series:", err)
		os.Exit(1)
	}
	defer redis.Stop()
	var as, bs []sample
	for i := range *runs {
		for _, which := range []string{"a", "b"} {
			bin, extra := *a, ""
			if which == "b" {
				bin, extra = *b, *bExtra
			}
			s, err := once(bin, redis.Port, *rate, *duration, extra)
			if err != nil {
				fmt.Fprintf(os.Stderr, "series: %s run %d: %v\n", which, i+1, err)
				os.Exit(1)
			}
			fmt.Printf("run %d %s: %.3f µs/req, max RSS %.1f MB, JSON %.0f KB (intervals %.0f KB), %0.f completed\n",
				i+1, which, s.cpuPerReq, s.maxRSS, s.jsonBytes/1024, s.series/1024, s.completed)
			if which == "a" {
				as = append(as, s)
			} else {
				bs = append(bs, s)
			}
		}
	}
	med := func(xs []sample, f func(sample) float64) float64 { return kit.Median(xs, f) }
	cpuA, cpuB := med(as, func(s sample) float64 { return s.cpuPerReq }), med(bs, func(s sample) float64 { return s.cpuPerReq })
	fmt.Printf("median CPU per request: a %.3f µs, b %.3f µs, b/a %.3f\n", cpuA, cpuB, cpuB/cpuA)
	fmt.Printf("median max RSS: a %.1f MB, b %.1f MB\n", med(as, func(s sample) float64 { return s.maxRSS }), med(bs, func(s sample) float64 { return s.maxRSS }))
	fmt.Printf("median JSON: a %.0f KB, b %.0f KB; b's intervals %.0f KB\n", med(as, func(s sample) float64 { return s.jsonBytes })/1024,
		med(bs, func(s sample) float64 { return s.jsonBytes })/1024, med(bs, func(s sample) float64 { return s.series })/1024)
}

func once(bin, port, rate, duration, extra string) (sample, error) {
	dir, err := os.MkdirTemp("", "pacer-series")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "r.json")
	args := []string{"run", "-p", port, "--rate", rate, "--duration", duration, "-t", "get", "-r", "100000", "-q", "--json", out}
	args = append(args, strings.Fields(extra)...)
	cmd := exec.Command(bin, args...)
	raw, err := kit.RunResult(cmd, out)
	if err != nil {
		return sample{}, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
	var doc struct {
		Tests []struct {
			Counts    map[string]float64 `json:"counts"`
			Intervals json.RawMessage    `json:"intervals"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Tests) == 0 {
		return sample{}, fmt.Errorf("result: %v", err)
	}
	t := doc.Tests[0]
	return sample{cpuPerReq: cpu / t.Counts["completed"], maxRSS: float64(ru.Maxrss) / 1024, jsonBytes: float64(len(raw)),
		series: float64(len(t.Intervals)), completed: t.Counts["completed"]}, nil
}
