// Command bounds checks that pacer's memory stays bounded while the server
// is gone: it starts a redis-server, runs `pacer run` at a high rate, stops
// the server with SIGSTOP for a long time, and samples the pacer process's
// resident memory every second. It prints the samples, the final counts and
// whether they add up.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/bounds -bin /tmp/pacer -rate 200k -stop 30s
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

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	rate := flag.String("rate", "200k", "target rate")
	stopAfter := flag.Duration("after", 5*time.Second, "stop the server this long into the run")
	stopFor := flag.Duration("stop", 30*time.Second, "how long the server stays stopped")
	tail := flag.Duration("tail", 5*time.Second, "run time after the server continues")
	flag.Parse()

	redis, err := kit.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bounds:", err)
		os.Exit(1)
	}
	defer redis.Stop()
	port := redis.Port
	out := filepath.Join(os.TempDir(), fmt.Sprintf("pacer-bounds-%d.json", os.Getpid()))
	defer os.Remove(out)
	total := *stopAfter + *stopFor + *tail
	cmd := exec.Command(*bin, "run", "-p", port, "--rate", *rate, "--duration", total.String(), "-t", "get", "-r", "100000",
		"-q", "--json", out)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "bounds:", err)
		os.Exit(1)
	}
	start := time.Now()
	stopped, continued := false, false
	maxRSS := 0
	for {
		time.Sleep(time.Second)
		el := time.Since(start)
		if !stopped && el >= *stopAfter {
			redis.Signal(syscall.SIGSTOP)
			stopped = true
			fmt.Printf("%5.1fs  server stopped\n", el.Seconds())
		}
		if stopped && !continued && el >= *stopAfter+*stopFor {
			redis.Signal(syscall.SIGCONT)
			continued = true
			fmt.Printf("%5.1fs  server continued\n", el.Seconds())
		}
		rss := rssKB(cmd.Process.Pid)
		if rss == 0 {
			break
		}
		maxRSS = max(maxRSS, rss)
		fmt.Printf("%5.1fs  pacer RSS %6.1f MB\n", el.Seconds(), float64(rss)/1024)
	}
	cmd.Wait()
	b, err := os.ReadFile(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bounds: no result:", err)
		os.Exit(1)
	}
	var doc struct {
		Tests []struct {
			Counts  map[string]uint64 `json:"counts"`
			Errors  map[string]uint64 `json:"errors"`
			Verdict string            `json:"verdict"`
		} `json:"tests"`
	}
	json.Unmarshal(b, &doc)
	c := doc.Tests[0].Counts
	sum := c["completed"] + c["errors"] + c["timeouts"] + c["unsent"]
	fmt.Printf("max RSS %.1f MB; counts %v; completed+errors+timeouts+unsent = %d, scheduled = %d: %s; exit %d\n",
		float64(maxRSS)/1024, c, sum, c["scheduled"], map[bool]string{true: "balanced", false: "NOT BALANCED"}[sum == c["scheduled"]],
		cmd.ProcessState.ExitCode())
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
		if strings.HasPrefix(l, "State:") && strings.Contains(l, "zombie") {
			return 0
		}
	}
	return 0
}
