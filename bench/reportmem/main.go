// Command reportmem measures what `pacer report` takes to read a large
// memtier_benchmark --json-out-file: it writes one with -seconds entries in
// each command's per-second series ("Time-Serie"), runs each binary's
// `pacer report` on it (interleaved, -runs times), and prints the peak
// resident memory (VmHWM) beside the file's size.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/reportmem -variants 'before=/tmp/pacer-old;after=/tmp/pacer' -seconds 2000000
package main

import (
	"bufio"
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

func main() {
	variants := flag.String("variants", "", "NAME=BIN pairs separated by ';'")
	seconds := flag.Int("seconds", 2_000_000, "per-second entries in the series")
	commands := flag.String("commands", "Gets", "commands with a series, comma separated (Gets,Sets)")
	runs := flag.Int("runs", 1, "runs per binary, interleaved")
	flag.Parse()
	dir, err := os.MkdirTemp("", "pacer-reportmem")
	kit.Check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "memtier.json")
	kit.Check(write(path, *seconds, strings.Split(*commands, ",")))
	st, err := os.Stat(path)
	kit.Check(err)
	fmt.Printf("memtier JSON of %d per-second entries in %s: %.1f MB\n", *seconds, *commands, float64(st.Size())/(1<<20))
	for i := range *runs {
		for _, part := range strings.Split(*variants, ";") {
			name, bin, ok := strings.Cut(part, "=")
			if !ok {
				name, bin = filepath.Base(part), part
			}
			cmd := exec.Command(bin, "report", path)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			kit.Check(cmd.Start())
			w := kit.WatchMem(cmd.Process.Pid, 10*time.Millisecond)
			err := cmd.Wait()
			m := w.Stop()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			note := ""
			if e := strings.TrimSpace(errb.String()); e != "" {
				note = "; stderr: " + strings.SplitN(e, "\n", 2)[0]
			}
			fmt.Printf("run %d %-8s peak RSS %7.1f MB (%.2f× the file), exit %d, %.1fs, %d lines out%s\n", i+1, name,
				float64(m.Peak)/(1<<20), float64(m.Peak)/float64(st.Size()), code, time.Since(start).Seconds(),
				strings.Count(out.String(), "\n"), note)
		}
	}
}

// write writes a memtier_benchmark JSON whose commands have n seconds of
// series each, in memtier's shape (configuration, ALL STATS with Runtime,
// the commands and Totals).
func write(path string, n int, commands []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"configuration":{"server":"127.0.0.1","port":6379,"clients":50,"threads":4},` + "\n" +
		`"ALL STATS":{"Runtime":{"Start time":0,"Finish time":` + strconv.Itoa(n*1000) + `,"Total duration":` + strconv.Itoa(n*1000) + `},` + "\n")
	for _, c := range commands {
		w.WriteString(`"` + c + `":{"Count":` + strconv.Itoa(n*1000) + `,"Ops/sec":1000,"Average Latency":0.5,"Min Latency":0.1,"Max Latency":9.5,` +
			`"Percentile Latencies":{"p50.000":0.45,"p99.000":1.2,"p99.900":4.1},"Time-Serie":{` + "\n")
		for s := range n {
			if s > 0 {
				w.WriteString(",\n")
			}
			fmt.Fprintf(w, `"%d":{"Count":1000,"Average Latency":0.%d,"Min Latency":0.1,"Max Latency":%d.5}`, s, 3+s%5, 1+s%9)
		}
		w.WriteString("}},\n")
	}
	w.WriteString(`"Totals":{"Count":` + strconv.Itoa(n*1000*len(commands)) + `,"Ops/sec":1000,"Average Latency":0.5,"Min Latency":0.1,"Max Latency":9.5}}}` + "\n")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
