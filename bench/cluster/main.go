// Command cluster measures `pacer bench --cluster` against
// `redis-benchmark --cluster` on a local Redis Cluster of three primaries
// it starts (redis-server --cluster-enabled yes, joined with redis-cli
// --cluster create): the same flags (-t set,get -c 50 -n N -r 100000) at
// each -P, interleaved (redis-benchmark then pacer, then pacer then
// redis-benchmark, ...), medians of the throughput of each test, and the median of the paired
// ratios (run r of pacer over run r of redis-benchmark, back to back).
// Every run starts on empty nodes (FLUSHALL): each SET run adds up to -n
// keys, and a run that met a larger keyspace (dict resizing, memory) would
// pay for the runs before it.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/cluster -bin /tmp/pacer -runs 5
//
// The machine these numbers come from is shared and noisy (and the client
// shares it with the three servers): read them as ratios within one
// invocation.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

type sample struct {
	rps       map[string]float64 // per test
	cpuPerReq float64            // µs of client CPU per request
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	rb := flag.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	runs := flag.Int("runs", 5, "runs per tool and pipeline (interleaved)")
	conns := flag.Int("c", 50, "connections")
	requests := flag.Int("n", 1000000, "requests per test and run")
	tests := flag.String("t", "set,get", "tests")
	pipelines := flag.String("P", "1,16", "pipelines")
	nodes := flag.Int("nodes", 3, "primaries")
	threads := flag.Int("threads", 0, "pacer bench --threads (0: its default)")
	flag.Parse()

	cl := kit.Must(kit.StartCluster(*nodes))
	defer cl.Stop()
	seed := cl.Nodes[0].Port
	fmt.Printf("Redis Cluster of %d primaries on loopback; -t %s -c %d -n %d -r 100000; %d interleaved runs each; medians\n",
		*nodes, *tests, *conns, *requests, *runs)
	names := strings.Split(*tests, ",")
	tools := []string{"redis-benchmark", "pacer bench"}
	failed := false
	for _, p := range strings.Split(*pipelines, ",") {
		res := map[string][]sample{}
		for r := 0; r < *runs; r++ {
			order := tools
			if r%2 == 1 { // who goes first alternates
				order = []string{tools[1], tools[0]}
			}
			for _, tool := range order {
				args := []string{"--cluster", "-p", seed, "-t", *tests, "-n", strconv.Itoa(*requests), "-P", p,
					"-c", strconv.Itoa(*conns), "-r", "100000", "--csv"}
				kit.Check(cl.FlushAll())
				var cmd *exec.Cmd
				if tool == "pacer bench" {
					if *threads > 0 {
						args = append(args, "--threads", strconv.Itoa(*threads))
					}
					cmd = exec.Command(*bin, append([]string{"bench"}, args...)...)
				} else {
					cmd = exec.Command(*rb, args...)
				}
				s, err := run(cmd, *requests*len(names))
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: %s -P %s: %v\n", tool, p, err)
					failed = true
					continue
				}
				res[tool] = append(res[tool], s)
				fmt.Fprintf(os.Stderr, "run %d -P %-3s %-15s", r+1, p, tool)
				for _, t := range names {
					fmt.Fprintf(os.Stderr, " %s %10.0f/s", t, s.rps[strings.ToUpper(t)])
				}
				fmt.Fprintf(os.Stderr, " %6.3f µs/req\n", s.cpuPerReq)
			}
		}
		fmt.Printf("\n-P %s\n", p)
		fmt.Printf("%-5s %14s %14s %7s %7s %12s %12s\n", "test", "redis-bench/s", "pacer/s", "ratio", "paired", "rb µs/req", "pacer µs/req")
		a, b := res[tools[0]], res[tools[1]]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		for _, t := range names {
			t = strings.ToUpper(t)
			f := func(s sample) float64 { return s.rps[t] }
			ra, rp := kit.Median(a, f), kit.Median(b, f)
			pr := kit.PairedMedian(a, b, f)
			fmt.Printf("%-5s %14.0f %14.0f %7.3f %7.3f %12.3f %12.3f\n", t, ra, rp, rp/ra, pr,
				kit.Median(a, func(s sample) float64 { return s.cpuPerReq }), kit.Median(b, func(s sample) float64 { return s.cpuPerReq }))
		}
	}
	if failed {
		os.Exit(1)
	}
}

// run runs one tool and reads the requests per second of each test from
// its CSV rows.
func run(cmd *exec.Cmd, total int) (sample, error) {
	rows, err := kit.RunCSV(cmd, 0)
	if err != nil {
		return sample{}, err
	}
	s := sample{rps: map[string]float64{}}
	for _, r := range rows[1:] {
		if len(r) >= 2 {
			s.rps[r[0]], _ = strconv.ParseFloat(r[1], 64)
		}
	}
	s.cpuPerReq = float64(kit.CPUTime(cmd.ProcessState).Nanoseconds()) / 1000 / float64(total)
	return s, nil
}
