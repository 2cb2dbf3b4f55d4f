package scenarios_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scenarios"
)

var update = flag.Bool("update", false, "rewrite testdata/trace/monitor-redis7.* from a real capture")

// sent is a command a test client sent, and how MONITOR should show it.
type sent struct {
	argv   []string
	db     int
	client string
}

// resp sends argv on c and reads (and drops) one reply.
func resp(t *testing.T, c net.Conn, r *bufio.Reader, argv ...string) {
	t.Helper()
	if _, err := c.Write(conn.AppendCommand(nil, argv...)); err != nil {
		t.Fatal(err)
	}
	if err := skipReply(r); err != nil {
		t.Fatal(err)
	}
}

func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply %q", line)
	}
	switch line[0] {
	case '$':
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		if n >= 0 {
			_, err = io.CopyN(io.Discard, r, int64(n)+2)
		}
		return err
	case '*':
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		for i := 0; i < n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestMonitorCaptureOfARealServer records `redis-cli monitor` while a
// client sends values with every byte, quotes, backslashes, newlines and
// unicode, and checks the reader gets back the exact arguments, databases
// and sources.
func TestMonitorCaptureOfARealServer(t *testing.T) {
	testrun.SkipShort(t, "starts redis-server and redis-cli")
	sockDir, err := os.MkdirTemp("", "pacer-trace") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "r.sock")
	srv := redistest.Start(t, "--unixsocket", sock, "--unixsocketperm", "700")
	capture := srv.Monitor(t)

	c, err := net.DialTimeout("tcp", srv.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	tcp := c.LocalAddr().String()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var want []sent
	send := func(db int, argv ...string) {
		resp(t, c, r, argv...)
		want = append(want, sent{argv: argv, db: db, client: tcp})
	}
	send(0, "SET", "a b", `q"uo\te`)
	send(0, "set", "ctl", "nl\nx\r\t\a\b\x00\x7f end")
	send(0, "SET", "bin", string(all))
	send(0, "SET", "u", "héllo ✓ 😀")
	send(0, "SET", "", "")
	send(0, "SET", "int", "12345") // integer-encoded: printed with %ld
	send(0, "SET", "neg", "-42")
	send(0, "HSET", "h", `f ] "x`, "[0 1.2.3.4:5] \"y\"")
	send(0, "EVAL", "redis.call('set', KEYS[1], ARGV[1]) return 1", "1", "lk", "lv\n\xff")
	send(2, "SELECT", "2")
	send(2, "SET", "d2", "v")
	resp(t, c, r, "AUTH", "secret") // refused by the server, shown redacted
	want = append(want, sent{argv: []string{"AUTH", "(redacted)"}, db: 2, client: tcp})

	u, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	u.SetDeadline(time.Now().Add(20 * time.Second))
	resp(t, u, bufio.NewReader(u), "INCRBY", "n", "5")
	want = append(want, sent{argv: []string{"INCRBY", "n", "5"}, client: "unix:" + sock})

	send(2, "PING", "end-marker")
	capture.WaitFor(t, "end-marker")
	capture.Stop()

	tr, err := scenarios.OpenTrace(capture.Path, scenarios.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []sent
	for {
		x, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s := sent{db: x.DB, client: x.Client}
		for _, a := range x.Argv {
			s.argv = append(s.argv, string(a))
		}
		if x.Effect != (x.Client == "lua") || x.Effect && x.ScriptLine != x.Line-1 {
			t.Errorf("line %d (%s): effect %v of line %d", x.Line, x.Client, x.Effect, x.ScriptLine)
		}
		got = append(got, s)
	}
	tr.Close()
	// The script's SET comes right after its EVAL, marked as its effect.
	lua := sent{argv: []string{"set", "lk", "lv\n\xff"}, client: "lua"}
	w := append(append(append([]sent{}, want[:9]...), lua), want[9:]...)
	if !reflect.DeepEqual(got, w) {
		t.Errorf("got %+v\nwant %+v", got, w)
	}
	if st := tr.Stats(); st.Format != scenarios.TraceMonitor || st.Lua != 1 {
		t.Errorf("%+v", st)
	}

	if *update {
		// The capture becomes the fixture that TestMonitorFixture reads
		// without a server; the temporary socket path is replaced by a
		// usual one.
		b, err := os.ReadFile(capture.Path)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(sock), []byte("/var/run/redis/redis.sock"))
		if err := os.WriteFile("testdata/trace/monitor-redis7.txt", b, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, _ := scenarios.NewTraceReader(bytes.NewReader(b), "capture", scenarios.TraceOptions{})
		var js bytes.Buffer
		jw := scenarios.NewTraceWriter(&js)
		for {
			x, err := tr.Next()
			if err != nil {
				break
			}
			jw.Write(x)
		}
		jw.Flush()
		if err := os.WriteFile("testdata/trace/monitor-redis7.jsonl", js.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
