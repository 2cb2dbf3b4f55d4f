package rxstamp

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

func TestPlausible(t *testing.T) {
	for _, tc := range []struct {
		arrival, read int64
		want          bool
	}{
		{100, 200, true},             // before the read
		{200, 200, true},             // at the read
		{0, 200, false},              // no timestamp
		{-5, 200, false},             // before the clock's start: a test's clock
		{201, 200, false},            // after the read: the wall clock stepped back
		{1, 1 + MaxLag, true},        // as early as allowed
		{1, 2 + MaxLag, false},       // earlier: the wall clock stepped forward
		{100, 0, false},              // a clock that reads 0
		{5_000_000, 5_000_010, true}, // 10 ns of receive lag
	} {
		if got := Plausible(tc.arrival, tc.read); got != tc.want {
			t.Errorf("Plausible(%d, %d) = %v, want %v", tc.arrival, tc.read, got, tc.want)
		}
	}
}

// TestToMonoTakesTheTightestPair: a pair of clock readings that straddles
// a descheduling is taken again.
func TestToMonoTakesTheTightestPair(t *testing.T) {
	readings := []int64{1_000, 9_000_000, 10_000_000, 10_000_100, 99, 99}
	i := 0
	now := func() int64 { i++; return readings[i-1] }
	kernel := time.Now().UnixNano() - 5_000
	got := toMono(kernel, now)
	if i != 4 {
		t.Fatalf("%d clock readings, want 4 (a spread pair, then a tight one)", i)
	}
	// The tight pair's midpoint less the 5 µs by which the kernel's stamp
	// preceded the wall clock reading (and whatever passed since).
	if mid := int64(10_000_050); got > mid-5_000 || got < mid-5_000-int64(time.Second) {
		t.Fatalf("toMono = %d, want a little below %d", got, mid-5_000)
	}
}

func tcpPair(t testing.TB) (client, server net.Conn) { return connPair(t, "tcp", "127.0.0.1:0") }

// connPair returns both ends of a connection over a listener on network
// and addr, closed when t ends.
func connPair(t testing.TB, network, addr string) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func supported(t *testing.T, r *Reader) {
	t.Helper()
	if r == nil {
		if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
			t.Fatal("no Reader on Linux")
		}
		t.Skip("no receive timestamps on this platform")
	}
}

// TestTCPReadsAreStamped: on loopback TCP reads carry a kernel timestamp,
// before the read returned and after the peer's write began. Linux turns
// stamping on for the host in a deferred work item the first time a
// socket asks: on a busy machine the first reads may come unstamped, so
// the test reads until 20 were.
func TestTCPReadsAreStamped(t *testing.T) {
	client, server := tcpPair(t)
	r := New(client, clock.Now)
	supported(t, r)
	buf := make([]byte, 64)
	stamped := 0
	for deadline := time.Now().Add(10 * time.Second); stamped < 20; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d reads stamped in 10 s", stamped)
		}
		sent := clock.Now()
		if _, err := server.Write([]byte("+PONG\r\n")); err != nil {
			t.Fatal(err)
		}
		n, err := r.Read(buf)
		read := clock.Now()
		if err != nil || string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		a := r.Arrival()
		if a == 0 {
			continue
		}
		stamped++
		if !Plausible(a, read) || a < sent-int64(time.Microsecond) {
			t.Fatalf("arrival %d, sent at %d, read at %d", a, sent, read)
		}
	}
}

// TestReadErrorsAreNetErrors: end of stream, deadlines and a closed
// connection read as net.Conn's do.
func TestReadErrorsAreNetErrors(t *testing.T) {
	client, server := tcpPair(t)
	r := New(client, clock.Now)
	supported(t, r)
	buf := make([]byte, 8)
	client.SetReadDeadline(time.Now().Add(time.Millisecond))
	if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v", err)
	}
	client.SetReadDeadline(time.Time{})
	server.Close()
	if _, err := r.Read(buf); err != io.EOF {
		t.Fatalf("after the peer closed: %v, want EOF", err)
	}
	client.Close()
	_, err := r.Read(buf)
	var op *net.OpError
	if !errors.Is(err, net.ErrClosed) || !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("after Close: %v", err)
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
}

// TestUnixStreamReads: Linux stamps no AF_UNIX stream data; reads work
// and say so with a zero Arrival.
func TestUnixStreamReads(t *testing.T) {
	client, server := connPair(t, "unix", filepath.Join(t.TempDir(), "s"))
	r := New(client, clock.Now)
	supported(t, r)
	server.Write([]byte("+OK\r\n"))
	buf := make([]byte, 8)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "+OK\r\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	t.Logf("unix stream arrival %d (0: not stamped)", r.Arrival())
}

// TestReadDoesNotAllocate: a stamped read costs no allocation.
func TestReadDoesNotAllocate(t *testing.T) {
	client, server := tcpPair(t)
	r := New(client, clock.Now)
	supported(t, r)
	msg, buf := []byte("+PONG\r\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(500, func() {
		server.Write(msg)
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per write and stamped read", allocs)
	}
}

// BenchmarkRead writes one reply to a loopback TCP socket and reads it, in
// one goroutine, so no wake-up is measured: a stamped recvmsg with its
// clock conversion against net.Conn's plain read.
func BenchmarkRead(b *testing.B) {
	for _, stamped := range []bool{true, false} {
		name := "read"
		if stamped {
			name = "recvmsg-stamped"
		}
		b.Run(name, func(b *testing.B) {
			client, server := tcpPair(b)
			var rd io.Reader = client
			if stamped {
				r := New(client, clock.Now)
				if r == nil {
					b.Skip("no receive timestamps on this platform")
				}
				rd = r
			}
			msg, buf := []byte("+PONG\r\n"), make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				server.Write(msg)
				if _, err := rd.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
