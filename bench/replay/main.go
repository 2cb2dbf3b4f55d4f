// Command replay measures what `pacer replay` costs on a long trace: it
// writes a MONITOR trace of -lines lines (SET, GET, INCR, HSET, LPUSH from
// 40 clients over two databases, values of 8 to 64 bytes, bursts), gzipped
// with -gzip, spanning -span; then it times `pacer replay --dry-run` (the
// read that checks and sums the trace up) and runs the replay at -speed
// against a redis-server it starts on loopback, reporting each process's
// wall time, CPU and peak resident memory (the kernel's high-water mark).
// The target: a 5-million-line trace replayed at 3× in under 150 MB,
// and read and checked in under 10 s.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/replay -bin /tmp/pacer                       # 5M lines over 300 s, at 3×
//	go run ./bench/replay -bin /tmp/pacer -lines 500000 -span 30s -gzip
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
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
	bin := flag.String("bin", "", "the pacer binary to measure (required)")
	lines := flag.Int("lines", 5_000_000, "lines of the trace")
	span := flag.Duration("span", 300*time.Second, "the trace's span")
	speed := flag.String("speed", "3", "the replay's --speed")
	zip := flag.Bool("gzip", false, "gzip the trace")
	keep := flag.String("trace", "", "write the trace here and keep it (default: a temporary file)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "replay: -bin is required")
		os.Exit(2)
	}
	if err := run(*bin, *lines, *span, *speed, *zip, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

func run(bin string, lines int, span time.Duration, speed string, zip bool, keep string) error {
	path := keep
	if path == "" {
		dir, err := os.MkdirTemp("", "pacer-replay-bench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "trace.txt")
		if zip {
			path += ".gz"
		}
	}
	start := time.Now()
	size, err := writeTrace(path, lines, span, zip)
	if err != nil {
		return err
	}
	fmt.Printf("trace: %d lines over %s, %.1f MiB on disk%s, written in %s\n", lines, span, float64(size)/(1<<20),
		map[bool]string{true: " (gzip)", false: ""}[zip], time.Since(start).Round(time.Millisecond))

	dry, err := measure(bin, "replay", "--dry-run", path)
	if err != nil {
		return err
	}
	fmt.Printf("dry run (read, check, sum up): %s wall, %s CPU, peak RSS %.1f MiB\n", dry.wall.Round(time.Millisecond), dry.cpu.Round(time.Millisecond), dry.peakMiB)
	fmt.Print(indent(dry.out))

	srv, err := kit.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	rep, err := measure(bin, "replay", "-p", srv.Port, "--speed", speed, "-q", "--json", os.DevNull, path)
	if err != nil {
		return err
	}
	fmt.Printf("replay at %s×: %s wall, %s CPU, peak RSS %.1f MiB, exit %d\n", speed, rep.wall.Round(time.Millisecond), rep.cpu.Round(time.Millisecond), rep.peakMiB, rep.code)
	fmt.Print(indent(rep.out))
	return nil
}

// measured is one pacer process: its output (stdout and stderr), exit
// code, wall and CPU time, and peak resident memory.
type measured struct {
	out     string
	code    int
	wall    time.Duration
	cpu     time.Duration
	peakMiB float64
}

func measure(bin string, args ...string) (measured, error) {
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	m := measured{out: out.String(), wall: time.Since(start)}
	if cmd.ProcessState == nil {
		return m, err
	}
	m.code = cmd.ProcessState.ExitCode()
	if m.code != 0 && m.code != 4 { // 4: a busy machine's inconclusive result still measured
		return m, fmt.Errorf("%s %s: exit %d: %s", bin, strings.Join(args, " "), m.code, out.String())
	}
	m.cpu = kit.CPUTime(cmd.ProcessState)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.peakMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	return m, nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}

// writeTrace writes lines lines of redis-cli monitor output over span:
// a steady stream with a burst every second (a tenth of the second's
// commands within 10 ms).
func writeTrace(path string, lines int, span time.Duration, zip bool) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if zip {
		zw = gzip.NewWriter(f)
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(7, 9))
	base := int64(1_700_000_000) * int64(time.Second)
	step := float64(span) / float64(lines)
	var line []byte
	for i := range lines {
		t := int64(float64(i) * step)
		// Every second's first tenth of commands arrive in its first 10 ms.
		if sec, in := t/int64(time.Second), t%int64(time.Second); float64(in) < 0.1*float64(time.Second) {
			t = sec*int64(time.Second) + int64(float64(in)/(0.1*float64(time.Second))*float64(10*time.Millisecond))
		}
		ts := base + t
		client := rng.IntN(40)
		db := client % 2
		line = strconv.AppendInt(line[:0], ts/int64(time.Second), 10)
		line = append(line, '.')
		us := (ts % int64(time.Second)) / 1000
		line = append(line, fmt.Sprintf("%06d", us)...)
		line = append(line, " ["...)
		line = strconv.AppendInt(line, int64(db), 10)
		line = append(line, " 127.0.0."...)
		line = strconv.AppendInt(line, int64(client), 10)
		line = append(line, ":5"...)
		line = strconv.AppendInt(line, int64(1000+client), 10)
		line = append(line, "] "...)
		key := rng.IntN(100_000)
		switch k := rng.IntN(10); {
		case k < 4:
			line = fmt.Appendf(line, `"SET" "key:%d" "%s"`, key, value(rng))
		case k < 7:
			line = fmt.Appendf(line, `"GET" "key:%d"`, key)
		case k < 8:
			line = fmt.Appendf(line, `"INCR" "counter:%d"`, key%100)
		case k < 9:
			line = fmt.Appendf(line, `"HSET" "hash:%d" "f%d" "%s"`, key%1000, key%10, value(rng))
		default:
			line = fmt.Appendf(line, `"LPUSH" "list:%d" "%s"`, key%100, value(rng))
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			f.Close()
			return 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			f.Close()
			return 0, err
		}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, err
	}
	return st.Size(), f.Close()
}

// value is 8 to 64 bytes with a space, a quote and an escape in it, as
// MONITOR writes them.
func value(rng *rand.Rand) string {
	n := 8 + rng.IntN(57)
	b := make([]byte, 0, n+8)
	for len(b) < n {
		b = append(b, byte('a'+rng.IntN(26)))
	}
	return string(b[:n/2]) + ` \"q\" \x00` + string(b[n/2:])
}
