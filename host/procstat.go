package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// ProcUsage is what a process's threads did with the CPUs over a span of
// time, from the kernel's scheduler statistics: the CPU time they ran,
// the time they were runnable but waited for a CPU (the run queue), the
// time slices they ran in, and their context switches. It is the server's
// side of "the host was busy": a server process that waits for a CPU
// answers late however fast its own code is, and one that does not wait
// is not slowed by the host's load.
type ProcUsage struct {
	// Seconds is the wall time the usage spans.
	Seconds float64
	// CPU is the time the threads ran; Wait the time they were runnable
	// and waited for a CPU (/proc/PID/task/*/schedstat's first two
	// fields, summed over the threads).
	CPU, Wait time.Duration
	// Slices is the time slices the threads ran in (schedstat's third
	// field): every wake-up and every preemption starts one.
	Slices uint64
	// Voluntary and Involuntary are the threads' context switches: a
	// voluntary one blocks (waits for I/O, for a request), an involuntary
	// one was preempted while runnable.
	Voluntary, Involuntary uint64
	// Threads is how many threads the process had at the later reading.
	Threads int
	// ThreadWait is the wait of the thread that waited most over the
	// span: for a server of several threads, the wait its requests could
	// meet on one thread, which the sum (Wait) overstates by as many
	// threads as wait at once. Add sums the spans' (an upper bound for
	// the whole); 0 where it was not read (an older JSON).
	ThreadWait time.Duration
	// Looks is how many times the busiest thread's state (the thread
	// that ran the most) was looked at over the span
	// (ProcWatch.SampleStates; 0: not sampled), and DiskLooks how many of
	// them found it waiting for the disk: in uninterruptible sleep,
	// blocked in the kernel on I/O (an fsync). Add sums them.
	Looks, DiskLooks uint64
}

// DiskWaitShare is the share of the looks that found the busiest thread
// waiting for the disk (0 without looks): the share of the time its
// requests could meet a disk wait, as ThreadWaitShare is for the CPU.
func (u ProcUsage) DiskWaitShare() float64 {
	if u.Looks == 0 {
		return 0
	}
	return float64(u.DiskLooks) / float64(u.Looks)
}

// ThreadWaitShare is ThreadWait per wall second: the share of the time
// the most-waiting thread was runnable but not running; WaitShare where
// ThreadWait was not read.
func (u ProcUsage) ThreadWaitShare() float64 {
	if u.Seconds <= 0 {
		return 0
	}
	if u.ThreadWait <= 0 {
		return u.WaitShare()
	}
	return u.ThreadWait.Seconds() / u.Seconds
}

// WaitShare is the wait per wall second: for a single-threaded server the
// share of the time it was runnable but not running (0.05: 5% of the
// time), the chance that a request arriving at a random instant found it
// so. 0 without wall time.
func (u ProcUsage) WaitShare() float64 {
	if u.Seconds <= 0 {
		return 0
	}
	return u.Wait.Seconds() / u.Seconds
}

// MeanWait is the mean wait for a CPU per time slice: how long a wake-up
// (a request arriving at an idle server) waited, on average, before the
// server ran. 0 without slices.
func (u ProcUsage) MeanWait() time.Duration {
	if u.Slices == 0 {
		return 0
	}
	return u.Wait / time.Duration(u.Slices)
}

// Add adds o, a later span, to u.
func (u *ProcUsage) Add(o ProcUsage) {
	u.Seconds += o.Seconds
	u.CPU += o.CPU
	u.Wait += o.Wait
	u.Slices += o.Slices
	u.Voluntary += o.Voluntary
	u.Involuntary += o.Involuntary
	u.Threads = max(u.Threads, o.Threads)
	u.ThreadWait += o.ThreadWait
	u.Looks += o.Looks
	u.DiskLooks += o.DiskLooks
}

// threadStat is one thread's counters.
type threadStat struct {
	cpu, wait, slices, vol, invol uint64
}

// ProcWatch reads a process's scheduler statistics again and again and
// keeps them cumulative over its threads: a thread's counters count from
// the watch's first reading (or from zero for a thread born since), and a
// thread that ends keeps what it had counted. A reading costs a few small
// /proc reads per thread (tens of microseconds for a Redis server): once a
// second, off the hot path, it is cheap. Not safe for concurrent use.
type ProcWatch struct {
	root  string
	pid   int
	last  map[int]threadStat
	total threadStat
	read  bool
	// states, when SampleStates runs, counts the looks at the threads'
	// states (its goroutine and Read share it under its lock).
	states *stateLooks
}

// NewProcWatch watches process pid. Nothing is read before Read.
func NewProcWatch(pid int) *ProcWatch {
	return &ProcWatch{root: procRoot, pid: pid, last: map[int]threadStat{}}
}

// ProcReading is a ProcWatch's cumulative counters at one instant.
type ProcReading struct {
	At      int64 // internal/clock.Now
	total   threadStat
	threads int
	ok      bool
	// waits and cpus are each thread's own wait and CPU counters
	// (schedstat's, since the thread began), by thread id.
	waits, cpus map[int]uint64
	// looked and disk are SampleStates' counts so far, per thread: the
	// looks at its state, and those that found it waiting for the disk.
	looked, disk map[int]uint64
}

// OK reports whether the reading was taken.
func (r ProcReading) OK() bool { return r.ok }

// Since is what happened from reading a to r.
func (r ProcReading) Since(a ProcReading) ProcUsage {
	if !r.ok || !a.ok || r.At < a.At {
		return ProcUsage{}
	}
	d := func(x, y uint64) uint64 { return x - min(x, y) }
	// The most-waiting thread: a thread born since a counts all its wait.
	var most uint64
	for tid, w := range r.waits {
		most = max(most, d(w, a.waits[tid]))
	}
	// The busiest thread, the one that ran the most: its disk waits.
	busiest, ran := 0, uint64(0)
	for tid, c := range r.cpus {
		if v := d(c, a.cpus[tid]); v > ran || busiest == 0 {
			busiest, ran = tid, v
		}
	}
	looks := d(r.looked[busiest], a.looked[busiest])
	return ProcUsage{
		Looks: looks, DiskLooks: min(d(r.disk[busiest], a.disk[busiest]), looks),
		Seconds: float64(r.At-a.At) / 1e9,
		CPU:     time.Duration(d(r.total.cpu, a.total.cpu)), Wait: time.Duration(d(r.total.wait, a.total.wait)),
		Slices: d(r.total.slices, a.total.slices), Voluntary: d(r.total.vol, a.total.vol), Involuntary: d(r.total.invol, a.total.invol),
		Threads: r.threads, ThreadWait: time.Duration(min(most, d(r.total.wait, a.total.wait))),
	}
}

// Read reads the process's threads now. It fails when the process is
// gone or its statistics cannot be read (a kernel without schedstat).
func (w *ProcWatch) Read() (ProcReading, error) {
	now := clock.Now()
	dir := filepath.Join(w.root, strconv.Itoa(w.pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ProcReading{}, err
	}
	seen := make(map[int]threadStat, len(ents))
	var firstErr error
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readThread(filepath.Join(dir, e.Name()))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue // a thread that just ended
		}
		seen[tid] = st
		prev, known := w.last[tid]
		if !known && !w.read {
			continue // the baseline: counted from here
		}
		w.total.cpu += st.cpu - min(st.cpu, prev.cpu)
		w.total.wait += st.wait - min(st.wait, prev.wait)
		w.total.slices += st.slices - min(st.slices, prev.slices)
		w.total.vol += st.vol - min(st.vol, prev.vol)
		w.total.invol += st.invol - min(st.invol, prev.invol)
	}
	if len(seen) == 0 {
		if firstErr == nil {
			firstErr = os.ErrNotExist
		}
		return ProcReading{}, firstErr
	}
	w.last, w.read = seen, true
	waits, cpus := make(map[int]uint64, len(seen)), make(map[int]uint64, len(seen))
	for tid, st := range seen {
		waits[tid], cpus[tid] = st.wait, st.cpu
	}
	r := ProcReading{At: now, total: w.total, threads: len(seen), ok: true, waits: waits, cpus: cpus}
	if w.states != nil {
		w.states.snapshot(&r, w.tids())
	}
	return r, nil
}

// readThread reads one thread's schedstat and context switches.
func readThread(dir string) (threadStat, error) {
	var st threadStat
	b, err := os.ReadFile(filepath.Join(dir, "schedstat"))
	if err != nil {
		return st, err
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return st, os.ErrInvalid
	}
	for i, dst := range []*uint64{&st.cpu, &st.wait, &st.slices} {
		if *dst, err = strconv.ParseUint(string(f[i]), 10, 64); err != nil {
			return st, err
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return st, err
	}
	for line := range bytes.Lines(b) {
		var dst *uint64
		switch {
		case bytes.HasPrefix(line, []byte("voluntary_ctxt_switches:")):
			dst = &st.vol
		case bytes.HasPrefix(line, []byte("nonvoluntary_ctxt_switches:")):
			dst = &st.invol
		default:
			continue
		}
		if _, v, ok := bytes.Cut(line, []byte(":")); ok {
			*dst, _ = strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return st, nil
}
