// Command wire measures how exactly `pacer pubsub` dates its deliveries:
// against a local redis-server it starts, one publisher at -rate to one
// channel with -subscribers subscribers, while a tap on the loopback
// interface (internal/wiretruth; needs root) dates every delivery a second
// time from the segments the server sent. Each run is made twice, the
// pacer binary at normal priority and under chrt -f (real-time priority,
// which nothing preempts), interleaved, and the medians of pacer's p50
// and p99 against the wire's are printed.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/wire -bin /tmp/pacer -runs 3
//
// Run it on a machine left alone: at real-time priority pacer takes what
// it needs from everything else, the server included.
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
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/wiretruth"
)

type sample struct {
	pacer50, pacer99, wire50, wire99 float64 // ms
	deliveries                       int64
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	runs := flag.Int("runs", 3, "runs per priority")
	rate := flag.String("rate", "10k", "messages per second")
	subscribers := flag.Int("subscribers", 10, "subscribers of the channel")
	duration := flag.Duration("duration", 10*time.Second, "each run's timeline")
	prio := flag.Int("rt", 10, "the real-time priority (chrt -f)")
	flag.Parse()
	chrt := kit.Must(exec.LookPath("chrt"))
	srv := kit.Must(kit.Start())
	defer srv.Stop()
	port := kit.Must(strconv.Atoi(srv.Port))
	dir := kit.Must(os.MkdirTemp("", "pacer-bench-wire"))
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.json")
	ways := []string{"normal", "real-time"}
	results := make([][]sample, len(ways))
	for r := range *runs {
		for i, way := range ways {
			args := []string{"pubsub", "-h", "127.0.0.1", "-p", srv.Port, "--rate", *rate, "--duration", duration.String(),
				"--subscribers", strconv.Itoa(*subscribers), "-q", "--json", out}
			cmd := exec.Command(*bin, args...)
			if way == "real-time" {
				cmd = exec.Command(chrt, append([]string{"-f", strconv.Itoa(*prio), *bin}, args...)...)
			}
			w := kit.Must(wiretruth.Start(port))
			b, err := kit.RunResult(cmd, out)
			h, st := w.Stop()
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", way, err)
				continue
			}
			var doc struct {
				Tests []struct {
					Response struct{ P50, P99 float64 } `json:"response_ms"`
					Messages struct{ Delivered int64 }  `json:"messages"`
				} `json:"tests"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || len(doc.Tests) == 0 {
				fmt.Fprintf(os.Stderr, "bench: %s: no result: %v\n", way, err)
				continue
			}
			t := doc.Tests[0]
			s := sample{pacer50: t.Response.P50, pacer99: t.Response.P99, wire50: histo.Millis(h.ValueAtQuantile(50)),
				wire99: histo.Millis(h.ValueAtQuantile(99)), deliveries: t.Messages.Delivered}
			if h.TotalCount() != t.Messages.Delivered || st.Gaps != 0 || st.Dropped != 0 {
				fmt.Fprintf(os.Stderr, "bench: %s: the wire dated %d of %d deliveries (%+v): left out\n", way, h.TotalCount(), t.Messages.Delivered, st)
				continue
			}
			results[i] = append(results[i], s)
			fmt.Fprintf(os.Stderr, "run %d %-9s p50 pacer %.3f wire %.3f ms (%+.1f µs)  p99 pacer %.3f wire %.3f ms (%+.2f%%)  %d deliveries; load %s\n",
				r+1, way, s.pacer50, s.wire50, 1000*(s.pacer50-s.wire50), s.pacer99, s.wire99, 100*(s.pacer99-s.wire99)/s.wire99, s.deliveries, load())
		}
	}
	fmt.Printf("%d runs per priority of %s at %s msg/s × %d subscribers, medians; load average at the end: %s\n", *runs, *duration, *rate, *subscribers, load())
	fmt.Printf("%-10s %12s %12s %14s %12s %12s %12s\n", "priority", "p50 pacer", "p50 wire", "p50 Δ µs", "p99 pacer", "p99 wire", "p99 Δ %")
	for i, way := range ways {
		xs := results[i]
		if len(xs) == 0 {
			continue
		}
		fmt.Printf("%-10s %12.3f %12.3f %14.1f %12.3f %12.3f %12.2f\n", way,
			kit.Median(xs, func(s sample) float64 { return s.pacer50 }),
			kit.Median(xs, func(s sample) float64 { return s.wire50 }),
			kit.Median(xs, func(s sample) float64 { return 1000 * (s.pacer50 - s.wire50) }),
			kit.Median(xs, func(s sample) float64 { return s.pacer99 }),
			kit.Median(xs, func(s sample) float64 { return s.wire99 }),
			kit.Median(xs, func(s sample) float64 { return 100 * (s.pacer99 - s.wire99) / s.wire99 }))
	}
}

// load is the first field of /proc/loadavg.
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
