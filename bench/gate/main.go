// Command gate measures whether an SLO gate can be trusted on a shared
// machine: it runs the same gate -runs times against a local
// redis-server (which it starts on loopback), optionally while -busy
// bounded busy loops (processes spinning on a core each, for the gate's
// length) compete for the cores, and tallies the exit codes. A healthy
// server must never be blamed (exit 3), every exit 4 must name the
// figure, and a server that misses must be caught (exit 3) quoting its
// evidence.
//
// Scenarios (-scenario):
//
//	gate        10k GET/s for 10 s against a healthy redis-server, p99<=2ms
//	regression  5k SET/s of 1 KB values against a redis-server with
//	            appendonly yes, appendfsync always (the disk's fsync in every
//	            write): a server that misses; beside each run a probe
//	            times 1 KB appends and fdatasyncs in the server's
//	            directory every 20 ms, an independent witness of how
//	            slow the disk was (a run whose fsyncs were fast may pass)
//	pinned      the gate with the redis-server and the busy loops pinned to
//	            CPU 0 (taskset) and pacer to CPU 1: a healthy server that
//	            waits for a CPU, whose misses are the host's
//
// Each run's line has its exit code, the outcome and the figures the
// verdict rests on (service, send lag, receive lag and host hiccups at the
// SLO's percentile, host CPU, the server process's wait for a CPU, the
// server's own LATENCY HISTOGRAM p99), how --decide-within used its
// budget, the load average before the run, and the verdict's reason.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/gate -bin /tmp/pacer                                  # idle: 10 runs
//	go run ./bench/gate -bin /tmp/pacer -busy 1 -decide-within 1m        # one busy loop
//	go run ./bench/gate -bin /tmp/pacer -scenario regression -runs 10
//	go run ./bench/gate -bin /tmp/pacer -scenario pinned -busy 2 -runs 5
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

// scenario is what a gate sends and against which server.
type scenario struct {
	rate, test, data string
	redis            []string // redis-server's extra arguments
	pinned           bool
	probeDisk        bool // time fsyncs beside the run (fsyncProbe)
}

var scenarios = map[string]scenario{
	"gate":       {rate: "10k", test: "get"},
	"regression": {rate: "5k", test: "set", data: "1024", redis: []string{"--appendonly", "yes", "--appendfsync", "always"}, probeDisk: true},
	"pinned":     {rate: "10k", test: "get", pinned: true},
}

func main() {
	bin := flag.String("bin", "", "the pacer binary (required)")
	name := flag.String("scenario", "gate", "gate, regression or pinned (see the doc)")
	runs := flag.Int("runs", 10, "gated runs")
	busy := flag.Int("busy", 0, "busy loops competing for the cores during each run")
	rate := flag.String("rate", "", "the gate's --rate (default: the scenario's)")
	duration := flag.Duration("duration", 10*time.Second, "the gate's --duration")
	slo := flag.String("slo", "p99<=2ms", "the gate's --slo")
	decide := flag.Duration("decide-within", 0, "the gate's --decide-within (0: none)")
	monitor := flag.Int("latency-monitor", 0, "the redis-server's latency-monitor-threshold in ms (0: off)")
	extra := flag.String("args", "", "further pacer arguments, space-separated (e.g. \"--pacing coarse\")")
	flag.Parse()
	sc, ok := scenarios[*name]
	if *bin == "" || !ok {
		fmt.Fprintln(os.Stderr, "gate: -bin is required, and -scenario is gate, regression or pinned")
		os.Exit(2)
	}
	if *rate != "" {
		sc.rate = *rate
	}
	if *monitor > 0 {
		sc.redis = append(sc.redis, "--latency-monitor-threshold", fmt.Sprint(*monitor))
	}
	if err := run(*bin, *name, sc, *runs, *busy, *duration, *slo, *decide, strings.Fields(*extra)); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(1)
	}
}

// doc is the part of pacer.result/v1 a gate's line is read from.
type doc struct {
	Tests []struct {
		Outcome       string `json:"outcome"`
		Verdict       string `json:"verdict"`
		VerdictReason string `json:"verdict_reason"`
		DurationS     float64
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
		Service  map[string]float64 `json:"service_ms"`
		Response map[string]float64 `json:"response_ms"`
		SendLag  map[string]float64 `json:"send_lag_ms"`
		Host     *struct {
			BusyPct  float64 `json:"busy_pct"`
			StealPct float64 `json:"steal_pct"`
		} `json:"host"`
		ServerProcess *struct {
			WaitShare     float64 `json:"wait_share"`
			MeanWaitUs    float64 `json:"mean_wait_per_timeslice_us"`
			DiskWaitShare float64 `json:"disk_wait_share"`
		} `json:"server_process"`
		PacingSteps []struct {
			AtS          float64 `json:"at_s"`
			ToQuantumUs  float64 `json:"to_quantum_us"`
			HostIdleCPUs float64 `json:"host_idle_cpus"`
		} `json:"pacing_steps"`
		Decide *struct {
			By        string  `json:"by"`
			Looks     int     `json:"looks"`
			MeasuredS float64 `json:"measured_s"`
			QuietS    float64 `json:"quiet_wait_s"`
		} `json:"decide"`
		Server *struct {
			Commands map[string]struct {
				LatencyHistogram *struct {
					P99 float64 `json:"p99_le_usec"`
				} `json:"latency_histogram"`
			} `json:"commands"`
			LatencyEvents []json.RawMessage `json:"latency_events"`
		} `json:"server"`
	} `json:"tests"`
}

func run(bin, name string, sc scenario, runs, busy int, duration time.Duration, slo string, decide time.Duration, extra []string) error {
	srv, err := kit.Start(sc.redis...)
	if err != nil {
		return err
	}
	defer srv.Stop()
	if sc.pinned {
		if err := exec.Command("taskset", "-p", "-c", "0", fmt.Sprint(srv.Pid())).Run(); err != nil {
			return fmt.Errorf("taskset the redis-server to CPU 0: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "pacer-gate")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"run", "-p", srv.Port, "--rate", sc.rate, "--duration", duration.String(), "-t", sc.test, "-r", "100000", "-q", "--slo", slo}
	if sc.data != "" {
		args = append(args, "-d", sc.data)
	}
	if decide > 0 {
		args = append(args, "--decide-within", decide.String())
	}
	args = append(args, extra...)
	where := ""
	if sc.pinned {
		where = " (redis-server and busy loops on CPU 0, pacer on CPU 1)"
	}
	fmt.Printf("gate %s: pacer %s; redis-server %s; %d runs, %d busy loops on %d CPUs%s\n",
		name, strings.Join(args, " "), strings.Join(sc.redis, " "), runs, busy, runtime.NumCPU(), where)
	codes := map[int]int{}
	for i := range runs {
		load := loadAverage()
		stop := startBusy(busy, duration+decide+10*time.Second, sc.pinned)
		out := filepath.Join(dir, "gate.json")
		cmdArgs := append(append([]string{}, args...), "--json", out)
		var cmd *exec.Cmd
		if sc.pinned {
			cmd = exec.Command("taskset", append([]string{"-c", "1", bin}, cmdArgs...)...)
		} else {
			cmd = exec.Command(bin, cmdArgs...)
		}
		var probe *fsyncProbe
		if sc.probeDisk {
			if probe, err = startFsyncProbe(srv.Dir()); err != nil {
				return err
			}
		}
		start := time.Now()
		_ = cmd.Run()
		took := time.Since(start)
		stop()
		code := cmd.ProcessState.ExitCode()
		codes[code]++
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		line := fmt.Sprintf("run %2d: exit %d in %4.1f s (pacer's CPU %.2f s), load %s", i+1, code, took.Seconds(), cpu.Seconds(), load)
		var d doc
		if b, err := os.ReadFile(out); err == nil && json.Unmarshal(b, &d) == nil && len(d.Tests) == 1 {
			line += "; " + describe(d, sc.test)
		}
		if probe != nil {
			line += "\n         " + probe.end()
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

// describe is a gate's outcome and the figures it rests on.
func describe(d doc, test string) string {
	t := d.Tests[0]
	s := fmt.Sprintf("%s; response p99 %.3f ms, service p99 %.3f ms, send lag p99 %.3f ms", t.Outcome, t.Response["p99"], t.Service["p99"], t.SendLag["p99"])
	if t.SLO != nil && len(t.SLO.Clauses) > 0 {
		c := t.SLO.Clauses[0]
		if cl := c.Client; cl != nil {
			s += fmt.Sprintf(", receive lag %s, hiccups %s", ms(cl.ReceiveLagMs), ms(cl.HostHiccupsMs))
		}
		if c.Owner != "" {
			s += ", owner " + c.Owner
		}
	}
	if h := t.Host; h != nil {
		s += fmt.Sprintf(", host CPU %.0f%% busy", h.BusyPct)
	}
	if p := t.ServerProcess; p != nil {
		s += fmt.Sprintf(", server waited %.2f%% (%.0f µs a slice)", 100*p.WaitShare, p.MeanWaitUs)
		if p.DiskWaitShare > 0 {
			s += fmt.Sprintf(", in disk wait %.0f%% of the looks", 100*p.DiskWaitShare)
		}
	}
	if t.Server != nil {
		if c, ok := t.Server.Commands[test]; ok && c.LatencyHistogram != nil {
			s += fmt.Sprintf(", server's own p99 ≤ %.0f µs", c.LatencyHistogram.P99)
		}
		if n := len(t.Server.LatencyEvents); n > 0 {
			s += fmt.Sprintf(", %d latency events", n)
		}
	}
	for _, st := range t.PacingSteps {
		s += fmt.Sprintf(", pacing stepped back to %.0f µs at %.1f s (host %.2f CPUs idle)", st.ToQuantumUs, st.AtS, st.HostIdleCPUs)
	}
	if dc := t.Decide; dc != nil {
		s += fmt.Sprintf("; decided by %s, %d looks, %.1f s measured, %.1f s quiet wait", dc.By, dc.Looks, dc.MeasuredS, dc.QuietS)
	}
	if t.Outcome != "pass" {
		s += "\n         " + t.VerdictReason
	}
	return s
}

func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", *v)
}

// loadAverage is /proc/loadavg's first three figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// startBusy starts n processes that each spin on a core for at most d
// (on CPU 0 when pinned), and returns what stops them.
func startBusy(n int, d time.Duration, pinned bool) func() {
	if n == 0 {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	var cmds []*exec.Cmd
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if pinned {
			c = exec.CommandContext(ctx, "taskset", "-c", "0", "sh", "-c", "while :; do :; done")
		}
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
