//go:build linux

// Command hiccup measures what a hiccup meter costs and what it reads, for
// each way of sleeping a goroutine could use: it runs each candidate alone
// in a child process for a fixed window, interleaved with the others, and
// reports the medians of the process's CPU (getrusage user+sys over the
// window, in % of one core) and of the lateness percentiles it recorded.
//
//	go run ./bench/hiccup                         # 3 rounds of 20 s per candidate
//	go run ./bench/hiccup -rounds 5 -for 20s -modes timer,nanosleep
//	go run ./bench/hiccup -spin 2 -for 10s        # with 2 goroutines burning CPU beside the meter
//	go run ./bench/hiccup -load 5000 -modes none,timer,meter   # beside a loopback writer and reader
//
// Candidates (-modes):
//
//	none       no sleeper: the idle process's own cost, the baseline
//	timer      a goroutine in time.Sleep(interval)
//	nanosleep  a goroutine in clock.SleepUntil: a blocking clock_nanosleep (the P stays until sysmon retakes it)
//	yield      nanosleep, then runtime.Gosched after each wake
//	timerfd    a goroutine reading a periodic timerfd through the netpoller (as a reader reads its socket)
//	locked     nanosleep on a goroutine locked to its OS thread
//	raw        a locked goroutine in clock.RawSleepUntil (a raw clock_nanosleep: keeps its P)
//	meter      host.Meter as shipped, with 1 s buckets
//	fed        host.Meter fed by the -pace loop's own sleeps (Feed), its
//	           sleeper standing by while they come (needs -pace)
//
// With -spin N, N goroutines loop on the CPU beside the sleeper, so the
// readings show whether a candidate sees the Go scheduler's delays (the CPU
// numbers are then the spinners'). With -load, a paced writer and a reader
// exchange messages over loopback TCP beside it: the difference to none is
// the meter's share in a busy process. With -pace RATE the writer is
// paced as pacer's open loop paces (a thread with a short slice and
// 1 ns timer slack, raw clock_nanosleep to each instant, or to each
// -quantum, yielding every 4 ms): then meter and fed compare the meter
// standing beside the pacer with the meter fed by it, and none is the
// pacing alone. -busy N runs N busy-loop processes for the whole
// invocation (a busy host). The machine is shared: read medians and
// compare candidates within one invocation. Results: README.md.
//
//	go run ./bench/hiccup -pace 10000 -quantum 600us -modes none,meter,fed -rounds 5 -for 10s
//	go run ./bench/hiccup -pace 10000 -quantum 600us -modes none,meter,fed -rounds 5 -for 10s -busy 2
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/internal/clock"
	"golang.org/x/sys/unix"
)

// sample is one child's report.
type sample struct {
	Mode        string
	CPUPercent  float64 // user+sys over the window, % of one core
	Wakes       uint64  // wakes in the window
	Recorded    int64   // values recorded (wakes plus the wakes stalls hid)
	Fed         uint64  // of Wakes, those the pacing loop fed (mode fed)
	P50, P99    float64 // lateness, µs
	P999, Max   float64
	WallSeconds float64
}

func main() {
	child := flag.String("child", "", "internal: run one candidate and report it")
	modes := flag.String("modes", "none,timer,nanosleep,locked,raw,meter", "candidates, comma separated")
	rounds := flag.Int("rounds", 3, "rounds; each runs every candidate once, in a rotated order")
	window := flag.Duration("for", 20*time.Second, "measured window of each run")
	interval := flag.Duration("interval", time.Millisecond, "the sleep")
	spin := flag.Int("spin", 0, "goroutines burning CPU beside the sleeper")
	load := flag.Int("load", 0, "messages per second over a loopback TCP connection beside the sleeper (a paced writer, a reader)")
	pace := flag.Int("pace", 0, "messages per second written by a loop paced as pacer's open loop paces (instead of -load's writer)")
	quantum := flag.Duration("quantum", 0, "with -pace: the least time between the pacing loop's wakes (0: one wake per message)")
	busy := flag.Int("busy", 0, "busy-loop processes running beside every child")
	flag.Parse()
	if *child != "" {
		s, err := runChild(*child, *window, *interval, *spin, *load, pacing{rate: *pace, quantum: *quantum})
		if err != nil {
			fmt.Fprintln(os.Stderr, "hiccup:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(s)
		return
	}
	names := strings.Split(*modes, ",")
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hiccup:", err)
		os.Exit(1)
	}
	fmt.Printf("GOMAXPROCS %d, NumCPU %d, interval %v, window %v, spin %d, load %d/s, pace %d/s quantum %v, busy %d\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), *interval, *window, *spin, *load, *pace, *quantum, *busy)
	for range *busy {
		b := exec.Command("sh", "-c", "while :; do :; done")
		if err := b.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "hiccup:", err)
			os.Exit(1)
		}
		defer b.Process.Kill()
	}
	all := map[string][]sample{}
	for r := range *rounds {
		for i := range names {
			name := names[(i+r)%len(names)] // rotate, so no candidate always follows the same one
			out, err := exec.Command(self, "-child", name, "-for", window.String(), "-interval", interval.String(),
				"-spin", fmt.Sprint(*spin), "-load", fmt.Sprint(*load), "-pace", fmt.Sprint(*pace), "-quantum", quantum.String()).Output()
			if err != nil {
				fmt.Fprintf(os.Stderr, "hiccup: %s: %v\n", name, err)
				return // the deferred kills end the busy loops
			}
			var s sample
			if err := json.Unmarshal(out, &s); err != nil {
				fmt.Fprintf(os.Stderr, "hiccup: %s: %v: %q\n", name, err, out)
				return
			}
			fmt.Printf("round %d %-9s cpu %6.3f%%  wakes %6d (fed %6d)  late µs p50 %7.1f p99 %8.1f p99.9 %8.1f max %9.1f\n",
				r+1, name, s.CPUPercent, s.Wakes, s.Fed, s.P50, s.P99, s.P999, s.Max)
			all[name] = append(all[name], s)
		}
	}
	fmt.Println("medians (cpu: % of one core; +: over none's median, when none ran):")
	base := -1.0
	if ss := all["none"]; len(ss) > 0 {
		base = kit.Median(ss, func(s sample) float64 { return s.CPUPercent })
	}
	for _, name := range names {
		ss := all[name]
		med := func(f func(sample) float64) float64 { return kit.Median(ss, f) }
		cpu := med(func(s sample) float64 { return s.CPUPercent })
		over := ""
		if base >= 0 {
			over = fmt.Sprintf(" (+%.3f)", cpu-base)
		}
		fmt.Printf("%-9s cpu %6.3f%%%s  wakes/s %6.0f  late µs p50 %7.1f p99 %8.1f p99.9 %8.1f max %9.1f\n", name, cpu, over,
			med(func(s sample) float64 { return float64(s.Wakes) / s.WallSeconds }),
			med(func(s sample) float64 { return s.P50 }), med(func(s sample) float64 { return s.P99 }),
			med(func(s sample) float64 { return s.P999 }), med(func(s sample) float64 { return s.Max }))
	}
}

// runChild runs one candidate for a warm-up second and the window, and
// reports the window.
func runChild(mode string, window, interval time.Duration, spin, load int, pace pacing) (sample, error) {
	var stop atomic.Bool
	for range spin {
		go func() {
			x := 0
			for !stop.Load() {
				x++
			}
		}()
	}
	var feed atomic.Pointer[host.Meter] // the meter the pacing loop feeds (mode fed)
	if load > 0 || pace.rate > 0 {
		end, err := loopback(load, pace, &feed, &stop)
		if err != nil {
			return sample{}, err
		}
		defer end()
	}
	rec := histo.NewRecorder()
	var wakes atomic.Uint64
	var from0 atomic.Int64 // wakes before it are the warm-up's
	finished := make(chan struct{})
	loop := func(lock bool, sleep func(from int64)) {
		go func() {
			defer close(finished)
			if lock {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for !stop.Load() {
				from := clock.Now()
				sleep(from)
				woke := clock.Now()
				if f := from0.Load(); f == 0 || woke < f {
					continue
				}
				wakes.Add(1)
				late := max(woke-from-int64(interval), 0)
				rec.Record(late)
				for m := late - int64(interval); m >= int64(interval); m -= int64(interval) {
					rec.Record(m)
				}
			}
		}()
	}
	var meter *host.Meter
	switch mode {
	case "none":
		close(finished)
	case "timer":
		loop(false, func(int64) { time.Sleep(interval) })
	case "nanosleep":
		loop(false, func(from int64) { clock.SleepUntil(from + int64(interval)) })
	case "yield":
		loop(false, func(from int64) { clock.SleepUntil(from + int64(interval)); runtime.Gosched() })
	case "timerfd":
		if err := timerfd(interval, &stop, rec, &wakes, &from0, finished); err != nil {
			return sample{}, err
		}
	case "locked":
		loop(true, func(from int64) { clock.SleepUntil(from + int64(interval)) })
	case "raw":
		loop(true, func(from int64) { clock.RawSleepUntil(from + int64(interval)) })
	case "meter", "fed":
		if mode == "fed" && pace.rate <= 0 {
			return sample{}, fmt.Errorf("mode fed needs -pace")
		}
		close(finished)
		var err error
		meter, err = host.NewMeter(host.MeterConfig{Interval: interval, Start: clock.Now() + int64(time.Second), Bucket: time.Second})
		if err != nil {
			return sample{}, err
		}
		meter.Start()
		if mode == "fed" {
			feed.Store(meter)
		}
	default:
		return sample{}, fmt.Errorf("unknown mode %q", mode)
	}
	time.Sleep(time.Second)
	ru0, t0 := rusage(), clock.Now()
	from0.Store(t0)
	time.Sleep(window)
	ru1, t1 := rusage(), clock.Now()
	stop.Store(true)
	<-finished
	h := rec.Snapshot()
	n, fed := wakes.Load(), uint64(0)
	if meter != nil {
		res := meter.Stop()
		h, n, fed = res.Total, res.Wakes, res.FedWakes
	}
	us := func(v int64) float64 { return float64(v) / 1e3 }
	wall := float64(t1-t0) / 1e9
	return sample{
		Mode: mode, CPUPercent: 100 * (ru1 - ru0).Seconds() / wall, Wakes: n, Fed: fed, Recorded: h.TotalCount(),
		P50: us(h.ValueAtQuantile(50)), P99: us(h.ValueAtQuantile(99)), P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()),
		WallSeconds: wall,
	}, nil
}

// timerfd starts a goroutine that reads a periodic timerfd (expiring at
// t0 + k·interval) through the netpoller and records, at each wake, how
// late every expiration since the last read was served.
func timerfd(interval time.Duration, stop *atomic.Bool, rec *histo.Recorder, wakes *atomic.Uint64, from0 *atomic.Int64, finished chan struct{}) error {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return err
	}
	t0 := clock.Now()
	spec := unix.ItimerSpec{Interval: unix.NsecToTimespec(int64(interval)), Value: unix.NsecToTimespec(t0 + int64(interval))}
	if err := unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		unix.Close(fd)
		return err
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	go func() {
		defer close(finished)
		defer f.Close()
		var buf [8]byte
		next := int64(1) // the first expiration not yet served
		for !stop.Load() {
			if _, err := f.Read(buf[:]); err != nil {
				return
			}
			woke := clock.Now()
			last := (woke - t0) / int64(interval)
			if f := from0.Load(); f == 0 || woke < f {
				next = last + 1
				continue
			}
			wakes.Add(1)
			for ; next <= last; next++ {
				rec.Record(woke - (t0 + next*int64(interval)))
			}
		}
	}()
	return nil
}

// pacing is -pace's loop: rate messages a second, woken at most once per
// quantum.
type pacing struct {
	rate    int
	quantum time.Duration
}

// yieldEvery is how often the pacing loop yields, as pacer's does.
const yieldEvery = 4 * time.Millisecond

// paced is -pace's writer, paced as pacer's open loop paces: a thread
// with the short slice and 1 ns timer slack, an extra P for the
// runtime, a raw clock_nanosleep to each due instant (or quantum), a
// yield every yieldEvery; with a meter in feed, each sleep is offered to
// it, as the pacer offers it.
func paced(w net.Conn, p pacing, feed *atomic.Pointer[host.Meter], stop *atomic.Bool) {
	defer clock.HoldP()()
	// As pacer's sliceHolder: the goroutine is not locked to its thread
	// (a locked goroutine's yield is a switch of threads), and whichever
	// thread it runs on gets the short slice and the timer slack.
	tid := 0
	hold := func() {
		if t := clock.Thread(); t != tid {
			if tid != 0 {
				clock.ResetSlice(tid)
			}
			tid = t
			clock.SetShortSlice(tid)
			clock.PreciseTimers()
		}
	}
	defer func() { clock.ResetSlice(tid) }()
	msg := make([]byte, 32*max(1, int(p.quantum.Nanoseconds()*int64(p.rate)/1e9)+1))
	period := int64(time.Second) / int64(p.rate)
	t0 := clock.Now()
	var next, lastWake, lastYield int64
	for !stop.Load() {
		now := clock.Now()
		n := 0
		for ; t0+next*period <= now; next++ {
			n++
		}
		if n > 0 {
			if _, err := w.Write(msg[:32*min(n, len(msg)/32)]); err != nil {
				return
			}
		}
		if now-lastYield >= int64(yieldEvery) {
			runtime.Gosched()
			lastYield = now
		}
		wake := max(t0+next*period, lastWake+int64(p.quantum))
		lastWake = wake
		hold()
		clock.RawSleepUntil(wake)
		if wake > now {
			feed.Load().Feed(wake, clock.Now())
		}
	}
}

// loopback starts a writer (paced as -pace asks, else -load's plain
// writer sending 32 bytes perSecond times a second) over a loopback TCP
// connection and a reader draining it, a small stand-in for pacer's
// pacing loop and connection readers; end closes it.
func loopback(perSecond int, pace pacing, feed *atomic.Pointer[host.Meter], stop *atomic.Bool) (end func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	w, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return nil, err
	}
	r, err := l.Accept()
	if err != nil {
		w.Close()
		return nil, err
	}
	if pace.rate > 0 {
		go paced(w, pace, feed, stop)
		perSecond = 0
	}
	period := int64(time.Second) / int64(max(perSecond, 1))
	go func() {
		if perSecond == 0 {
			return
		}
		msg := make([]byte, 32)
		t0 := clock.Now()
		for i := int64(1); !stop.Load(); i++ {
			clock.SleepUntil(t0 + i*period)
			if _, err := w.Write(msg); err != nil {
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	}()
	return func() { w.Close(); r.Close() }, nil
}

// rusage is the process's user plus system CPU time so far.
func rusage() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
