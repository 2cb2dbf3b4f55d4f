package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// StateLookEvery is how often a ProcWatch that samples states looks at
// its threads' scheduler state: 250 looks a second, 2,500 in a 10 s run,
// so that a thread in disk wait 1% of the time (what a p99 leaves beyond
// it) shows in about 25 of them. A look reads one small /proc file per
// thread (a Redis server has five): about 1% of a CPU.
const StateLookEvery = 4 * time.Millisecond

// stateLooks counts, per thread, the looks at its state that found it in
// uninterruptible sleep ("D" in /proc/PID/task/TID/stat): blocked in the
// kernel on the disk (an fsync, a write the page cache throttles, a page
// fault that reads). The scheduler statistics cannot tell that apart from
// waiting for a request: both are sleep, and neither is a wait for a CPU.
type stateLooks struct {
	mu    sync.Mutex
	looks uint64         // looks taken
	disk  map[int]uint64 // per thread: looks that found it in D
	tids  []int          // the threads to look at (the last Read's)
	stop  func()
}

// SampleStates starts looking at the process's threads' states every
// StateLookEvery until StopSampling; the readings then carry how many
// looks found the busiest thread waiting for the disk
// (ProcUsage.DiskLooks). The threads looked at are those of the last
// Read, so call it after a first Read.
func (w *ProcWatch) SampleStates() {
	if w.states != nil {
		return
	}
	s := &stateLooks{disk: map[int]uint64{}, tids: w.tids()}
	w.states = s
	dir := filepath.Join(w.root, strconv.Itoa(w.pid), "task")
	s.stop = clock.Every(StateLookEvery, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		seen := false
		for _, tid := range s.tids {
			st, ok := threadState(filepath.Join(dir, strconv.Itoa(tid), "stat"))
			if !ok {
				continue // a thread that ended
			}
			seen = true
			if st == 'D' {
				s.disk[tid]++
			}
		}
		if seen {
			s.looks++
		}
		return true
	})
}

// StopSampling ends SampleStates' looks.
func (w *ProcWatch) StopSampling() {
	if w.states != nil && w.states.stop != nil {
		w.states.stop()
		w.states.stop = nil
	}
}

// tids lists the threads of the last Read.
func (w *ProcWatch) tids() []int {
	out := make([]int, 0, len(w.last))
	for tid := range w.last {
		out = append(out, tid)
	}
	return out
}

// snapshot copies the looks so far into r, and takes the threads of the
// Read that makes r for the next looks.
func (s *stateLooks) snapshot(r *ProcReading, tids []int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.looks = s.looks
	r.disk = make(map[int]uint64, len(s.disk))
	for tid, n := range s.disk {
		r.disk[tid] = n
	}
	s.tids = tids
}

// threadState reads a thread's state letter from its stat file: the
// field after the command name, which is in parentheses and may hold
// spaces and parentheses itself.
func threadState(path string) (byte, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}
