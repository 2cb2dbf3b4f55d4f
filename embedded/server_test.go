package embedded

import (
	"bufio"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, f Faults) *Server {
	t.Helper()
	s, err := Start(Config{Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// MustStart returns what Start returns, and panics with Start's error
// where Start would fail.
func TestMustStart(t *testing.T) {
	s := MustStart(Config{})
	s.Close()
	defer func() {
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, "ErrorRate 2") {
			t.Fatalf("MustStart with an invalid Config panicked with %v, want Validate's error", r)
		}
	}()
	MustStart(Config{Faults: Faults{ErrorRate: 2}})
}

// session is a raw client that sends encoded commands and reads reply
// lines exactly as the server wrote them.
type session struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *Server) *session {
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &session{t: t, c: c, r: bufio.NewReader(c)}
}

func encode(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// reply reads one whole reply as raw text.
func (s *session) reply() string {
	s.t.Helper()
	var b strings.Builder
	var read func()
	read = func() {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("read: %v (so far %q)", err, b.String())
		}
		b.WriteString(line)
		var n int
		switch line[0] {
		case '$':
			fmt.Sscanf(line[1:], "%d", &n)
			if n >= 0 {
				buf := make([]byte, n+2)
				if _, err := ioReadFull(s.r, buf); err != nil {
					s.t.Fatal(err)
				}
				b.Write(buf)
			}
		case '*', '%', '>', '~':
			fmt.Sscanf(line[1:], "%d", &n)
			if line[0] == '%' {
				n *= 2
			}
			for range n {
				read()
			}
		}
	}
	read()
	return b.String()
}

func (s *session) do(args ...string) string {
	s.t.Helper()
	if _, err := s.c.Write([]byte(encode(args...))); err != nil {
		s.t.Fatal(err)
	}
	return s.reply()
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestCommandsOfTheSuite(t *testing.T) {
	s := dial(t, start(t, Faults{}))
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"PING", "hi"}, "$2\r\nhi\r\n"},
		{[]string{"SET", "key:1", "abc"}, "+OK\r\n"},
		{[]string{"GET", "key:1"}, "$3\r\nabc\r\n"},
		{[]string{"GET", "nope"}, "$-1\r\n"},
		{[]string{"SET", "key:1", "x", "NX"}, "$-1\r\n"},
		{[]string{"SET", "key:1", "xyz", "GET"}, "$3\r\nabc\r\n"},
		{[]string{"SET", "key:1", "v", "EX", "10"}, "+OK\r\n"},
		{[]string{"INCR", "counter:1"}, ":1\r\n"},
		{[]string{"INCR", "counter:1"}, ":2\r\n"},
		{[]string{"INCR", "key:1"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"LPUSH", "mylist", "a"}, ":1\r\n"},
		{[]string{"RPUSH", "mylist", "b", "c"}, ":3\r\n"},
		{[]string{"LRANGE", "mylist", "0", "99"}, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{[]string{"LRANGE", "mylist", "-2", "-1"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{[]string{"LPOP", "mylist"}, "$1\r\na\r\n"},
		{[]string{"RPOP", "mylist"}, "$1\r\nc\r\n"},
		{[]string{"RPOP", "mylist"}, "$1\r\nb\r\n"},
		{[]string{"LPOP", "mylist"}, "$-1\r\n"},
		{[]string{"SADD", "myset", "element:1", "element:2", "element:1"}, ":2\r\n"},
		{[]string{"SCARD", "myset"}, ":2\r\n"},
		{[]string{"HSET", "myhash", "element:1", "v"}, ":1\r\n"},
		{[]string{"HSET", "myhash", "element:1", "w"}, ":0\r\n"},
		{[]string{"HGET", "myhash", "element:1"}, "$1\r\nw\r\n"},
		{[]string{"ZADD", "myzset", "3", "c", "1", "a", "2", "b"}, ":3\r\n"},
		{[]string{"ZADD", "myzset", "0", "c"}, ":0\r\n"},
		{[]string{"ZPOPMIN", "myzset"}, "*2\r\n$1\r\nc\r\n$1\r\n0\r\n"},
		{[]string{"ZPOPMIN", "myzset"}, "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
		{[]string{"ZCARD", "myzset"}, ":1\r\n"},
		{[]string{"MSET", "k1", "v1", "k2", "v2"}, "+OK\r\n"},
		{[]string{"MGET", "k1", "k2", "k3"}, "*3\r\n$2\r\nv1\r\n$2\r\nv2\r\n$-1\r\n"},
		{[]string{"LPUSH", "key:1", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{[]string{"CONFIG", "GET", "save"}, "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{[]string{"CONFIG", "GET", "appendonly"}, "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"},
		{[]string{"CLIENT", "TRACKING", "on"}, "+OK\r\n"},
		{[]string{"SELECT", "3"}, "+OK\r\n"},
		{[]string{"DBSIZE"}, ":0\r\n"},
		{[]string{"SELECT", "0"}, "+OK\r\n"},
		{[]string{"NOSUCH", "a"}, "-ERR unknown command 'NOSUCH', with args beginning with: 'a' \r\n"},
	}
	for _, st := range steps {
		if got := s.do(st.args...); got != st.want {
			t.Errorf("%v = %q, want %q", st.args, got, st.want)
		}
	}
	// SPOP takes what SADD put in; XADD returns ms-seq IDs.
	if got := s.do("SPOP", "myset"); !strings.HasPrefix(got, "$9\r\nelement:") {
		t.Errorf("SPOP = %q", got)
	}
	if got := s.do("XADD", "mystream", "*", "myfield", "xxx"); !strings.Contains(got, "-") || got[0] != '$' {
		t.Errorf("XADD = %q", got)
	}
	if got := s.do("XLEN", "mystream"); got != ":1\r\n" {
		t.Errorf("XLEN = %q", got)
	}
	if got := s.do("HELLO", "3"); !strings.HasPrefix(got, "%7\r\n") {
		t.Errorf("HELLO 3 = %q", got)
	}
	if got := s.do("GET", "nope"); got != "_\r\n" {
		t.Errorf("RESP3 null = %q", got)
	}
}

func TestInlineAndPipelined(t *testing.T) {
	s := dial(t, start(t, Faults{}))
	// PING_INLINE and a pipeline of 100 commands in one write.
	batch := "PING\r\n"
	for i := 0; i < 100; i++ {
		batch += encode("INCR", "n")
	}
	s.c.Write([]byte(batch))
	if got := s.reply(); got != "+PONG\r\n" {
		t.Fatalf("inline PING = %q", got)
	}
	for i := 1; i <= 100; i++ {
		if got := s.reply(); got != fmt.Sprintf(":%d\r\n", i) {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
	// A command split across writes is answered once complete.
	cmd := encode("GET", "n")
	s.c.Write([]byte(cmd[:7]))
	time.Sleep(20 * time.Millisecond)
	s.c.Write([]byte(cmd[7:]))
	if got := s.reply(); got != "$3\r\n100\r\n" {
		t.Fatalf("split GET = %q", got)
	}
}

func TestProtocolErrorClosesTheConnection(t *testing.T) {
	s := dial(t, start(t, Faults{}))
	s.c.Write([]byte("*1\r\n+notbulk\r\n"))
	if got := s.reply(); !strings.HasPrefix(got, "-ERR Protocol error") {
		t.Fatalf("got %q", got)
	}
	if _, err := s.r.ReadByte(); err == nil {
		t.Fatal("connection still open after a protocol error")
	}
}

func TestStallHoldsEveryReplyUntilItEnds(t *testing.T) {
	srv := start(t, Faults{Stall: 150 * time.Millisecond, Every: 300 * time.Millisecond})
	s := dial(t, srv)
	// Wait until the first stall has begun, then ask.
	first := srv.stallsBetween(srv.start, srv.start+int64(time.Second))[0]
	clock.SleepUntil(first[0] + int64(20*time.Millisecond))
	sent := clock.Now()
	if got := s.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	if got := clock.Now(); got < first[1] {
		t.Fatalf("answered %v before the stall's end", time.Duration(first[1]-got))
	}
	if w := srv.wait(sent); w <= 0 || w > 130*time.Millisecond {
		t.Fatalf("wait(sent) = %v", w)
	}
	// Outside stalls, answers are immediate.
	clock.SleepUntil(first[1] + int64(20*time.Millisecond))
	t0 := clock.Now()
	s.do("PING")
	if d := time.Duration(clock.Now() - t0); d > 100*time.Millisecond {
		t.Fatalf("PING between stalls took %v", d)
	}
}

func TestDelayIsServiceTimeOfASingleThread(t *testing.T) {
	srv := start(t, Faults{Delay: Delay{Kind: DelayFixed, A: 2 * time.Millisecond}})
	s := dial(t, srv)
	// 10 pipelined commands on a one-at-a-time server take 10 delays.
	t0 := clock.Now()
	s.c.Write([]byte(strings.Repeat(encode("PING"), 10)))
	for range 10 {
		s.reply()
	}
	if d := time.Duration(clock.Now() - t0); d < 20*time.Millisecond {
		t.Fatalf("10 commands with 2 ms of service each answered in %v", d)
	}
}

func TestExponentialDelayMean(t *testing.T) {
	d := Delay{Kind: DelayExp, A: 200 * time.Microsecond}
	rng := newRNG(42)
	var sum float64
	const n = 200000
	for range n {
		sum += float64(d.draw(rng.Float64()))
	}
	if mean := sum / n; math.Abs(mean-200e3) > 200e3*0.02 {
		t.Fatalf("mean %v ns, want 200 µs ± 2%%", mean)
	}
}

func TestErrorRate(t *testing.T) {
	s := dial(t, start(t, Faults{ErrorRate: 0.25, Seed: 7}))
	errs := 0
	const n = 4000
	s.c.Write([]byte(strings.Repeat(encode("PING"), n)))
	for range n {
		if strings.HasPrefix(s.reply(), "-ERR injected") {
			errs++
		}
	}
	if f := float64(errs) / n; f < 0.22 || f > 0.28 {
		t.Fatalf("%.3f of commands failed, want 0.25", f)
	}
}

// TestErrorRateSparesSetup: a connection's setup (HELLO, SELECT, CLIENT and
// the first PING, pacer's probe) and pacer's questions (INFO, CONFIG,
// LATENCY) are never hit, even at --error-rate 1; the workload after it
// is, PING included.
func TestErrorRateSparesSetup(t *testing.T) {
	s := dial(t, start(t, Faults{ErrorRate: 1, Seed: 7}))
	s.c.Write([]byte(encode("PING") + encode("HELLO", "2") + encode("SELECT", "0") + encode("CLIENT", "SETNAME", "x") +
		encode("INFO", "commandstats") + encode("CONFIG", "GET", "save") + encode("LATENCY", "HISTOGRAM") +
		encode("PING") + encode("GET", "k")))
	for i := range 7 {
		if r := s.reply(); strings.HasPrefix(r, "-") {
			t.Fatalf("setup command %d answered %q", i, r)
		}
	}
	for _, cmd := range []string{"PING", "GET"} {
		if r := s.reply(); !strings.HasPrefix(r, "-ERR injected") {
			t.Fatalf("%s after setup answered %q, want the injected error", cmd, r)
		}
	}
}

func TestParseDelayAndValidate(t *testing.T) {
	good := map[string]Delay{
		"200us":           {Kind: DelayFixed, A: 200 * time.Microsecond},
		"exp:200us":       {Kind: DelayExp, A: 200 * time.Microsecond},
		"uniform:1ms-3ms": {Kind: DelayUniform, A: time.Millisecond, B: 3 * time.Millisecond},
		"0s":              {},
	}
	for in, want := range good {
		got, err := ParseDelay(in)
		if err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"fast", "exp:", "exp:-1ms", "uniform:3ms-1ms", "gauss:1ms", "-5ms"} {
		if _, err := ParseDelay(in); err == nil {
			t.Errorf("ParseDelay(%q) accepted", in)
		}
	}
	for _, f := range []Faults{{Stall: time.Second}, {Every: time.Second}, {Stall: 2 * time.Second, Every: time.Second}, {ErrorRate: 1.5}} {
		if f.Validate() == nil {
			t.Errorf("%+v accepted", f)
		}
	}
}
