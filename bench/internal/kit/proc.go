package kit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// Mem is a process's resident memory, in bytes, as /proc/PID/status says:
// Peak is VmHWM (the kernel's high-water mark of the resident set),
// Current is VmRSS.
type Mem struct {
	Peak, Current int64
}

// ReadMem reads pid's memory from /proc/PID/status. A process that has
// exited (gone, or a zombie whose memory is released) is an error.
func ReadMem(pid int) (Mem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		var dst *int64
		switch string(f[0]) {
		case "VmHWM:":
			dst = &m.Peak
		case "VmRSS:":
			dst = &m.Current
		default:
			continue
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("/proc/%d/status: %q", pid, sc.Text())
		}
		*dst = kb << 10
		found++
	}
	if found < 2 {
		return Mem{}, fmt.Errorf("pid %d has no resident memory (exited)", pid)
	}
	return m, nil
}

// MemWatch samples a process's memory at a fixed interval and keeps the
// highest values seen. VmHWM is monotonic while the process lives, but
// /proc/PID is gone once it exits: sampling keeps the last value read.
type MemWatch struct {
	pid  int
	mu   sync.Mutex
	max  Mem
	n    int
	stop chan struct{}
	done chan struct{}
}

// WatchMem starts sampling pid every interval until Stop; during the
// first startSampling it samples every millisecond, so that a process that
// exits at once (a refused flag) is seen after its start-up.
//
// Not the rusage of wait4: Linux folds the memory the process had before
// its exec into ru_maxrss, and a Go parent starts children with vfork, so
// the child's ru_maxrss includes the parent's resident set.
func WatchMem(pid int, every time.Duration) *MemWatch {
	w := &MemWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		start := time.Now()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		fast := true
		for {
			w.sample()
			if fast && time.Since(start) > startSampling {
				t.Reset(every)
				fast = false
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// startSampling is how long WatchMem samples every millisecond.
const startSampling = 300 * time.Millisecond

func (w *MemWatch) sample() {
	m, err := ReadMem(w.pid)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.max.Peak = max(w.max.Peak, m.Peak)
	w.max.Current = max(w.max.Current, m.Current)
	w.n++
	w.mu.Unlock()
}

// Now returns the highest values seen so far and the number of samples.
func (w *MemWatch) Now() (Mem, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max, w.n
}

// Stop takes a last sample (if the process still runs), stops sampling and
// returns the highest values seen.
func (w *MemWatch) Stop() Mem {
	w.sample()
	close(w.stop)
	<-w.done
	m, _ := w.Now()
	return m
}

// CPUTime is the user plus system CPU time of an exited process.
func CPUTime(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}
