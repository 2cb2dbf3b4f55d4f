package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The looks at a process's states count, for the busiest thread (the one
// that ran the most over the span), those that found it waiting for the
// disk (D); another thread's disk waits (a background fsync thread's)
// are not the requests'.
func TestProcWatchDiskLooks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(tid int, cpu uint64, state string) {
		dir := filepath.Join(root, "42", "task", strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"schedstat": fmt.Sprintf("%d 0 1\n", cpu),
			"status":    "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n",
			// A command name with a space and a parenthesis: the state
			// is the field after the last ')'.
			"stat": fmt.Sprintf("%d (redis (x) srv) %s 1 %d 0\n", tid, state, tid),
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := NewProcWatch(42)
	w.root = root
	write(1, 100, "D") // the main thread, in an fsync
	write(2, 10, "D")  // a background thread, also in D
	a, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	w.SampleStates()
	defer w.StopSampling()
	time.Sleep(20 * StateLookEvery)
	write(1, 900, "S")
	write(2, 20, "D")
	time.Sleep(20 * StateLookEvery)
	b, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	u := b.Since(a)
	// Thread 1 was in D for about half the looks, thread 2 for all.
	if u.Looks < 10 || u.DiskLooks == 0 || u.DiskLooks >= u.Looks {
		t.Fatalf("%+v: want thread 1's disk looks, some of the looks and not all", u)
	}
	share := u.DiskWaitShare()
	t.Logf("looks %d, disk %d (%.2f)", u.Looks, u.DiskLooks, share)

	// The next span: thread 2 ran the most, and was in D all along.
	write(2, 5000, "D")
	time.Sleep(10 * StateLookEvery)
	c, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Since(b); v.Looks == 0 || v.DiskLooks != v.Looks {
		t.Fatalf("%+v: want every look at the busiest thread (2) in D", v)
	}
	var sum ProcUsage
	sum.Add(u)
	sum.Add(c.Since(b))
	if sum.Looks != u.Looks+c.Since(b).Looks || sum.DiskLooks != u.DiskLooks+c.Since(b).DiskLooks {
		t.Fatalf("Add: %+v", sum)
	}
	if (ProcUsage{}).DiskWaitShare() != 0 {
		t.Fatal("no looks: want a share of 0")
	}
}

// A real process's threads (this test's own, running or asleep) are
// looked at, and none is found waiting for the disk.
func TestSampleStatesOfAProcess(t *testing.T) {
	t.Parallel()
	w := NewProcWatch(os.Getpid())
	a, err := w.Read()
	if err != nil {
		t.Skipf("no schedstat here: %v", err)
	}
	w.SampleStates()
	time.Sleep(50 * StateLookEvery)
	w.StopSampling()
	b, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	u := b.Since(a)
	if u.Looks < 5 {
		t.Fatalf("%d looks in %d look intervals", u.Looks, 50)
	}
	if u.DiskLooks > u.Looks/10 {
		t.Errorf("a test process waiting for the disk in %d of %d looks", u.DiskLooks, u.Looks)
	}
	b2, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := stateOf(b2); !ok || s != 'R' {
		t.Errorf("this thread's state %q (%v), want R", s, ok)
	}
}
