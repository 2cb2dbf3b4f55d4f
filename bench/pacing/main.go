// Command pacing measures pacer's open-model pacing against a local
// redis-server it starts itself: for each point (rate and pacing mode) it
// runs `pacer run` several times, interleaved, and reports the medians of
// the achieved rate, send lag p50/p99 and client CPU per request (user +
// system time of the pacer process divided by completed requests).
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/pacing -bin /tmp/pacer -runs 3 -duration 10s
//
// The targets are printed next to each row. Use the numbers as
// ratios within one run: this machine is shared and noisy.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
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
	rate   string
	pacing string
	target string // what the issue asks of this point
}

type sample struct {
	achieved, target float64
	lagP50, lagP99   float64
	sentShare        float64
	cpuPerReq        float64 // µs
	maxRSSMB         float64
	verdict          string
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	runs := flag.Int("runs", 3, "runs per point (interleaved)")
	duration := flag.Duration("duration", 10*time.Second, "duration of each run")
	conns := flag.Int("c", 50, "connections")
	points := flag.String("points", "10k:precise,10k:coarse,100k:precise,100k:coarse,1M:precise,1M:coarse", "rate:pacing list")
	variants := flag.String("variants", "", "compare variants, interleaved: label=K=V,K=V;label2=... (empty: one plain variant)")
	flag.Parse()
	type variant struct{ label, env string }
	vs := []variant{{"", ""}}
	if *variants != "" {
		vs = nil
		for _, v := range strings.Split(*variants, ";") {
			label, env, _ := strings.Cut(v, "=")
			vs = append(vs, variant{label, env})
		}
	}

	var pts []point
	for _, p := range strings.Split(*points, ",") {
		rate, pacing, _ := strings.Cut(p, ":")
		pts = append(pts, point{rate: rate, pacing: pacing, target: targetFor(rate, pacing)})
	}
	srv, err := kit.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	defer srv.Stop()
	addr := srv.Addr

	results := make([][][]sample, len(pts))
	for i := range results {
		results[i] = make([][]sample, len(vs))
	}
	for r := 0; r < *runs; r++ {
		for i, p := range pts {
			for k, v := range vs {
				s, err := runOnce(*bin, addr, p, *duration, *conns, v.env)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: %s %s: %v\n", p.rate, p.pacing, err)
					continue
				}
				results[i][k] = append(results[i][k], s)
				fmt.Fprintf(os.Stderr, "run %d %6s %-7s %-8s achieved %10.1f lag p99 %7.3f ms cpu %6.2f µs/req %s\n",
					r+1, p.rate, p.pacing, v.label, s.achieved, s.lagP99, s.cpuPerReq, s.verdict)
			}
		}
	}
	fmt.Printf("%d runs of %s each, -c %d, medians\n", *runs, *duration, *conns)
	fmt.Printf("%-7s %-8s %-8s %12s %9s %9s %9s %9s %10s %7s  %s\n", "rate", "pacing", "variant", "achieved/s", "vs target", "sent", "lag p50", "lag p99", "cpu µs/req", "RSS MB", "issue target")
	for i, p := range pts {
		for k, v := range vs {
			ss := results[i][k]
			if len(ss) == 0 {
				continue
			}
			m := func(f func(sample) float64) float64 { return kit.Median(ss, f) }
			fmt.Printf("%-7s %-8s %-8s %12.1f %8.2f%% %8.2f%% %7.3fms %7.3fms %10.2f %7.1f  %s\n", p.rate, p.pacing, v.label,
				m(func(s sample) float64 { return s.achieved }),
				100*(m(func(s sample) float64 { return s.achieved / s.target })-1),
				100*m(func(s sample) float64 { return s.sentShare }),
				m(func(s sample) float64 { return s.lagP50 }),
				m(func(s sample) float64 { return s.lagP99 }),
				m(func(s sample) float64 { return s.cpuPerReq }),
				m(func(s sample) float64 { return s.maxRSSMB }), p.target)
		}
	}
}

func targetFor(rate, pacing string) string {
	switch rate + ":" + pacing {
	case "10k:precise":
		return "achieved ±0.5%, lag p99 ≤ 0.250 ms"
	case "10k:coarse":
		return "achieved ±0.5%, ≤ 25 µs/req, lag p99 ≤ 1.2 ms"
	case "100k:precise":
		return "achieved ±0.5%, lag p99 ≤ 0.350 ms, ≤ 10 µs/req"
	case "100k:coarse":
		return "achieved ±0.5%, ≤ 10 µs/req"
	case "1M:precise", "1M:coarse":
		return "≥ 99% of target sent"
	}
	return ""
}

func runOnce(bin, addr string, p point, d time.Duration, conns int, env string) (sample, error) {
	host, port, _ := net.SplitHostPort(addr)
	out := filepath.Join(os.TempDir(), fmt.Sprintf("pacer-bench-%d.json", os.Getpid()))
	defer os.Remove(out)
	cmd := exec.Command(bin, "run", "-h", host, "-p", port, "--rate", p.rate, "--pacing", p.pacing,
		"--duration", d.String(), "-c", strconv.Itoa(conns), "-t", "get", "-r", "100000", "-q", "--json", out)
	cmd.Env = os.Environ()
	if env != "" {
		cmd.Env = append(cmd.Env, strings.Split(env, ",")...)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 { // 4: generator_behind, still a result
			return sample{}, err
		}
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var rss float64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return sample{}, err
	}
	var doc struct {
		Tests []struct {
			TargetRate   float64 `json:"target_rate"`
			AchievedRate float64 `json:"achieved_rate"`
			Counts       struct {
				Scheduled, Sent, Completed float64
			} `json:"counts"`
			SendLagMs struct {
				P50 float64 `json:"p50"`
				P99 float64 `json:"p99"`
			} `json:"send_lag_ms"`
			Verdict string `json:"verdict"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Tests) == 0 {
		return sample{}, fmt.Errorf("bad JSON: %v", err)
	}
	t := doc.Tests[0]
	return sample{
		achieved: t.AchievedRate, target: t.TargetRate,
		lagP50: t.SendLagMs.P50, lagP99: t.SendLagMs.P99,
		sentShare: t.Counts.Sent / t.Counts.Scheduled,
		cpuPerReq: float64(cpu.Microseconds()) / t.Counts.Completed,
		maxRSSMB:  rss,
		verdict:   t.Verdict,
	}, nil
}
