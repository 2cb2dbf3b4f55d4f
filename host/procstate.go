package host

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// StateLookEvery is how often a ProcWatch that samples states looks at
// its threads' scheduler state: 100 looks a second, 1,000 in a 10 s run,
// so that a thread in disk wait 1% of the time (what a p99 leaves beyond
// it) shows in about 10 of them. A look is a wake and one pread of each
// thread's stat file, kept open (a Redis server has five threads). At
// 10k GET/s on the 2-vCPU VM, looking every 4 ms cost 2.4% of a CPU
// (median of six interleaved runs, 9.09 against 8.85 s of pacer's CPU in
// 10 s), and opening each file at every look 4%.
const StateLookEvery = 10 * time.Millisecond

// stateLooks counts, per thread, the looks at its state that found it in
// uninterruptible sleep ("D" in /proc/PID/task/TID/stat): blocked in the
// kernel on the disk (an fsync, a write the page cache throttles, a page
// fault that reads). The scheduler statistics cannot tell that apart from
// waiting for a request: both are sleep, and neither is a wait for a CPU.
type stateLooks struct {
	mu sync.Mutex
	// looked and disk count, per thread, the looks that read its state
	// and those that found it in D.
	looked, disk map[int]uint64
	tids         []int // the threads to look at (the last Read's)
	stop         func()
	// files are the threads' stat files, open between looks; buf takes
	// a read.
	files map[int]*os.File
	buf   [512]byte
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
	s := &stateLooks{looked: map[int]uint64{}, disk: map[int]uint64{}, tids: w.tids(), files: map[int]*os.File{}}
	w.states = s
	dir := filepath.Join(w.root, strconv.Itoa(w.pid), "task")
	s.stop = clock.Every(StateLookEvery, func() bool {
		s.look(dir)
		return true
	})
}

// look reads each thread's state once.
func (s *stateLooks) look(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tid := range s.tids {
		f := s.files[tid]
		if f == nil {
			var err error
			if f, err = os.Open(filepath.Join(dir, strconv.Itoa(tid), "stat")); err != nil {
				continue // a thread that ended
			}
			s.files[tid] = f
		}
		n, err := f.ReadAt(s.buf[:], 0)
		if n == 0 && err != nil {
			f.Close()
			delete(s.files, tid)
			continue
		}
		st, ok := stateOf(s.buf[:n])
		if !ok {
			continue
		}
		s.looked[tid]++
		if st == 'D' {
			s.disk[tid]++
		}
	}
}

// closeFiles closes the stat files of the threads not in keep (nil: all).
func (s *stateLooks) closeFiles(keep []int) {
	for tid, f := range s.files {
		if !slices.Contains(keep, tid) {
			f.Close()
			delete(s.files, tid)
		}
	}
}

// StopSampling ends SampleStates' looks.
func (w *ProcWatch) StopSampling() {
	if w.states != nil && w.states.stop != nil {
		w.states.stop()
		w.states.stop = nil
		w.states.mu.Lock()
		w.states.closeFiles(nil)
		w.states.mu.Unlock()
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
	s.mu.Lock()
	defer s.mu.Unlock()
	r.looked, r.disk = maps.Clone(s.looked), maps.Clone(s.disk)
	s.tids = tids
	s.closeFiles(tids)
}

// stateOf is the state letter of a stat file's text: the field after the
// command name, which is in parentheses and may hold spaces and
// parentheses itself.
func stateOf(b []byte) (byte, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}
