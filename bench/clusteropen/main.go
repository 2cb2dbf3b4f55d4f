// Command clusteropen measures what cluster routing costs the open model:
// `pacer run --cluster` against a local Redis Cluster of three primaries
// it starts, and `pacer run` against one redis-server, at the same total
// rate, interleaved (single, cluster, single, cluster, ...). Per run: the
// client's CPU per completed request (user + system time of the pacer
// process divided by completed requests), the achieved rate and the send
// lag p99; medians over the runs.
//
// Connections: -c per primary with --cluster (3 × c in all), 3 × c to the
// single server, so both sides hold the same number of sockets.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/clusteropen -bin /tmp/pacer -runs 3 -rates 20k,100k
//
// The machine these numbers come from is shared and noisy (and the client
// shares it with the servers): read them as ratios within one invocation.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

type sample struct {
	cpuPerReq float64 // µs of client CPU per completed request
	achieved  float64
	lagP99    float64
	errors    uint64
}

type doc struct {
	Tests []struct {
		Counts struct {
			Completed, Errors, Timeouts, Unsent uint64
		} `json:"counts"`
		AchievedRate float64 `json:"achieved_rate"`
		LagMs        *struct {
			P99 float64 `json:"p99"`
		} `json:"send_lag_ms"`
	} `json:"tests"`
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	runs := flag.Int("runs", 3, "runs per side and rate (interleaved)")
	conns := flag.Int("c", 4, "connections per primary (the single server gets 3× as many)")
	rates := flag.String("rates", "20k,100k", "total rates")
	duration := flag.String("duration", "5s", "length of each run")
	flag.Parse()

	single := kit.Must(kit.Start())
	defer single.Stop()
	cl := kit.Must(kit.StartCluster(3))
	defer cl.Stop()
	dir := kit.Must(os.MkdirTemp("", "pacer-bench-clusteropen"))
	defer os.RemoveAll(dir)

	fmt.Printf("open model, -t set -r 100000, %s per run; 1 redis-server (-c %d) vs 3-primary cluster (--cluster -c %d per primary); %d interleaved runs; medians\n",
		*duration, 3**conns, *conns, *runs)
	fmt.Printf("%-8s %-8s %12s %12s %12s %8s\n", "rate", "target", "CPU µs/req", "achieved/s", "lag p99 ms", "errors")
	failed := false
	for _, rate := range strings.Split(*rates, ",") {
		res := map[string][]sample{}
		for r := range *runs {
			for _, side := range []string{"single", "cluster"} {
				js := filepath.Join(dir, side+strconv.Itoa(r)+".json")
				args := []string{"run", "--rate", rate, "--duration", *duration, "-t", "set", "-r", "100000", "-q", "--json", js}
				if side == "single" {
					args = append(args, "-p", single.Port, "-c", strconv.Itoa(3**conns))
				} else {
					args = append(args, "--cluster", "-p", cl.Nodes[0].Port, "-c", strconv.Itoa(*conns))
				}
				cmd := exec.Command(*bin, args...)
				out, err := cmd.CombinedOutput()
				code := cmd.ProcessState.ExitCode()
				if err != nil && code != 4 { // 4: the generator fell behind; still a measurement
					fmt.Fprintf(os.Stderr, "bench: %s %s: %v\n%s", side, rate, err, out)
					failed = true
					continue
				}
				b, err := os.ReadFile(js)
				var d doc
				if err == nil {
					err = json.Unmarshal(b, &d)
				}
				if err != nil || len(d.Tests) != 1 || d.Tests[0].Counts.Completed == 0 {
					fmt.Fprintf(os.Stderr, "bench: %s %s: no result (%v)\n%s", side, rate, err, out)
					failed = true
					continue
				}
				t := d.Tests[0]
				s := sample{
					cpuPerReq: float64(kit.CPUTime(cmd.ProcessState).Microseconds()) / float64(t.Counts.Completed),
					achieved:  t.AchievedRate,
					errors:    t.Counts.Errors + t.Counts.Timeouts + t.Counts.Unsent,
				}
				if t.LagMs != nil {
					s.lagP99 = t.LagMs.P99
				}
				res[side] = append(res[side], s)
			}
		}
		for _, side := range []string{"single", "cluster"} {
			ss := res[side]
			if len(ss) == 0 {
				continue
			}
			var errs uint64
			for _, s := range ss {
				errs += s.errors
			}
			fmt.Printf("%-8s %-8s %12.2f %12.0f %12.3f %8d\n", rate, side,
				kit.Median(ss, func(s sample) float64 { return s.cpuPerReq }),
				kit.Median(ss, func(s sample) float64 { return s.achieved }),
				kit.Median(ss, func(s sample) float64 { return s.lagP99 }), errs)
		}
	}
	if failed {
		os.Exit(1)
	}
}
