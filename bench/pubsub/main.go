// Command pubsub measures what `pacer pubsub` costs its client: the CPU
// time of the pacer process (user + system, its publisher included)
// divided by the deliveries its subscribers received, against a local
// redis-server it starts, at points of rate × subscribers, run
// interleaved (every point once, then again) and reported as medians
// with the machine's load.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/pubsub -bin /tmp/pacer -runs 3
//
// The default points are 100,000 deliveries a second three ways: one
// channel of 10 subscribers at 10k messages/s (the issue's), 100
// subscribers at 1k/s, and one subscriber at 100k/s; -stream adds a
// stream point (5k XADD/s to one group of 4 consumers), -tracking a
// client-side caching one (10k SET/s to 1000 keys cached by 10 readers:
// 100,000 invalidations a second, each refetched). -pause 100ms
// stops the server (SIGSTOP, SIGCONT) for that long every second of every
// run and adds the closed publisher (--closed): the open publisher's
// delivery p99 from the intended instants beside the closed one's.
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
	"syscall"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

type point struct {
	rate        string
	subscribers int
	// stream and tracking make it pacer stream's (subscribers are
	// consumers) or pacer tracking's (readers).
	stream, tracking bool
}

type sample struct {
	cpuPerDelivery float64 // µs
	deliveries     uint64
	lost           uint64
	p50, p99       float64 // ms
	cpus           float64 // pacer's cores over the run
	closedP99      float64 // ms, with -pause
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	runs := flag.Int("runs", 3, "runs per point")
	duration := flag.Duration("duration", 10*time.Second, "each run's timeline")
	points := flag.String("points", "10k:10,1k:100,100k:1", "RATE:SUBSCRIBERS list (empty: none)")
	withStream := flag.Bool("stream", false, "add a stream point: 5k XADD/s, one group of 4 consumers")
	withTracking := flag.Bool("tracking", false, "add a client-side caching point: 10k SET/s to 1000 keys cached by 10 readers (pacer tracking)")
	pause := flag.Duration("pause", 0, "stop the server this long every second during the runs, and run the closed publisher too")
	flag.Parse()

	var pts []point
	for _, p := range strings.Split(*points, ",") {
		if p == "" {
			continue // -points "": only -stream's or -tracking's point
		}
		rate, subs, _ := strings.Cut(p, ":")
		n, err := strconv.Atoi(subs)
		if err != nil {
			kit.Check(fmt.Errorf("-points %q: want RATE:SUBSCRIBERS", p))
		}
		pts = append(pts, point{rate: rate, subscribers: n})
	}
	if *withStream {
		pts = append(pts, point{rate: "5k", subscribers: 4, stream: true})
	}
	if *withTracking {
		pts = append(pts, point{rate: "10k", subscribers: 10, tracking: true})
	}
	srv := kit.Must(kit.Start())
	defer srv.Stop()
	dir := kit.Must(os.MkdirTemp("", "pacer-bench-pubsub"))
	defer os.RemoveAll(dir)

	if *pause > 0 {
		stop := pauser(srv, *pause)
		defer stop()
	}
	results := make([][]sample, len(pts))
	for r := range *runs {
		for i, p := range pts {
			s, err := runOnce(*bin, srv.Port, p, *duration, filepath.Join(dir, "out.json"), *pause > 0)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name(p), err)
				continue
			}
			results[i] = append(results[i], s)
			fmt.Fprintf(os.Stderr, "run %d %-28s %10d deliveries (%d lost) %7.3f µs/delivery (%.2f cores) delivery p50 %.3f ms p99 %.3f ms (closed p99 %.3f ms); load %s\n",
				r+1, name(p), s.deliveries, s.lost, s.cpuPerDelivery, s.cpus, s.p50, s.p99, s.closedP99, load())
		}
	}
	fmt.Printf("%d runs per point of %s, medians; load average at the end: %s\n", *runs, *duration, load())
	fmt.Printf("%-28s %12s %8s %14s %10s %12s %12s %14s\n", "point", "deliveries", "lost", "µs/delivery", "cores", "p50 ms", "p99 ms", "closed p99 ms")
	for i, p := range pts {
		xs := results[i]
		if len(xs) == 0 {
			continue
		}
		fmt.Printf("%-28s %12.0f %8.0f %14.3f %10.2f %12.3f %12.3f %14.3f\n", name(p),
			kit.Median(xs, func(s sample) float64 { return float64(s.deliveries) }),
			kit.Median(xs, func(s sample) float64 { return float64(s.lost) }),
			kit.Median(xs, func(s sample) float64 { return s.cpuPerDelivery }),
			kit.Median(xs, func(s sample) float64 { return s.cpus }),
			kit.Median(xs, func(s sample) float64 { return s.p50 }),
			kit.Median(xs, func(s sample) float64 { return s.p99 }),
			kit.Median(xs, func(s sample) float64 { return s.closedP99 }))
	}
}

// pauser stops srv for d every second until the returned function is
// called.
func pauser(srv *kit.Server, d time.Duration) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			kit.Check(srv.Signal(syscall.SIGSTOP))
			time.Sleep(d)
			kit.Check(srv.Signal(syscall.SIGCONT))
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func name(p point) string {
	if p.tracking {
		return fmt.Sprintf("tracking %s/s × %d readers", p.rate, p.subscribers)
	}
	if p.stream {
		return fmt.Sprintf("stream %s/s × %d consumers", p.rate, p.subscribers)
	}
	return fmt.Sprintf("pubsub %s/s × %d subscribers", p.rate, p.subscribers)
}

// runOnce runs one point and reads its result.
func runOnce(bin, port string, p point, d time.Duration, out string, closed bool) (sample, error) {
	args := []string{"pubsub", "-h", "127.0.0.1", "-p", port, "--rate", p.rate, "--duration", d.String(), "--subscribers", strconv.Itoa(p.subscribers),
		"-q", "--json", out}
	if closed {
		args = append(args, "--closed")
	}
	if p.stream {
		args = []string{"stream", "-h", "127.0.0.1", "-p", port, "--rate", p.rate, "--duration", d.String(), "--consumers", strconv.Itoa(p.subscribers),
			"-q", "--json", out}
	}
	if p.tracking {
		args = []string{"tracking", "-h", "127.0.0.1", "-p", port, "--rate", p.rate, "--duration", d.String(), "--readers", strconv.Itoa(p.subscribers),
			"-q", "--json", out}
	}
	cmd := exec.Command(bin, args...)
	start := time.Now()
	b, err := kit.RunResult(cmd, out)
	if err != nil {
		return sample{}, err
	}
	wall := time.Since(start)
	var doc struct {
		Tests []struct {
			Response struct {
				P50 float64 `json:"p50"`
				P99 float64 `json:"p99"`
			} `json:"response_ms"`
			Messages struct {
				Delivered uint64 `json:"delivered"`
				Lost      uint64 `json:"lost"`
			} `json:"messages"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Tests) == 0 || doc.Tests[0].Messages.Delivered == 0 {
		return sample{}, fmt.Errorf("no deliveries in the result: %v", err)
	}
	t := doc.Tests[0]
	cpu := kit.CPUTime(cmd.ProcessState)
	all := uint64(0)
	for _, t := range doc.Tests {
		all += t.Messages.Delivered
	}
	s := sample{cpuPerDelivery: float64(cpu.Nanoseconds()) / 1000 / float64(all), deliveries: t.Messages.Delivered, lost: t.Messages.Lost,
		p50: t.Response.P50, p99: t.Response.P99, cpus: cpu.Seconds() / wall.Seconds()}
	if len(doc.Tests) > 1 {
		s.closedP99 = doc.Tests[1].Response.P99
	}
	return s, nil
}

// load is the first field of /proc/loadavg.
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
