//go:build linux

package conn

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pacer-load/pacer/internal/redistest"
)

// readable reports whether c's socket holds bytes to read, without
// reading them.
func readable(t *testing.T, c *Conn) bool {
	t.Helper()
	var n int
	var perr error
	if err := c.stamps.Control(func(fd uintptr) {
		n, perr = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
	}); err != nil || perr != nil {
		t.Fatal(err, perr)
	}
	return n == 1
}

// TestWriteThenWaitWaitsForTheReplies: WriteThenWait returns once the
// replies to what it wrote have begun to arrive (not before: the server
// sleeps first), having written every byte, and ReadReply then reads them
// as after Write; a batch larger than the socket buffer is finished by an
// ordinary write; a closed connection's write fails.
func TestWriteThenWaitWaitsForTheReplies(t *testing.T) {
	srv := redistest.Start(t, "--enable-debug-command", "yes")
	c := mustDial(t, Options{Addr: srv.Addr})
	defer c.Close()
	if c.stamps == nil {
		t.Fatal("a plain loopback connection without its stamped reader")
	}

	const sleep = 200 * time.Millisecond
	start := time.Now()
	if err := c.WriteThenWait(AppendCommand(nil, "DEBUG", "SLEEP", "0.2")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < sleep*3/4 {
		t.Fatalf("WriteThenWait returned after %v, before the server's %v sleep ended", took, sleep)
	}
	if !readable(t, c) {
		t.Fatal("WriteThenWait returned with nothing to read")
	}
	if r, _, err := c.ReadReply(); err != nil || r.Err {
		t.Fatalf("DEBUG SLEEP: %+v, %v", r, err)
	}
	if readable(t, c) {
		t.Fatal("bytes left after the one reply")
	}

	before := c.BytesWritten()
	var batch []byte
	for range 100 {
		batch = AppendCommand(batch, "PING")
	}
	if err := c.WriteThenWait(batch); err != nil {
		t.Fatal(err)
	}
	if got := c.BytesWritten() - before; got != uint64(len(batch)) {
		t.Fatalf("BytesWritten grew by %d, want %d", got, len(batch))
	}
	for i := range 100 {
		if r, _, err := c.ReadReply(); err != nil || r.Err || r.IsInt {
			t.Fatalf("PING %d: %+v, %v", i, r, err)
		}
	}

	// 8 MiB: more than a loopback socket takes at once.
	value := strings.Repeat("v", 8<<20)
	big := AppendCommand(AppendCommand(nil, "SET", "writewait", value), "STRLEN", "writewait")
	before = c.BytesWritten()
	if err := c.WriteThenWait(big); err != nil {
		t.Fatal(err)
	}
	if got := c.BytesWritten() - before; got != uint64(len(big)) {
		t.Fatalf("BytesWritten grew by %d, want %d", got, len(big))
	}
	if r, _, err := c.ReadReply(); err != nil || r.Err {
		t.Fatalf("SET: %+v, %v", r, err)
	}
	if r, _, err := c.ReadReply(); err != nil || !r.IsInt || r.Int != int64(len(value)) {
		t.Fatalf("STRLEN: %+v, %v, want %d", r, err, len(value))
	}

	c.Close()
	if err := c.WriteThenWait(AppendCommand(nil, "PING")); err == nil {
		t.Fatal("WriteThenWait on a closed connection did not fail")
	}
}

// TestWriteThenWaitWriteErrorIsTheWrites: a write the peer refuses is
// WriteThenWait's error, worded as Write's.
func TestWriteThenWaitWriteErrorIsTheWrites(t *testing.T) {
	srv := redistest.Start(t)
	c := mustDial(t, Options{Addr: srv.Addr})
	defer c.Close()
	kill := mustDial(t, Options{Addr: srv.Addr})
	defer kill.Close()
	// The server closes c: CLIENT KILL by its own id.
	if err := c.Write(AppendCommand(nil, "CLIENT", "ID")); err != nil {
		t.Fatal(err)
	}
	r, _, err := c.ReadReply()
	if err != nil || !r.IsInt {
		t.Fatalf("CLIENT ID: %+v, %v", r, err)
	}
	if err := kill.Write(AppendCommand(nil, "CLIENT", "KILL", "ID", strconv.FormatInt(r.Int, 10))); err != nil {
		t.Fatal(err)
	}
	if r, _, err := kill.ReadReply(); err != nil || !r.IsInt || r.Int != 1 {
		t.Fatalf("CLIENT KILL: %+v, %v", r, err)
	}
	// The first write after the close may still be taken by the kernel;
	// the peer's reset refuses a later one.
	var werr error
	for range 50 {
		if werr = c.WriteThenWait(AppendCommand(nil, "PING")); werr != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if werr == nil || !strings.Contains(werr.Error(), "write") {
		t.Fatalf("writes to a killed connection: %v", werr)
	}
	if !bytes.Contains([]byte(werr.Error()), []byte(srv.Addr)) {
		t.Fatalf("the error %q does not name the server", werr)
	}
}

// TestWriteThenWaitOnAStartedConnWritesOnly: a connection its reader
// goroutine reads is written as Write writes it, without the wait (whose
// read would queue behind the reader's, and the reader's behind the
// write): WriteThenWait returns before the reply arrives, which then
// reaches the reader (unsolicited: nothing was queued for it).
func TestWriteThenWaitOnAStartedConnWritesOnly(t *testing.T) {
	srv := redistest.Start(t, "--enable-debug-command", "yes")
	c := mustDial(t, Options{Addr: srv.Addr})
	defer c.Close()
	c.Start(newCollect())
	time.Sleep(20 * time.Millisecond) // the reader waits in its read
	done := make(chan error, 1)
	go func() { done <- c.WriteThenWait(AppendCommand(nil, "DEBUG", "SLEEP", "0.5")) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if n := c.Unsolicited(); n != 0 {
				t.Fatalf("WriteThenWait returned after the reply was read (%d unsolicited)", n)
			}
		default:
			if c.Unsolicited() != 0 || time.Now().After(deadline) {
				t.Fatal("WriteThenWait waited for the reply the reader reads")
			}
			continue
		}
		break
	}
	for deadline := time.Now().Add(10 * time.Second); c.Unsolicited() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reply never reached the reader")
		}
	}
}
