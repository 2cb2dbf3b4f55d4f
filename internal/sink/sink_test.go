package sink

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, o Options) *Sink {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func dial(t *testing.T, s *Sink) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return string(b)
}

func cmd(args ...string) string {
	var b strings.Builder
	b.WriteString("*")
	b.WriteString(strconv.Itoa(len(args)))
	b.WriteString("\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func argv(r Record) string {
	var parts []string
	for _, a := range r.Argv {
		parts = append(parts, string(a))
	}
	return strings.Join(parts, " ")
}

// waitRecords waits until the sink has recorded n commands.
func waitRecords(t *testing.T, s *Sink, n int) []Record {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if recs := s.Records(); len(recs) >= n {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records", len(s.Records()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPipelinedCommandsAnsweredInOneWrite: commands sent in one write are
// answered from the table, in order, and recorded with the read's instant
// and one write instant.
func TestPipelinedCommandsAnsweredInOneWrite(t *testing.T) {
	s := start(t, Options{})
	c := dial(t, s)
	before := clock.Now()
	in := cmd("PING") + cmd("GET", "k") + cmd("INCR", "n") + cmd("SET", "k", "v") + cmd("FLUSHALL") + cmd("PING", "hi") + cmd("LRANGE", "l", "0", "-1")
	if _, err := c.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	want := "+PONG\r\n$-1\r\n:1\r\n+OK\r\n+OK\r\n$2\r\nhi\r\n*0\r\n"
	if got := readN(t, c, len(want)); got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	recs := waitRecords(t, s, 7)
	wantArgv := []string{"PING", "GET k", "INCR n", "SET k v", "FLUSHALL", "PING hi", "LRANGE l 0 -1"}
	for i, r := range recs {
		if argv(r) != wantArgv[i] || r.Conn != 0 {
			t.Fatalf("record %d = %q on conn %d, want %q on 0", i, argv(r), r.Conn, wantArgv[i])
		}
		if r.Read < before || r.Replied < r.Read {
			t.Fatalf("record %d: read %d replied %d, after a write at %d", i, r.Read, r.Replied, before)
		}
		if r.Kernel != 0 && (r.Kernel > r.Read || r.Kernel < before) {
			t.Fatalf("record %d: kernel %d outside [%d, %d]", i, r.Kernel, before, r.Read)
		}
	}
}

// TestKernelTimestamps: on Linux the sink records when a command reached
// its kernel, between the client's write and the sink's read. The kernel
// turns stamping on for the host in a deferred work item the first time a
// socket asks: on a busy machine the first commands may come unstamped, so
// the test sends until one was.
func TestKernelTimestamps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("receive timestamps are Linux's")
	}
	s := start(t, Options{})
	c := dial(t, s)
	for i, deadline := 0, time.Now().Add(10*time.Second); ; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no command stamped in 10 s")
		}
		sent := clock.Now()
		if _, err := c.Write([]byte(cmd("PING"))); err != nil {
			t.Fatal(err)
		}
		readN(t, c, len("+PONG\r\n"))
		r := waitRecords(t, s, i+1)[i]
		if r.Kernel == 0 {
			continue
		}
		if r.Kernel < sent || r.Kernel > r.Read {
			t.Fatalf("kernel %d outside [%d, %d]", r.Kernel, sent, r.Read)
		}
		return
	}
}

// TestPartialReads: a command that arrives in pieces is recorded once,
// whole, with the instant of the read that completed it.
func TestPartialReads(t *testing.T) {
	s := start(t, Options{})
	c := dial(t, s)
	in := cmd("SET", "key", strings.Repeat("v", 100)) + "PING\r\n"
	cut := 20
	if _, err := c.Write([]byte(in[:cut])); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let the sink read the first piece alone
	last := clock.Now()
	if _, err := c.Write([]byte(in[cut:])); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, c, len("+OK\r\n+PONG\r\n")); got != "+OK\r\n+PONG\r\n" {
		t.Fatalf("replies %q", got)
	}
	recs := waitRecords(t, s, 2)
	if len(recs) != 2 || argv(recs[0]) != "SET key "+strings.Repeat("v", 100) || argv(recs[1]) != "PING" {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Read < last {
		t.Fatalf("SET recorded as read at %d, before its last piece was sent at %d", recs[0].Read, last)
	}
}

// TestInlineCommands: commands typed as text lines are parsed too.
func TestInlineCommands(t *testing.T) {
	s := start(t, Options{})
	c := dial(t, s)
	if _, err := c.Write([]byte("PING\r\nGET  key\nINCR n\r\n")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, c, len("+PONG\r\n$-1\r\n:1\r\n")); got != "+PONG\r\n$-1\r\n:1\r\n" {
		t.Fatalf("replies %q", got)
	}
	recs := waitRecords(t, s, 3)
	if argv(recs[1]) != "GET key" || argv(recs[2]) != "INCR n" {
		t.Fatalf("records %q %q", argv(recs[1]), argv(recs[2]))
	}
}

// TestStallHoldsReplies: during a stall the sink neither reads nor
// answers; the reply to a command sent then is written once the stall is
// over, and its record says so.
func TestStallHoldsReplies(t *testing.T) {
	s := start(t, Options{})
	c := dial(t, s)
	// A first command, so the connection's goroutine is in its read when
	// the stall begins.
	if _, err := c.Write([]byte(cmd("PING"))); err != nil {
		t.Fatal(err)
	}
	readN(t, c, len("+PONG\r\n"))
	const d = 100 * time.Millisecond
	end := clock.Now() + int64(d)
	s.Stall(d)
	sent := clock.Now()
	if _, err := c.Write([]byte(cmd("GET", "k"))); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, c, 5); got != "$-1\r\n" {
		t.Fatalf("reply %q", got)
	}
	got := clock.Now()
	recs := waitRecords(t, s, 2)
	r := recs[1]
	if r.Replied < end || got < end {
		t.Fatalf("reply written at %d, received at %d: before the stall's end %d", r.Replied, got, end)
	}
	if r.Read < sent {
		t.Fatalf("read at %d, before it was sent at %d", r.Read, sent)
	}
}

// TestStallEveryStallsAndStops: the schedule stalls the sink, and stops
// when told (twice is fine) or when the sink closes.
func TestStallEveryStallsAndStops(t *testing.T) {
	s := start(t, Options{})
	stop := s.StallEvery(5*time.Millisecond, 10*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); s.stallUntil.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no stall began")
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	stop()
	c := dial(t, s)
	if _, err := c.Write([]byte(cmd("PING"))); err != nil {
		t.Fatal(err)
	}
	readN(t, c, len("+PONG\r\n"))
	s.StallEvery(time.Millisecond, time.Millisecond) // ended by Close
}

// TestRecordsAreBounded: past MaxRecords commands are still answered,
// counted as dropped and not kept.
func TestRecordsAreBounded(t *testing.T) {
	s := start(t, Options{MaxRecords: 10})
	a, b := dial(t, s), dial(t, s)
	for _, c := range []net.Conn{a, b} {
		if _, err := c.Write([]byte(strings.Repeat(cmd("INCR", "n"), 15))); err != nil {
			t.Fatal(err)
		}
		readN(t, c, 15*len(":1\r\n"))
	}
	waitRecords(t, s, 10) // kept once their replies were written
	if n, d := len(s.Records()), s.Dropped(); n != 10 || d != 20 {
		t.Fatalf("%d records kept, %d dropped: want 10 and 20", n, d)
	}
}

// TestConnectionsNumberedInAcceptOrder: records name their connection.
func TestConnectionsNumberedInAcceptOrder(t *testing.T) {
	s := start(t, Options{})
	var conns []net.Conn
	for range 3 {
		c := dial(t, s)
		if _, err := c.Write([]byte(cmd("PING"))); err != nil { // accepted before the next dial
			t.Fatal(err)
		}
		readN(t, c, len("+PONG\r\n"))
		conns = append(conns, c)
	}
	for i := len(conns) - 1; i >= 0; i-- {
		if _, err := conns[i].Write([]byte(cmd("SET", "conn", strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
		readN(t, conns[i], len("+OK\r\n"))
	}
	for _, r := range waitRecords(t, s, 6) {
		if r.Argv[0][0] == 'S' && argv(r) != "SET conn "+strconv.Itoa(r.Conn) {
			t.Fatalf("record %q on conn %d", argv(r), r.Conn)
		}
	}
}

// TestMalformedCommandClosesTheConnection: the sink hangs up on what is
// not RESP, as Redis does.
func TestMalformedCommandClosesTheConnection(t *testing.T) {
	s := start(t, Options{})
	c := dial(t, s)
	if _, err := c.Write([]byte("*1\r\n+PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(c).ReadByte(); err != io.EOF {
		t.Fatalf("read %v, want EOF", err)
	}
}

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		took int
		args string
		err  bool
	}{
		{"*1\r\n$4\r\nPING\r\n", 14, "PING", false},
		{"*1\r\n$4\r\nPIN", 0, "", false},     // incomplete body
		{"*2\r\n$3\r\nGET\r\n", 0, "", false}, // an argument missing
		{"*", 0, "", false},                   // count not complete
		{"*0\r\n", 4, "", false},              // empty array
		{"*1\r\n$-5\r\n", 0, "", true},
		{"*x\r\n", 0, "", true},
		{"*1\r\n$2\r\nabXY", 0, "", true}, // body not ended by CRLF
		{"PING a  b\r\n", 11, "PING a b", false},
		{"PING", 0, "", false},
	} {
		args, took, err := parseCommand([]byte(tc.in), nil)
		var parts []string
		for _, a := range args {
			parts = append(parts, string(a))
		}
		if took != tc.took || strings.Join(parts, " ") != tc.args || (err != nil) != tc.err {
			t.Errorf("%q: took %d args %q err %v, want %d %q err %v", tc.in, took, parts, err, tc.took, tc.args, tc.err)
		}
	}
}
