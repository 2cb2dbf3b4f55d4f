// Command tls measures what TLS costs pacer, against one local
// redis-server it starts with a plain and a TLS port (same data):
//
//   - open model: `pacer run` at each rate over plain TCP and over TLS,
//     interleaved (plain, TLS, plain, TLS, ...): achieved rate, send lag
//     p50/p99/p99.9 and client CPU per request (user + system time of the
//     pacer process divided by completed requests), medians;
//
//   - closed model: `pacer bench --tls` against `redis-benchmark --tls`
//     with the same flags (-c, -P, -n, -r), interleaved, medians of
//     throughput and client CPU per request, and the median of the paired
//     ratios (run r of pacer over run r of redis-benchmark, back to back).
//
//     go build -o /tmp/pacer ./cmd/pacer
//     go run ./bench/tls -bin /tmp/pacer -runs 3
//
// The machine these numbers come from is shared and noisy: read them as
// ratios within one invocation.
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
)

type openSample struct {
	achieved, target       float64
	lagP50, lagP99, lag999 float64
	respP99                float64
	cpuPerReq              float64 // µs
	handshakeP50           float64 // ms
	verdict                string
}

type closedSample struct {
	rps, cpuPerReq float64
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	rb := flag.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	runs := flag.Int("runs", 3, "runs per point and mode (interleaved)")
	duration := flag.Duration("duration", 10*time.Second, "duration of each open run")
	conns := flag.Int("c", 50, "connections")
	rates := flag.String("rates", "10k,100k", "open-model rates")
	pacing := flag.String("pacing", "precise", "open-model pacing")
	tests := flag.String("tests", "get,set", "closed-model tests")
	pipeline := flag.Int("P", 16, "closed-model pipeline")
	requests := flag.Int("n", 2000000, "closed-model requests per run")
	parts := flag.String("parts", "open,closed", "what to measure: open, closed")
	flag.Parse()

	srv := kit.Must(kit.StartTLS())
	defer srv.Stop()
	fmt.Printf("redis-server with a plain port and a TLS port (TLS 1.3, certificates for 127.0.0.1); %d interleaved runs each; medians\n", *runs)
	if strings.Contains(*parts, "open") {
		measureOpen(*bin, srv, strings.Split(*rates, ","), *pacing, *duration, *conns, *runs)
	}
	if strings.Contains(*parts, "closed") {
		measureClosed(*bin, *rb, srv, strings.Split(*tests, ","), *pipeline, *requests, *conns, *runs)
	}
}

var modes = []string{"plain", "tls"}

func targetArgs(srv *kit.Server, mode string) []string {
	if mode == "tls" {
		return []string{"-h", "127.0.0.1", "-p", srv.TLSPort, "--tls", "--cacert", srv.CA}
	}
	return []string{"-h", "127.0.0.1", "-p", srv.Port}
}

func measureOpen(bin string, srv *kit.Server, rates []string, pacing string, d time.Duration, conns, runs int) {
	res := map[string][]openSample{}
	for r := 0; r < runs; r++ {
		for _, rate := range rates {
			for _, mode := range modes {
				s, err := runOpen(bin, srv, mode, rate, pacing, d, conns)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: run %s %s: %v\n", rate, mode, err)
					continue
				}
				res[rate+mode] = append(res[rate+mode], s)
				fmt.Fprintf(os.Stderr, "run %d %6s %-5s achieved %10.1f lag p99 %7.3f ms cpu %6.2f µs/req %s\n",
					r+1, rate, mode, s.achieved, s.lagP99, s.cpuPerReq, s.verdict)
			}
		}
	}
	fmt.Printf("\nopen model: pacer run -t get -r 100000 -c %d --pacing %s, %s per run\n", conns, pacing, d)
	fmt.Printf("%-6s %-5s %12s %9s %9s %9s %9s %9s %10s %7s %12s\n", "rate", "mode", "achieved/s", "vs target", "lag p50", "lag p99", "lag p99.9", "resp p99", "cpu µs/req", "ratio", "handshake p50")
	for _, rate := range rates {
		plainCPU := 0.0
		for _, mode := range modes {
			ss := res[rate+mode]
			if len(ss) == 0 {
				continue
			}
			m := func(f func(openSample) float64) float64 { return kit.Median(ss, f) }
			cpu := m(func(s openSample) float64 { return s.cpuPerReq })
			ratio := "-"
			if mode == "plain" {
				plainCPU = cpu
			} else if plainCPU > 0 {
				ratio = strconv.FormatFloat(cpu/plainCPU, 'f', 2, 64)
			}
			hs := "-"
			if mode == "tls" {
				hs = strconv.FormatFloat(m(func(s openSample) float64 { return s.handshakeP50 }), 'f', 3, 64) + " ms"
			}
			fmt.Printf("%-6s %-5s %12.1f %8.2f%% %7.3fms %7.3fms %7.3fms %7.3fms %10.2f %7s %12s\n", rate, mode,
				m(func(s openSample) float64 { return s.achieved }),
				100*(m(func(s openSample) float64 { return s.achieved / s.target })-1),
				m(func(s openSample) float64 { return s.lagP50 }),
				m(func(s openSample) float64 { return s.lagP99 }),
				m(func(s openSample) float64 { return s.lag999 }),
				m(func(s openSample) float64 { return s.respP99 }),
				cpu, ratio, hs)
		}
	}
}

func runOpen(bin string, srv *kit.Server, mode, rate, pacing string, d time.Duration, conns int) (openSample, error) {
	out := filepath.Join(os.TempDir(), fmt.Sprintf("pacer-bench-tls-%d.json", os.Getpid()))
	defer os.Remove(out)
	args := append([]string{"run", "--rate", rate, "--pacing", pacing, "--duration", d.String(), "-c", strconv.Itoa(conns),
		"-t", "get", "-r", "100000", "-q", "--json", out}, targetArgs(srv, mode)...)
	cmd := exec.Command(bin, args...)
	b, err := kit.RunResult(cmd, out)
	if err != nil {
		return openSample{}, err
	}
	cpu := kit.CPUTime(cmd.ProcessState)
	type summary struct {
		P50  float64 `json:"p50"`
		P99  float64 `json:"p99"`
		P999 float64 `json:"p99.9"`
	}
	var doc struct {
		Tests []struct {
			TargetRate   float64 `json:"target_rate"`
			AchievedRate float64 `json:"achieved_rate"`
			Counts       struct {
				Completed float64 `json:"completed"`
			} `json:"counts"`
			SendLagMs  summary `json:"send_lag_ms"`
			ResponseMs summary `json:"response_ms"`
			Verdict    string  `json:"verdict"`
			TLS        *struct {
				HandshakeMs summary `json:"handshake_ms"`
			} `json:"tls"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Tests) == 0 {
		return openSample{}, fmt.Errorf("bad JSON: %v", err)
	}
	t := doc.Tests[0]
	s := openSample{
		achieved: t.AchievedRate, target: t.TargetRate,
		lagP50: t.SendLagMs.P50, lagP99: t.SendLagMs.P99, lag999: t.SendLagMs.P999,
		respP99:   t.ResponseMs.P99,
		cpuPerReq: float64(cpu.Microseconds()) / t.Counts.Completed,
		verdict:   t.Verdict,
	}
	if t.TLS != nil {
		s.handshakeP50 = t.TLS.HandshakeMs.P50
	}
	return s, nil
}

func measureClosed(bin, rb string, srv *kit.Server, tests []string, pipeline, n, conns, runs int) {
	tools := []string{"redis-benchmark", "pacer bench"}
	res := map[string][]closedSample{}
	for r := 0; r < runs; r++ {
		for _, test := range tests {
			for _, tool := range tools {
				args := append([]string{"-t", test, "-n", strconv.Itoa(n), "-P", strconv.Itoa(pipeline), "-c", strconv.Itoa(conns),
					"-r", "100000", "--csv"}, targetArgs(srv, "tls")...)
				var cmd *exec.Cmd
				if tool == "pacer bench" {
					cmd = exec.Command(bin, append([]string{"bench"}, args...)...)
				} else {
					cmd = exec.Command(rb, args...)
				}
				s, err := runClosed(cmd, n)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: %s %s: %v\n", tool, test, err)
					continue
				}
				res[test+tool] = append(res[test+tool], s)
				fmt.Fprintf(os.Stderr, "run %d %-15s %-4s -P %d --tls %12.0f req/s %6.3f µs/req\n", r+1, tool, test, pipeline, s.rps, s.cpuPerReq)
			}
		}
	}
	fmt.Printf("\nclosed model over TLS: -c %d -P %d -n %d -r 100000 --tls\n", conns, pipeline, n)
	fmt.Printf("paired: median of the per-run ratios (run r of pacer over run r of redis-benchmark, back to back)\n")
	fmt.Printf("%-5s %14s %14s %7s %7s %12s %12s\n", "test", "redis-bench/s", "pacer/s", "ratio", "paired", "rb µs/req", "pacer µs/req")
	for _, test := range tests {
		a, b := res[test+tools[0]], res[test+tools[1]]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		ra, rp := kit.Median(a, func(s closedSample) float64 { return s.rps }), kit.Median(b, func(s closedSample) float64 { return s.rps })
		pr := kit.PairedMedian(a, b, func(s closedSample) float64 { return s.rps })
		fmt.Printf("%-5s %14.0f %14.0f %7.3f %7.3f %12.3f %12.3f\n", test, ra, rp, rp/ra, pr,
			kit.Median(a, func(s closedSample) float64 { return s.cpuPerReq }), kit.Median(b, func(s closedSample) float64 { return s.cpuPerReq }))
	}
}

func runClosed(cmd *exec.Cmd, n int) (closedSample, error) {
	rows, err := kit.RunCSV(cmd, 2)
	if err != nil {
		return closedSample{}, err
	}
	rps, _ := strconv.ParseFloat(rows[1][1], 64)
	cpu := kit.CPUTime(cmd.ProcessState)
	return closedSample{rps: rps, cpuPerReq: float64(cpu.Nanoseconds()) / 1000 / float64(n)}, nil
}
