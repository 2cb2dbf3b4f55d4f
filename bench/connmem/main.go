// Command connmem measures what many connections cost pacer in resident
// memory: it runs `pacer run -c N --rate R --duration D` against a
// redis-server it starts on loopback (with --maxclients raised for N), and,
// with -embedded, against the embedded target, and prints each run's peak
// resident memory (VmHWM), exit code and completed requests. Several
// binaries run interleaved (A B A B …), so the machine's load hits each.
// With -replay it also runs `pacer replay --per-client` over a MONITOR
// trace it writes: N clients, the same rate and length.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/connmem -variants 'before=/tmp/pacer-old;after=/tmp/pacer' -c 9000 -rate 10k -duration 10s -replay
//
// It raises its own open-file limit to the hard limit (the children
// inherit it); the hard limit must exceed N plus some hundreds.
package main

import (
	"bufio"
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

type variant struct{ name, bin string }

type sample struct {
	peak, current int64 // bytes
	code          int
	completed     float64
	took          time.Duration
	stderr        string
}

func main() {
	variants := flag.String("variants", "", "NAME=BIN pairs separated by ';' (or one BIN)")
	conns := flag.Int("c", 9000, "connections")
	rate := flag.String("rate", "10k", "target rate")
	duration := flag.String("duration", "10s", "run length")
	runs := flag.Int("runs", 1, "runs per variant and target, interleaved")
	embedded := flag.Bool("embedded", false, "also run against the embedded target (--embedded)")
	extra := flag.String("extra", "", "more pacer run flags (space separated)")
	replay := flag.Bool("replay", false, "also run replay --per-client over a trace of -c clients")
	flag.Parse()
	vs := parseVariants(*variants)
	if len(vs) == 0 {
		fmt.Fprintln(os.Stderr, "connmem: -variants is required")
		os.Exit(2)
	}
	if err := raiseNoFile(uint64(*conns) + 512); err != nil {
		fmt.Fprintln(os.Stderr, "connmem:", err)
		os.Exit(1)
	}
	redis, err := kit.Start("--maxclients", strconv.Itoa(*conns+1100))
	if err != nil {
		fmt.Fprintln(os.Stderr, "connmem:", err)
		os.Exit(1)
	}
	defer redis.Stop()
	dir, err := os.MkdirTemp("", "pacer-connmem")
	kit.Check(err)
	defer os.RemoveAll(dir)
	targets := [][]string{{"-p", redis.Port}}
	if *embedded {
		targets = append(targets, []string{"--embedded"})
	}
	fmt.Printf("pacer run -c %d --rate %s --duration %s %s; load average %s\n", *conns, *rate, *duration, *extra, loadavg())
	commands := []string{"run"}
	trace := filepath.Join(dir, "trace.txt")
	if *replay {
		kit.Check(writeTrace(trace, *conns, *rate, *duration))
		commands = append(commands, "replay")
	}
	results := map[string][]sample{}
	var keys []string
	for i := range *runs {
		for _, command := range commands {
			for _, tg := range targets {
				for _, v := range vs {
					args := []string{"run", "-c", strconv.Itoa(*conns), "--rate", *rate, "--duration", *duration}
					if command == "replay" {
						args = []string{"replay", "--per-client"}
					}
					args = append(args, "--json", filepath.Join(dir, "r.json"), "-q")
					args = append(append(args, tg...), strings.Fields(*extra)...)
					if command == "replay" {
						args = append(args, trace)
					}
					s := once(v.bin, args, filepath.Join(dir, "r.json"))
					key := fmt.Sprintf("%-8s %-6s %-14s", v.name, command, strings.Join(tg, " "))
					if results[key] == nil {
						keys = append(keys, key)
					}
					results[key] = append(results[key], s)
					fmt.Printf("run %d %s peak RSS %6.1f MB (at the end %6.1f MB), exit %d, %.0f completed, %.1fs%s\n",
						i+1, key, mb(s.peak), mb(s.current), s.code, s.completed, s.took.Seconds(), s.stderr)
				}
			}
		}
	}
	for _, key := range keys {
		fmt.Printf("median peak RSS %s %6.1f MB\n", key, kit.Median(results[key], func(s sample) float64 { return mb(s.peak) }))
	}
}

// writeTrace writes a MONITOR trace of clients clients sending GETs at
// rate for duration, in turn.
func writeTrace(path string, clients int, rate, duration string) error {
	r, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(rate), "k"), 64)
	if err != nil {
		return fmt.Errorf("-rate %q: want a number, or thousands with k", rate)
	}
	if strings.HasSuffix(strings.ToLower(rate), "k") {
		r *= 1000
	}
	d, err := time.ParseDuration(duration)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	const t0 = 1700000000.0
	for i := range int(r * d.Seconds()) {
		fmt.Fprintf(w, "%.6f [0 127.0.0.1:%d] \"GET\" \"key:%d\"\n", t0+float64(i)/r, 10000+i%clients, i)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// once runs pacer with args and watches its memory until it exits.
func once(bin string, args []string, result string) sample {
	os.Remove(result)
	cmd := exec.Command(bin, args...)
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	kit.Check(cmd.Start())
	w := kit.WatchMem(cmd.Process.Pid, 20*time.Millisecond)
	err := cmd.Wait()
	m := w.Stop()
	s := sample{peak: m.Peak, current: m.Current, took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		s.code = ee.ExitCode()
	} else if err != nil {
		s.code = -1
	}
	if b, err := os.ReadFile(result); err == nil {
		var doc struct {
			Tests []struct {
				Counts struct {
					Completed float64 `json:"completed"`
				} `json:"counts"`
			} `json:"tests"`
		}
		if json.Unmarshal(b, &doc) == nil {
			for _, t := range doc.Tests {
				s.completed += t.Counts.Completed
			}
		}
	}
	if e := strings.TrimSpace(errb.String()); e != "" {
		lines := strings.Split(e, "\n")
		s.stderr = "; stderr: " + lines[len(lines)-1]
	}
	return s
}

// raiseNoFile raises the soft open-file limit to the hard one, which must
// be at least need.
func raiseNoFile(need uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Max < need {
		return fmt.Errorf("the open-file hard limit is %d, want at least %d (ulimit -Hn)", l.Max, need)
	}
	l.Cur = l.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

func parseVariants(s string) []variant {
	var out []variant
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, bin, ok := strings.Cut(part, "=")
		if !ok {
			name, bin = filepath.Base(part), part
		}
		out = append(out, variant{name, bin})
	}
	return out
}

func loadavg() string {
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
