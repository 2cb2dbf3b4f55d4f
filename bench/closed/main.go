// Command closed compares `pacer bench` with redis-benchmark on the same
// local redis-server, which it starts: same flags, runs interleaved
// (A B A B ...), medians of throughput and of client CPU per request (user +
// system time of the client process divided by the requests it made).
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/closed -bin /tmp/pacer -runs 3
//
// Points default to the issue's: -P 1 (SET, GET), -P 16 (SET, GET), -P 64
// (GET), all with -c 50 and -r 100000.
//
// -floor adds a third client on the GET points: the least CPU a client
// spends per request on this machine (floor_linux.go: one thread, its
// connections in one epoll instance, a write and a read per batch, no
// timing, no histogram), run as a process of its own like the tools. Its
// ratio to redis-benchmark's CPU is the best any client could reach here:
// most of a request's cost on loopback is the kernel's TCP work, which
// the sender pays for both ends.
//
//	go run ./bench/closed -bin /tmp/pacer -runs 5 -points get:1:400000,get:16:4000000 -floor
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
)

type point struct {
	test     string
	pipeline int
	requests int
}

type sample struct {
	rps, cpuPerReq, p50 float64
	serverCPUPerReq     float64 // µs of redis-server CPU per request
}

func main() {
	bin := flag.String("bin", "pacer", "pacer binary")
	rb := flag.String("redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	runs := flag.Int("runs", 3, "runs per tool and point")
	points := flag.String("points", "set:1:200000,get:1:200000,set:16:2000000,get:16:3000000,get:64:4000000", "test:pipeline:requests list")
	clients := flag.Int("c", 50, "connections")
	extra := flag.String("pacer-args", "", "extra arguments for pacer bench, space-separated")
	floor := flag.Bool("floor", false, "add the floor: the least CPU a client spends per request (one thread, epoll, a write and a read per batch, nothing measured) on the GET points")
	floorAddr := flag.String("floor-client", "", "run as the floor client against ADDR (with -c, and -points' first pipeline and count), print its CSV and exit")
	flag.Parse()

	var pts []point
	for _, p := range strings.Split(*points, ",") {
		f := strings.Split(p, ":")
		pp, _ := strconv.Atoi(f[1])
		n, _ := strconv.Atoi(f[2])
		pts = append(pts, point{test: f[0], pipeline: pp, requests: n})
	}
	if *floorAddr != "" {
		p := pts[0]
		if err := floorClient(*floorAddr, *clients, p.pipeline, p.requests); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	srv := kit.Must(kit.Start())
	defer srv.Stop()
	port := srv.Port

	tools := []struct {
		name string
		cmd  func(p point) *exec.Cmd
	}{
		{"redis-benchmark", func(p point) *exec.Cmd {
			return exec.Command(*rb, benchArgs(port, p, *clients)...)
		}},
		{"pacer bench", func(p point) *exec.Cmd {
			args := append([]string{"bench"}, benchArgs(port, p, *clients)...)
			if *extra != "" {
				args = append(args, strings.Fields(*extra)...)
			}
			return exec.Command(*bin, args...)
		}},
	}
	if *floor {
		self, err := os.Executable()
		kit.Check(err)
		tools = append(tools, struct {
			name string
			cmd  func(p point) *exec.Cmd
		}{"floor", func(p point) *exec.Cmd {
			if p.test != "get" {
				return nil
			}
			return exec.Command(self, "-floor-client", "127.0.0.1:"+port, "-c", strconv.Itoa(*clients),
				"-points", fmt.Sprintf("get:%d:%d", p.pipeline, p.requests))
		}})
	}
	results := make([][][]sample, len(pts))
	for i := range results {
		results[i] = make([][]sample, len(tools))
	}
	for r := 0; r < *runs; r++ {
		for i, p := range pts {
			for k, tool := range tools {
				cmd := tool.cmd(p)
				if cmd == nil {
					continue
				}
				before := serverCPU(port)
				s, err := runOnce(cmd, p)
				s.serverCPUPerReq = (serverCPU(port) - before) * 1e6 / float64(p.requests)
				if err != nil {
					fmt.Fprintf(os.Stderr, "bench: %s %s -P %d: %v\n", tool.name, p.test, p.pipeline, err)
					continue
				}
				results[i][k] = append(results[i][k], s)
				fmt.Fprintf(os.Stderr, "run %d %-15s %-4s -P %-3d %12.0f req/s %6.3f µs/req p50 %.3f ms server %.3f µs/req\n",
					r+1, tool.name, p.test, p.pipeline, s.rps, s.cpuPerReq, s.p50, s.serverCPUPerReq)
			}
		}
	}
	fmt.Printf("%d interleaved runs per tool, -c %d, medians\n", *runs, *clients)
	fmt.Printf("ratio: of the medians; paired: median of the per-run ratios (run r of pacer over run r of redis-benchmark, taken back to back)\n")
	fmt.Printf("%-5s %-4s %14s %14s %7s %7s %12s %12s %7s %16s\n", "test", "-P", "redis-bench/s", "pacer/s", "ratio", "paired", "rb µs/req", "pacer µs/req", "ratio", "server µs/req rb:pacer")
	for i, p := range pts {
		a, b := results[i][0], results[i][1]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		ra, rbb := kit.Median(a, func(s sample) float64 { return s.rps }), kit.Median(b, func(s sample) float64 { return s.rps })
		ca, cb := kit.Median(a, func(s sample) float64 { return s.cpuPerReq }), kit.Median(b, func(s sample) float64 { return s.cpuPerReq })
		sa, sb := kit.Median(a, func(s sample) float64 { return s.serverCPUPerReq }), kit.Median(b, func(s sample) float64 { return s.serverCPUPerReq })
		pr := kit.PairedMedian(a, b, func(s sample) float64 { return s.rps })
		fmt.Printf("%-5s %-4d %14.0f %14.0f %7.3f %7.3f %12.3f %12.3f %7.3f %8.3f:%.3f\n", p.test, p.pipeline, ra, rbb, rbb/ra, pr, ca, cb, cb/ca, sa, sb)
	}
	if !*floor {
		return
	}
	fmt.Printf("the floor: one thread, epoll, a write and a read per batch, nothing measured; its CPU per request against redis-benchmark's\n")
	fmt.Printf("%-5s %-4s %14s %12s %12s %7s %12s %7s\n", "test", "-P", "floor/s", "floor µs/req", "rb µs/req", "ratio", "pacer µs/req", "ratio")
	for i, p := range pts {
		a, b, f := results[i][0], results[i][1], results[i][2]
		if len(a) == 0 || len(b) == 0 || len(f) == 0 {
			continue
		}
		cpu := func(s sample) float64 { return s.cpuPerReq }
		ca, cb, cf := kit.Median(a, cpu), kit.Median(b, cpu), kit.Median(f, cpu)
		fmt.Printf("%-5s %-4d %14.0f %12.3f %12.3f %7.3f %12.3f %7.3f\n", p.test, p.pipeline, kit.Median(f, func(s sample) float64 { return s.rps }), cf, ca, cf/ca, cb, cb/ca)
	}
}

func benchArgs(port string, p point, clients int) []string {
	return []string{"-h", "127.0.0.1", "-p", port, "-t", p.test, "-n", strconv.Itoa(p.requests),
		"-P", strconv.Itoa(p.pipeline), "-c", strconv.Itoa(clients), "-r", "100000", "--csv"}
}

func runOnce(cmd *exec.Cmd, p point) (sample, error) {
	rows, err := kit.RunCSV(cmd, 5)
	if err != nil {
		return sample{}, err
	}
	rps, _ := strconv.ParseFloat(rows[1][1], 64)
	p50, _ := strconv.ParseFloat(rows[1][4], 64)
	cpu := kit.CPUTime(cmd.ProcessState)
	return sample{rps: rps, p50: p50, cpuPerReq: float64(cpu.Nanoseconds()) / 1000 / float64(p.requests)}, nil
}

// serverCPU returns redis-server's used CPU seconds (user + system).
func serverCPU(port string) float64 {
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		return 0
	}
	defer c.Close()
	c.Write([]byte("*2\r\n$4\r\nINFO\r\n$3\r\ncpu\r\n"))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	var total float64
	for _, l := range strings.Split(string(buf[:n]), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
