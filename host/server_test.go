package host

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A listener of this very process is found as pacer's own: over TCP on
// loopback and over a unix socket.
func TestFindServerFindsItsOwnListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sp, err := FindServer("tcp", ln.Addr().String(), 0)
	if err != nil {
		t.Skipf("cannot read /proc here: %v", err)
	}
	if sp.PID != os.Getpid() || !sp.Self {
		t.Fatalf("found %+v, want this process (%d)", sp, os.Getpid())
	}
	// INFO's process_id confirms it; a wrong one is refused.
	if sp, err := FindServer("tcp", ln.Addr().String(), os.Getpid()); err != nil || !sp.Self {
		t.Fatalf("with the right process_id: %+v, %v", sp, err)
	}
	if _, err := FindServer("tcp", ln.Addr().String(), 1<<22); err == nil {
		t.Fatal("a process_id that is not the listener's was accepted")
	}
	path := filepath.Join(t.TempDir(), "s.sock")
	ul, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	if sp, err := FindServer("unix", path, 0); err != nil || !sp.Self {
		t.Fatalf("unix socket: %+v, %v", sp, err)
	}
	// A socket nothing listens on (a unix path: a closed TCP port could
	// be taken by another process meanwhile).
	if _, err := FindServer("unix", filepath.Join(t.TempDir(), "none.sock"), 0); err != ErrNotFound {
		t.Fatalf("no listener: %v, want ErrNotFound", err)
	}
}

// A fake /proc: the listener of a forwarded port is a proxy, not the
// server INFO names; a server in a pid namespace of its own is
// confirmed by NSpid.
func TestFindServerOnAFakeProc(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Port 6379 (0x18EB) on 0.0.0.0, listening, inode 4242; another on
	// 127.0.0.2 only.
	write("net/tcp", "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"+
		"   0: 00000000:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n"+
		"   1: 0200007F:18EC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4343 1 0 100 0 0 10 0\n")
	link := func(pid int, inode int) {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("socket:["+strconv.Itoa(inode)+"]", filepath.Join(dir, "3")); err != nil {
			t.Fatal(err)
		}
	}
	link(500, 4242)
	write("500/comm", "redis-server\n")
	write("500/status", "Name:\tredis-server\nNSpid:\t500\t1\n")
	link(600, 4343)
	write("600/comm", "docker-proxy\n")
	write("600/status", "Name:\tdocker-proxy\nNSpid:\t600\n")
	sp, err := findServer(root, 1, "tcp", "127.0.0.1:6379", 1)
	if err != nil || sp.PID != 500 || sp.Name != "redis-server" {
		t.Fatalf("server in its own pid namespace: %+v, %v", sp, err)
	}
	if _, err := findServer(root, 1, "tcp", "127.0.0.2:6380", 7); err == nil {
		t.Fatal("a proxy's port was taken for the server")
	}
	if sp, err := findServer(root, 1, "tcp", "localhost:6380", 0); err != nil || sp.PID != 600 {
		t.Fatalf("a name: any local address: %+v, %v", sp, err)
	}
	if _, err := findServer(root, 1, "tcp", "127.0.0.3:6380", 0); err != ErrNotFound {
		t.Fatalf("another address's listener: %v", err)
	}
}

func TestProcIP(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"0100007F":                         "127.0.0.1",
		"00000000000000000000000001000000": "::1",
		"0000000000000000FFFF00000100007F": "127.0.0.1",
	} {
		if got := procIP(h); got == nil || !got.Equal(net.ParseIP(want)) {
			t.Errorf("procIP(%s) = %v, want %s", h, got, want)
		}
	}
}

// The watch of this process counts the CPU it burns and keeps its
// counters cumulative.
func TestProcWatchCountsCPU(t *testing.T) {
	t.Parallel()
	w := NewProcWatch(os.Getpid())
	a, err := w.Read()
	if err != nil {
		t.Skipf("no schedstat here: %v", err)
	}
	// Spin until the counters show 10 ms of CPU (a loaded machine may
	// give the spinning thread less than its wall time), at most 10 s.
	var b ProcReading
	var u ProcUsage
	x := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		for range 1_000_000 {
			x++
		}
		if b, err = w.Read(); err != nil {
			t.Fatal(err)
		}
		if u = b.Since(a); u.CPU >= 10*time.Millisecond {
			break
		}
	}
	if u.CPU < 10*time.Millisecond || u.Slices == 0 || u.Threads == 0 || u.Seconds <= 0 {
		t.Fatalf("after spinning (%d): %+v", x, u)
	}
	if back := a.Since(b); back != (ProcUsage{}) {
		t.Fatalf("a reading before another: %+v", back)
	}
	var sum ProcUsage
	sum.Add(u)
	sum.Add(u)
	if sum.CPU != 2*u.CPU || sum.MeanWait() != u.MeanWait() {
		t.Fatalf("Add: %+v", sum)
	}
}

// TestProcWatchThreadWait: over a span, the most-waiting thread's wait is
// its own, not the sum; a thread born in the span counts all of its.
func TestProcWatchThreadWait(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(tid int, cpu, wait, slices uint64) {
		dir := filepath.Join(root, "42", "task", strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d %d %d\n", cpu, wait, slices)
		if err := os.WriteFile(filepath.Join(dir, "schedstat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		status := "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n"
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := NewProcWatch(42)
	w.root = root
	write(1, 100, 1000, 1)
	write(2, 100, 5000, 1)
	a, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	write(1, 200, 4000, 2) // waited 3000 ns
	write(2, 200, 6000, 2) // waited 1000 ns
	write(3, 50, 2500, 1)  // born since: 2500 ns
	b, err := w.Read()
	if err != nil {
		t.Fatal(err)
	}
	u := b.Since(a)
	if u.Wait != 6500 || u.ThreadWait != 3000 || u.Threads != 3 {
		t.Fatalf("%+v: want a wait of 6500 ns in all, 3000 ns the most of one thread", u)
	}
	u.Seconds = 1e-5
	if got := u.ThreadWaitShare(); math.Abs(got-0.3) > 1e-9 {
		t.Errorf("thread wait share %v, want 0.3", got)
	}
	if old := (ProcUsage{Seconds: 1e-5, Wait: 6500}); math.Abs(old.ThreadWaitShare()-0.65) > 1e-9 {
		t.Errorf("without a thread wait (an older JSON): %v, want the whole wait share 0.65", old.ThreadWaitShare())
	}
}
