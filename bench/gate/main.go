// Command gate measures whether an SLO gate can be trusted on a shared
// machine: it runs the same gate -runs times against a healthy local
// redis-server (which it starts on loopback), optionally while -busy
// bounded busy loops (processes spinning on a core each, for the gate's
// length) compete for the cores, and tallies the exit codes. Issue 19 asks
// that with two busy loops none of 10 gated runs exits 3 (a healthy server
// is never blamed) and every exit 4 names the client's figure or the
// host's; and that on an idle machine at least 9 of 10 exit 0.
//
// Each run's line has its exit code, the verdict and the figures the
// verdict rests on (service, send lag, receive lag and host hiccups at the
// SLO's percentile, host CPU, and the server's own LATENCY HISTOGRAM p99).
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/gate -bin /tmp/pacer                 # idle: 10 runs
//	go run ./bench/gate -bin /tmp/pacer -busy 2         # two busy loops
//	go run ./bench/gate -bin /tmp/pacer -slo 'p99<=1ms' -rate 20k
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

func main() {
	bin := flag.String("bin", "", "the pacer binary (required)")
	runs := flag.Int("runs", 10, "gated runs")
	busy := flag.Int("busy", 0, "busy loops competing for the cores during each run")
	rate := flag.String("rate", "10k", "the gate's --rate")
	duration := flag.Duration("duration", 10*time.Second, "the gate's --duration")
	slo := flag.String("slo", "p99<=2ms", "the gate's --slo")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "gate: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *runs, *busy, *rate, *duration, *slo); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(1)
	}
}

// doc is the part of pacer.result/v1 a gate's line is read from.
type doc struct {
	Tests []struct {
		Verdict       string `json:"verdict"`
		VerdictReason string `json:"verdict_reason"`
		SLO           *struct {
			Clauses []struct {
				Observed *float64 `json:"observed"`
				Client   *struct {
					SendLagMs     *float64 `json:"send_lag_ms"`
					ReceiveLagMs  *float64 `json:"receive_lag_ms"`
					HostHiccupsMs *float64 `json:"host_hiccups_ms"`
				} `json:"client"`
				Owner string `json:"owner"`
			} `json:"clauses"`
		} `json:"slo"`
		Service map[string]float64 `json:"service_ms"`
		Host    *struct {
			BusyPct  float64 `json:"busy_pct"`
			StealPct float64 `json:"steal_pct"`
		} `json:"host"`
		Server *struct {
			Commands map[string]struct {
				LatencyHistogram *struct {
					P99 float64 `json:"p99_le_usec"`
				} `json:"latency_histogram"`
			} `json:"commands"`
		} `json:"server"`
	} `json:"tests"`
}

func run(bin string, runs, busy int, rate string, duration time.Duration, slo string) error {
	srv, err := kit.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	dir, err := os.MkdirTemp("", "pacer-gate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("gate: pacer run -p %s --rate %s --duration %s -t get -r 100000 --slo '%s'; %d runs, %d busy loops on %d CPUs\n",
		srv.Port, rate, duration, slo, runs, busy, runtime.NumCPU())
	codes := map[int]int{}
	for i := range runs {
		stop := startBusy(busy, duration+5*time.Second)
		out := filepath.Join(dir, "gate.json")
		cmd := exec.Command(bin, "run", "-p", srv.Port, "--rate", rate, "--duration", duration.String(), "-t", "get", "-r", "100000",
			"-q", "--slo", slo, "--json", out)
		cmd.Stdout, cmd.Stderr = nil, nil
		_ = cmd.Run()
		stop()
		code := cmd.ProcessState.ExitCode()
		codes[code]++
		line := fmt.Sprintf("run %2d: exit %d", i+1, code)
		var d doc
		if b, err := os.ReadFile(out); err == nil && json.Unmarshal(b, &d) == nil && len(d.Tests) == 1 {
			line += " " + describe(d)
		}
		fmt.Println(line)
		os.Remove(out)
	}
	var parts []string
	for _, c := range []int{0, 3, 4, 1} {
		if n := codes[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("exit %d: %d", c, n))
		}
	}
	fmt.Printf("summary: %s of %d\n", strings.Join(parts, ", "), runs)
	return nil
}

// describe is a gate's verdict and the figures it rests on.
func describe(d doc) string {
	t := d.Tests[0]
	s := fmt.Sprintf("verdict %s; service p99 %.3f ms", t.Verdict, t.Service["p99"])
	if t.SLO != nil && len(t.SLO.Clauses) > 0 {
		c := t.SLO.Clauses[0]
		if cl := c.Client; cl != nil {
			s += fmt.Sprintf(", send lag %s, receive lag %s, hiccups %s", ms(cl.SendLagMs), ms(cl.ReceiveLagMs), ms(cl.HostHiccupsMs))
		}
		if c.Owner != "" {
			s += ", owner " + c.Owner
		}
	}
	if h := t.Host; h != nil {
		s += fmt.Sprintf(", host CPU %.0f%% busy %.0f%% stolen", h.BusyPct, h.StealPct)
	}
	if t.Server != nil {
		if c, ok := t.Server.Commands["get"]; ok && c.LatencyHistogram != nil {
			s += fmt.Sprintf(", server's own p99 ≤ %.0f µs", c.LatencyHistogram.P99)
		}
	}
	return s
}

func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", *v)
}

// startBusy starts n processes that each spin on a core for at most d,
// and returns what stops them.
func startBusy(n int, d time.Duration) func() {
	if n == 0 {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	var cmds []*exec.Cmd
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if c.Start() == nil {
			cmds = append(cmds, c)
		}
	}
	return func() {
		cancel()
		for _, c := range cmds {
			_ = c.Wait()
		}
	}
}
