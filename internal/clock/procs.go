package clock

import (
	"runtime"
	"sync"
)

// procs counts the pacing loops that hold a P while they sleep
// (RawSleepUntil), and base is GOMAXPROCS before the first of them.
var procs struct {
	sync.Mutex
	n, base int
}

// HoldP gives the Go runtime one more P (GOMAXPROCS + 1) for as long as
// the caller, a pacing loop that sleeps in RawSleepUntil, runs; the
// returned function gives it back (once all are back, GOMAXPROCS is what
// it was). A raw sleep keeps its goroutine's P: on a 2-CPU machine the
// runtime then had one P for everything else — every connection's
// reader, the hiccup meter, the interval series, the garbage collector
// and, for the embedded target, every server goroutine — while a CPU sat
// idle (the in-process target's receive lag p99 was 7–11 ms at 8k/s,
// 0.13 ms against the same server in a process of its own). The P given
// back is idle while the loop sleeps, so it adds a thread only while the
// loop works.
func HoldP() (release func()) {
	procs.Lock()
	if procs.n == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.n++
	runtime.GOMAXPROCS(procs.base + procs.n)
	procs.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.Lock()
			defer procs.Unlock()
			procs.n--
			runtime.GOMAXPROCS(procs.base + procs.n)
		})
	}
}
