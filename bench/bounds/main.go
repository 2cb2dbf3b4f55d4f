// Command bounds runs the memory and hang reproductions of the hardening
// round against a pacer binary, one case at a time, and prints a
// table: each case's peak resident memory (VmHWM), exit code, wall and CPU
// time, and whether it stayed under the bound (256 MiB with default flags)
// and ended by itself.
//
// A case is a target (a real redis-server, a hostile server in this
// process, pacer serve), pacer's arguments and a time limit. Every process
// is sampled every 100 ms (every millisecond in its first 300 ms) from
// /proc/PID/status: VmHWM, the kernel's high-water mark; /proc/PID is gone
// after the exit, so the highest sample is kept (wait4's ru_maxrss would
// include this program's own memory, see kit.WatchMem). A case
// still running at its limit is killed and reported as a hang; one past
// -kill-rss is killed and reported over. Everything listens on and dials
// 127.0.0.1 only.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/bounds -bin /tmp/pacer             # every case (about 4 minutes)
//	go run ./bench/bounds -bin /tmp/pacer -only 'commands|serve'
//	go run ./bench/bounds -list
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
	"github.com/pacer-load/pacer/internal/hostile"
)

// bound is the memory bound with default flags.
const bound = 256 << 20

// sampleEvery is how often /proc/PID/status is read.
const sampleEvery = 100 * time.Millisecond

func main() {
	bin := flag.String("bin", "", "pacer binary to measure (required unless -list)")
	only := flag.String("only", "", "run only the cases whose name matches this regular expression")
	list := flag.Bool("list", false, "list the cases and exit")
	killRSS := flag.Int64("kill-rss", 2<<30, "kill a case whose resident memory passes this many bytes (it is reported over)")
	maxAS := flag.Int64("max-as", 16<<30, "address-space limit (RLIMIT_AS) of every process started, a backstop for the machine; 0: none")
	flag.Parse()

	cases := allCases()
	if *list {
		for _, c := range cases {
			fmt.Printf("%-24s %s\n", c.name, c.about)
		}
		return
	}
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "bounds: -bin PATH is required (go build -o /tmp/pacer ./cmd/pacer)")
		os.Exit(2)
	}
	var re *regexp.Regexp
	if *only != "" {
		var err error
		if re, err = regexp.Compile(*only); err != nil {
			fmt.Fprintln(os.Stderr, "bounds: -only:", err)
			os.Exit(2)
		}
	}
	if *maxAS > 0 {
		// Inherited by every process started from here on.
		lim := syscall.Rlimit{Cur: uint64(*maxAS), Max: uint64(*maxAS)}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "bounds: RLIMIT_AS:", err)
		}
	}
	dir, err := os.MkdirTemp("", "pacer-bounds")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bounds:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	e := &env{bin: *bin, dir: dir, killRSS: *killRSS}
	defer e.close()

	fmt.Printf("pacer: %s, bound %d MiB, sampled every %v\n\n", *bin, bound>>20, sampleEvery)
	fmt.Println(header)
	bad := 0
	for _, c := range cases {
		if re != nil && !re.MatchString(c.name) {
			continue
		}
		r := e.run(c)
		fmt.Println(r.row())
		if r.status() != "ok" && r.status() != "n/a" {
			bad++
		}
	}
	if bad > 0 {
		fmt.Printf("\n%d case(s) over the bound, hung or exited unexpectedly\n", bad)
		os.Exit(1)
	}
}

// env is what the cases share: the binary, a directory for their files and
// a redis-server started on first use.
type env struct {
	bin     string
	dir     string
	killRSS int64
	redis   *kit.Server
	closers []func()
}

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	if e.redis != nil {
		e.redis.Stop()
	}
}

// sharedRedis is a plain redis-server for the cases that need a healthy
// target.
func (e *env) sharedRedis() (*kit.Server, error) {
	if e.redis == nil {
		r, err := kit.Start()
		if err != nil {
			return nil, err
		}
		e.redis = r
	}
	// Each case starts from an empty dataset.
	if err := flushAll(e.redis.Addr); err != nil {
		return nil, err
	}
	return e.redis, nil
}

// ownRedis is a redis-server for one case (it is signalled, or configured).
func (e *env) ownRedis(j *job, extra ...string) (*kit.Server, error) {
	r, err := kit.Start(extra...)
	if err != nil {
		return nil, err
	}
	j.cleanup = append(j.cleanup, r.Stop)
	return r, nil
}

// hostile starts an in-process hostile server for one case.
func (e *env) hostile(j *job, b hostile.Behaviour) (*hostile.Server, error) {
	s, err := hostile.Listen(b)
	if err != nil {
		return nil, err
	}
	j.cleanup = append(j.cleanup, s.Close)
	return s, nil
}

// file writes a file of the cases' directory.
func (e *env) file(name string, write func(w io.Writer)) (string, error) {
	path := filepath.Join(e.dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	write(f)
	return path, f.Close()
}

func flushAll(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "*1\r\n$8\r\nFLUSHALL\r\n"); err != nil {
		return err
	}
	_, err = c.Read(make([]byte, 16))
	return err
}

// benchCase is one reproduction.
type benchCase struct {
	name  string
	about string        // the reproduction, in the words of its report
	limit time.Duration // killed and reported as a hang after this
	want  []int         // the exit codes that are right (nil: any)
	setup func(e *env) (*job, error)
}

// job is a case made concrete: the arguments and what happens around them.
type job struct {
	args      []string
	stdin     string        // a path for standard input ("" none)
	interrupt time.Duration // SIGINT this long after the start (0 none)
	// during runs beside the process (given its pid) until stop closes.
	during  func(pid int, stop <-chan struct{})
	cleanup []func()
	// note adds to the table's note when the case has ended.
	note func() string
}

// result is one row of the table.
type result struct {
	name    string
	peak    int64
	exit    int // -1: killed
	wall    time.Duration
	cpu     time.Duration
	hang    bool
	killed  bool // past -kill-rss
	want    []int
	note    string
	setupEr error
}

const header = "case                      peak MB  exit  wall s   cpu s  result  note\n" +
	"------------------------  -------  ----  ------  ------  ------  ----"

func (r result) status() string {
	switch {
	case r.setupEr != nil:
		return "SETUP"
	case r.exit == 2 && strings.Contains(r.note, "flag provided but not defined"):
		return "n/a" // the binary predates a flag of the case
	case r.hang:
		return "HANG"
	case r.killed || r.peak >= bound:
		return "OVER"
	case r.want != nil && !slices.Contains(r.want, r.exit):
		return "EXIT"
	}
	return "ok"
}

func (r result) row() string {
	if r.setupEr != nil {
		return fmt.Sprintf("%-24s  %7s  %4s  %6s  %6s  %-6s  %s", r.name, "-", "-", "-", "-", r.status(), r.setupEr)
	}
	exit := fmt.Sprint(r.exit)
	if r.exit < 0 {
		exit = "kill"
	}
	peak := fmt.Sprintf("%7.1f", float64(r.peak)/(1<<20))
	if r.killed {
		peak = fmt.Sprintf(">%6.0f", float64(r.peak)/(1<<20))
	}
	return fmt.Sprintf("%-24s  %7s  %4s  %6.1f  %6.1f  %-6s  %s", r.name, peak, exit, r.wall.Seconds(), r.cpu.Seconds(), r.status(), r.note)
}

// run runs one case and measures it.
func (e *env) run(c benchCase) result {
	r := result{name: c.name, want: c.want}
	j, err := c.setup(e)
	if j != nil {
		defer func() {
			for i := len(j.cleanup) - 1; i >= 0; i-- {
				j.cleanup[i]()
			}
		}()
	}
	if err != nil {
		r.setupEr = err
		return r
	}
	cmd := exec.Command(e.bin, j.args...)
	var tail tailBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &tail
	if j.stdin != "" {
		f, err := os.Open(j.stdin)
		if err != nil {
			r.setupEr = err
			return r
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.setupEr = err
		return r
	}
	pid := cmd.Process.Pid
	watch := kit.WatchMem(pid, sampleEvery)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if j.during != nil {
		wg.Add(1)
		go func() { defer wg.Done(); j.during(pid, stop) }()
	}
	limit := time.NewTimer(c.limit)
	defer limit.Stop()
	var intr <-chan time.Time
	if j.interrupt > 0 {
		t := time.NewTimer(j.interrupt)
		defer t.Stop()
		intr = t.C
	}
	check := time.NewTicker(sampleEvery)
	defer check.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-intr:
			cmd.Process.Signal(syscall.SIGINT)
		case <-check.C:
			if m, _ := watch.Now(); m.Current > e.killRSS && !r.killed {
				r.killed = true
				cmd.Process.Kill()
			}
		case <-limit.C:
			r.hang = true
			cmd.Process.Kill()
		}
	}
	r.wall = time.Since(start)
	close(stop)
	wg.Wait()
	m := watch.Stop()
	r.peak = m.Peak
	r.cpu = kit.CPUTime(cmd.ProcessState)
	r.exit = cmd.ProcessState.ExitCode()
	var notes []string
	if j.note != nil {
		if n := j.note(); n != "" {
			notes = append(notes, n)
		}
	}
	if l := tail.fatal(); l != "" {
		notes = append(notes, l)
	} else if l := tail.lastLine(); l != "" {
		notes = append(notes, l)
	}
	r.note = strings.ReplaceAll(strings.Join(notes, "; "), e.dir, "$TMP")
	return r
}

// tailBuffer keeps the start and the end of what a process writes on
// stderr.
type tailBuffer struct {
	mu   sync.Mutex
	head []byte
	b    []byte
}

const headSize, tailSize = 1024, 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := headSize - len(t.head); room > 0 {
		t.head = append(t.head, p[:min(room, len(p))]...)
	}
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = append(t.b[:0], t.b[len(t.b)-tailSize:]...)
	}
	return len(p), nil
}

// fatal is the Go runtime's "fatal error:" line (out of memory under
// -max-as) or a panic's first line, if the process printed one.
func (t *tailBuffer) fatal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range strings.Split(string(t.head)+"\n"+string(t.b), "\n") {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return ""
}

// lastLine is the last non-empty line (progress redraws split at \r),
// clipped for the table.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.FieldsFunc(string(t.b), func(r rune) bool { return r == '\n' || r == '\r' })
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if len(l) > 110 {
				l = l[:110] + "…"
			}
			return l
		}
	}
	return ""
}
