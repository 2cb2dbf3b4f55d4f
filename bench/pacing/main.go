// Command pacing measures pacer's open-model pacing against a local
// redis-server it starts itself: for each point (rate, pacing mode, and
// optionally arrival process and lag limit) it runs `pacer run` several
// times, interleaved, and reports the medians of the achieved rate, send
// lag p50/p99 and client CPU per request (user + system time of the pacer
// process divided by completed requests), with the wake quantum the run
// used.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/pacing -bin /tmp/pacer -runs 3 -duration 10s
//	go run ./bench/pacing -bin /tmp/pacer -points 10k:precise:poisson,10k:auto:uniform:250us
//	go run ./bench/pacing -points 10k:precise:poisson -variants 'before=BIN=/tmp/pacer-old;after=BIN=/tmp/pacer'
//	go run ./bench/pacing -bin /tmp/pacer -points 10k:auto -variants 'meter=;no meter=ARGS=--hiccup-interval 0'
//
// A point is rate:pacing[:arrival[:lag-limit]]; arrival defaults to
// uniform, the lag limit to pacer's default.
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
	rate     string
	pacing   string
	arrival  string
	lagLimit string // empty: pacer's default
	target   string // what the issue asks of this point
}

// name is the point as -points spells it.
func (p point) name() string {
	s := p.rate + ":" + p.pacing + ":" + p.arrival
	if p.lagLimit != "" {
		s += ":" + p.lagLimit
	}
	return s
}

type sample struct {
	achieved, target float64
	lagP50, lagP99   float64
	sentShare        float64
	cpuPerReq        float64 // µs
	maxRSSMB         float64
	quantumUs        float64
	verdict          string
}

// defaultPoints: the modes at three rates, auto under a loose and a tight
// budget, and Poisson arrivals next to uniform ones.
const defaultPoints = "10k:precise,10k:coarse,10k:auto:uniform:1ms,10k:auto:uniform:250us," +
	"10k:precise:poisson,10k:auto:poisson:1ms," +
	"100k:precise,100k:coarse,100k:auto,1M:precise,1M:coarse,1M:auto"

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	runs := flag.Int("runs", 3, "runs per point (interleaved)")
	duration := flag.Duration("duration", 10*time.Second, "duration of each run")
	conns := flag.Int("c", 50, "connections")
	points := flag.String("points", defaultPoints, "rate:pacing[:arrival[:lag-limit]] list")
	variants := flag.String("variants", "", "compare variants, interleaved: label=K=V,K=V;label2=... (empty: one plain variant); BIN=path runs another binary, ARGS='...' adds flags")
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
	for _, s := range strings.Split(*points, ",") {
		f := strings.Split(s, ":")
		if len(f) < 2 || len(f) > 4 {
			fmt.Fprintf(os.Stderr, "bench: point %q: want rate:pacing[:arrival[:lag-limit]]\n", s)
			os.Exit(2)
		}
		p := point{rate: f[0], pacing: f[1], arrival: "uniform"}
		if len(f) > 2 {
			p.arrival = f[2]
		}
		if len(f) > 3 {
			p.lagLimit = f[3]
		}
		p.target = targetFor(p)
		pts = append(pts, p)
	}
	srv := kit.Must(kit.Start())
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
					fmt.Fprintf(os.Stderr, "bench: %s: %v\n", p.name(), err)
					continue
				}
				results[i][k] = append(results[i][k], s)
				fmt.Fprintf(os.Stderr, "run %d %-26s %-8s achieved %10.1f lag p99 %7.3f ms cpu %6.2f µs/req %s\n",
					r+1, p.name(), v.label, s.achieved, s.lagP99, s.cpuPerReq, s.verdict)
			}
		}
	}
	fmt.Printf("%d runs of %s each, -c %d, medians\n", *runs, *duration, *conns)
	fmt.Printf("%-6s %-8s %-8s %-6s %-8s %8s %12s %9s %9s %9s %9s %10s %7s %5s %s\n", "rate", "pacing", "arrival", "limit", "variant", "quantum", "achieved/s", "vs target", "sent", "lag p50", "lag p99", "cpu µs/req", "RSS MB", "ok", "issue target")
	for i, p := range pts {
		for k, v := range vs {
			ss := results[i][k]
			if len(ss) == 0 {
				continue
			}
			m := func(f func(sample) float64) float64 { return kit.Median(ss, f) }
			limit := p.lagLimit
			if limit == "" {
				limit = "-"
			}
			fmt.Printf("%-6s %-8s %-8s %-6s %-8s %6.0fµs %12.1f %8.2f%% %8.2f%% %7.3fms %7.3fms %10.2f %7.1f %2d/%-2d %s\n",
				p.rate, p.pacing, p.arrival, limit, v.label,
				m(func(s sample) float64 { return s.quantumUs }),
				m(func(s sample) float64 { return s.achieved }),
				100*(m(func(s sample) float64 { return s.achieved / s.target })-1),
				100*m(func(s sample) float64 { return s.sentShare }),
				m(func(s sample) float64 { return s.lagP50 }),
				m(func(s sample) float64 { return s.lagP99 }),
				m(func(s sample) float64 { return s.cpuPerReq }),
				m(func(s sample) float64 { return s.maxRSSMB }), okRuns(ss), len(ss), p.target)
		}
	}
}

// okRuns counts the runs whose verdict was ok.
func okRuns(ss []sample) int {
	n := 0
	for _, s := range ss {
		if s.verdict == "ok" {
			n++
		}
	}
	return n
}

func targetFor(p point) string {
	switch p.rate + ":" + p.pacing + ":" + p.arrival + ":" + p.lagLimit {
	case "10k:auto:uniform:1ms":
		return "≤ 1.25× coarse's CPU, lag p99 ≤ 0.6 ms"
	case "10k:auto:uniform:250us":
		return "about precise's CPU, lag p99 ≤ 0.250 ms"
	case "10k:precise:poisson:", "10k:auto:poisson:1ms":
		return "lag p99 as the uniform row's, verdict ok"
	}
	if p.arrival != "uniform" || p.lagLimit != "" {
		return ""
	}
	switch p.rate + ":" + p.pacing {
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
	var vars, extra []string
	if env != "" {
		for _, kv := range strings.Split(env, ",") {
			if path, ok := strings.CutPrefix(kv, "BIN="); ok {
				bin = path // a before/after comparison of two builds
				continue
			}
			if a, ok := strings.CutPrefix(kv, "ARGS="); ok {
				extra = append(extra, strings.Fields(a)...) // e.g. the hiccup meter off
				continue
			}
			vars = append(vars, kv)
		}
	}
	host, port, _ := net.SplitHostPort(addr)
	out := filepath.Join(os.TempDir(), fmt.Sprintf("pacer-bench-%d.json", os.Getpid()))
	defer os.Remove(out)
	args := []string{"run", "-h", host, "-p", port, "--rate", p.rate, "--pacing", p.pacing, "--arrival", p.arrival,
		"--duration", d.String(), "-c", strconv.Itoa(conns), "-t", "get", "-r", "100000", "-q", "--json", out}
	if p.lagLimit != "" {
		args = append(args, "--lag-limit", p.lagLimit)
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), vars...)
	b, err := kit.RunResult(cmd, out)
	if err != nil {
		return sample{}, err
	}
	cpu := kit.CPUTime(cmd.ProcessState)
	var rss float64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024 // KiB on Linux
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
			Verdict   string  `json:"verdict"`
			QuantumUs float64 `json:"pacing_quantum_us"`
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
		quantumUs: t.QuantumUs,
		verdict:   t.Verdict,
	}, nil
}
