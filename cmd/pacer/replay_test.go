package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/internal/testrun"
)

// monitorLine is a line of redis-cli monitor output for argv (each
// argument already quoted as MONITOR quotes it).
func monitorLine(ts string, db int, argv ...string) string {
	return ts + " [" + string(rune('0'+db)) + " 127.0.0.1:50000] " + strings.Join(argv, " ") + "\n"
}

// TestReplayUsageErrors: every bad trace or flag is one line and exit 2,
// and nothing reaches the target (a sink that records every command).
func TestReplayUsageErrors(t *testing.T) {
	t.Parallel()
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target := hostPort(t, s.Addr())
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.txt", monitorLine("1339518083.100000", 0, `"SET"`, `"k"`, `"v"`)+monitorLine("1339518083.200000", 0, `"GET"`, `"k"`))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(monitorLine("1339518083.100000", 0, `"SET"`, `"k`))) // cut short inside the gzip
	zw.Close()
	tests := []struct {
		name string
		args []string
		want string // in the one-line message
	}{
		{"no trace", nil, "needs a TRACE"},
		{"two traces", []string{good, good}, "one TRACE"},
		{"an unknown flag after the trace", []string{good, "--sped", "2"}, "sped"},
		{"missing file", []string{filepath.Join(dir, "nope.txt")}, "nope.txt"},
		{"empty", []string{file("empty.txt", "")}, "empty"},
		{"blank lines only", []string{file("blank.txt", "\n\n  \n")}, "no command"},
		{"truncated line", []string{file("cut.txt", `1339518083.100000 [0 127.0.0.1:5] "SET" "k`)}, "cut.txt:1:"},
		{"truncated gzip", []string{file("cut.txt.gz", gz.String())}, "cut.txt.gz"},
		{"bad escape", []string{file("esc.txt", monitorLine("1339518083.100000", 0, `"SET"`, `"a\q"`, `"b"`))}, "esc.txt:1: argument 2: bad escape"},
		{"bad hex escape", []string{file("hex.txt", monitorLine("1339518083.100000", 0, `"SET"`, `"a\xZZ"`, `"b"`))}, "hex.txt:1:"},
		{"no timestamp", []string{file("nots.txt", `[0 127.0.0.1:5] "SET" "a" "b"`+"\n")}, "nots.txt:1:"},
		{"time goes back", []string{file("back.txt", monitorLine("1339518083.100000", 0, `"SET"`, `"a"`, `"b"`)+
			monitorLine("1339518080.100000", 0, `"SET"`, `"a"`, `"b"`))}, "back.txt:2: the timestamp goes back 3s"},
		{"bad json", []string{file("bad.jsonl", `{"t": 0, "argv": ["SET", "a"]}`+"\n"+`{"t": 1, "argv": "SET a"}`+"\n")}, "bad.jsonl:2:"},
		{"json without argv", []string{file("noargv.jsonl", `{"t": 0}`+"\n")}, "noargv.jsonl:1:"},
		{"only refused", []string{file("flush.txt", monitorLine("1339518083.100000", 0, `"FLUSHALL"`))}, "no command to replay"},
		{"a refused command", []string{file("mixed.txt", monitorLine("1339518083.100000", 0, `"SET"`, `"a"`, `"b"`)+
			monitorLine("1339518083.200000", 0, `"CONFIG"`, `"SET"`, `"maxmemory"`, `"1"`))}, "mixed.txt:2: CONFIG SET is refused"},
		{"a transaction without --per-client", []string{file("multi.txt", monitorLine("1339518083.100000", 0, `"MULTI"`)+
			monitorLine("1339518083.100001", 0, `"SET"`, `"a"`, `"b"`)+monitorLine("1339518083.100002", 0, `"EXEC"`))}, "--per-client"},
		{"blocking without --per-client", []string{file("blpop.txt", monitorLine("1339518083.100000", 0, `"BLPOP"`, `"q"`, `"0"`))}, "a blocking command holds its connection"},
		{"subscribe without --per-client", []string{file("sub.txt", monitorLine("1339518083.100000", 0, `"SUBSCRIBE"`, `"ch"`))}, "--per-client"},
		{"speed 0", []string{"--speed", "0", good}, "--speed"},
		{"speed -1", []string{"--speed", "-1", good}, "--speed"},
		{"speed garbage", []string{"--speed", "fast", good}, "--speed"},
		{"speed and rate", []string{"--speed", "2", "--rate", "1k", good}, "give one"},
		{"rate zero", []string{"--rate", "0", good}, "--rate"},
		{"loop 0", []string{"--loop", "0", good}, "--loop 0"},
		{"bad format", []string{"--format", "csv", good}, "--format"},
		{"wrong format", []string{"--format", "json", good}, "good.txt:1:"},
		{"bad allow", []string{"--allow", "FLUSH ALL NOW", good}, "allow"},
		{"db -1", []string{"--db", "-1", good}, "--db -1"},
		{"empty key prefix", []string{"--key-prefix", "", good}, "--key-prefix"},
		{"cluster per client", []string{"--cluster", "--per-client", good}, "--per-client"},
		{"zero duration", []string{"--duration", "0s", good}, "--duration"},
		{"hiccup interval", []string{"--hiccup-interval", "1ns", good}, "--hiccup-interval"},
		{"receive clock", []string{"--receive-clock", "wall", good}, "--receive-clock"},
	}
	for _, tc := range tests {
		args := append(append([]string{"replay"}, target...), tc.args...)
		code, stdout, stderr := pacer(t, args...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, exitUsage, stderr)
			continue
		}
		msg := strings.TrimSpace(stderr)
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "pacer: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: message %q, want one line containing %q", tc.name, msg, tc.want)
		}
		if stdout != "" {
			t.Errorf("%s: printed %q", tc.name, stdout)
		}
	}
	if n := len(s.Records()); n != 0 {
		t.Errorf("bad input sent %d commands", n)
	}
}

// TestReplayDryRunSaysWhatItWillDo: the plan, and nothing sent.
func TestReplayDryRunSaysWhatItWillDo(t *testing.T) {
	t.Parallel()
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var trace strings.Builder
	for i := range 100 {
		ts := "1339518083." + strings.Repeat("0", 4) + string(rune('0'+i/10)) + string(rune('0'+i%10))
		trace.WriteString(monitorLine(ts, i%2, `"SET"`, `"k"`, `"v"`))
	}
	trace.WriteString(monitorLine("1339518084.000000", 0, `"KEYS"`, `"*"`))
	path := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(path, []byte(trace.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := pacer(t, append(append([]string{"replay"}, hostPort(t, s.Addr())...), "--dry-run", "--skip", "KEYS", "--speed", "2x", path)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testrun.Contains(t, out, "100 commands to send", "top commands  SET 100", "databases     db 0 50, db 1 50",
		"skipped       KEYS × 1 (from line 101): --skip", "replay at 2× speed: 100 requests")
	if n := len(s.Records()); n != 0 {
		t.Errorf("a dry run sent %d commands", n)
	}
	// The same with the flags after the trace.
	code, out2, stderr := pacer(t, append(append([]string{"replay", path}, hostPort(t, s.Addr())...), "--dry-run", "--skip", "KEYS", "--speed", "2x")...)
	if code != exitOK || out2 != out {
		t.Fatalf("flags after the trace: exit %d: %s\n%s", code, stderr, out2)
	}
}

// TestReplayMonitorCapture records `redis-cli monitor` of a real
// redis-server while pacer runs a mixed workload and a client writes
// values with spaces, quotes, binary bytes and unicode, replays the
// capture to a second redis-server, and checks both hold the same data
// (DEBUG DIGEST).
func TestReplayMonitorCapture(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "starts two redis-servers and redis-cli")
	a, b := redistest.Start(t, "--enable-debug-command", "yes"), redistest.Start(t, "--enable-debug-command", "yes")
	capture := a.Monitor(t)

	code, _, stderr := pacer(t, "run", "-p", a.PortString(), "--rate", "2000", "--duration", "2s", "-c", "4", "-q",
		"--mix", "set:4,incr:1,lpush:1,hset:1,sadd:1,rpush:1", "-r", "300", "-d", "8-64")
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, kv := range [][2]string{{"a b", `q"uo\te`}, {"ctl", "nl\nx\r\t\a\b\x00\x7f end"}, {"bin", string(all)},
		{"u", "héllo ✓ 😀"}, {"", "empty key"}, {"int", "12345"}} {
		if _, err := a.Do("SET", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Do("HSET", "h", `f ] "x`, "[0 1.2.3.4:5] \"y\""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Do("PING", "end-marker"); err != nil {
		t.Fatal(err)
	}
	capture.WaitFor(t, "end-marker")
	capture.Stop()

	// pacer run's own questions to the server (INFO, CONFIG GET, LATENCY
	// HISTOGRAM) are in the capture too, and replayed: none is refused.
	code, out, stderr := pacer(t, "replay", "-p", b.PortString(), "-c", "1", "--speed", "4", "-q",
		capture.Path)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("replay: exit %d: %s%s", code, out, stderr)
	}
	da, err := a.Do("DEBUG", "DIGEST")
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.Do("DEBUG", "DIGEST")
	if err != nil {
		t.Fatal(err)
	}
	if da != db || strings.Trim(da, "0") == "" {
		t.Errorf("digests: source %s, replayed %s", da, db)
	}
	t.Logf("%s; digest %s", strings.TrimSpace(out), da)
}

// TestReplayCluster: replay --cluster routes every command by its key's
// slot to the primary that owns it (each key is then read back from its
// owner), and a multi-key command whose keys are in different slots is
// an error, counted as such.
func TestReplayCluster(t *testing.T) {
	t.Parallel()
	c, port := longCluster(t, "starts a Redis Cluster")
	var trace strings.Builder
	const n = 300
	for i := range n {
		ts := "1339518083." + strings.Repeat("0", 3) + strconv.Itoa(100+i)
		trace.WriteString(monitorLine(ts, 0, `"SET"`, `"key:`+strconv.Itoa(i)+`"`, `"v`+strconv.Itoa(i)+`"`))
	}
	trace.WriteString(monitorLine("1339518083.500000", 0, `"MSET"`, `"a"`, `"1"`, `"b"`, `"2"`)) // a and b: different slots
	path := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(path, []byte(trace.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := pacer(t, "replay", "--cluster", "-p", port, "--speed", "2", "-c", "2", "-q", "--json", js, path)
	if !runOK(code) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	doc := readOpenClusterDoc(t, js)
	if len(doc.Tests) != 1 {
		t.Fatalf("%d tests", len(doc.Tests))
	}
	cnt := doc.Tests[0].Counts
	if cnt.Scheduled != n+1 || cnt.Completed != n || cnt.Errors != 1 {
		t.Errorf("counts %+v: want %d completed and the cross-slot MSET an error", cnt, n)
	}
	used := 0
	for _, node := range doc.Tests[0].Nodes {
		if node.Completed > 0 {
			used++
		}
	}
	if used != 3 {
		t.Errorf("%d primaries answered: %+v", used, doc.Tests[0].Nodes)
	}
	// Every key is on the primary that owns its slot: a plain GET there
	// finds it (a wrong node would answer MOVED).
	for i := 0; i < n; i += 37 {
		k := "key:" + strconv.Itoa(i)
		found := false
		for _, node := range c.Nodes {
			if v, err := node.Do("GET", k); err == nil && v == "v"+strconv.Itoa(i) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is on no primary", k)
		}
	}
}

// TestReplayPerClientTransactions: with --per-client each client's
// transaction (MULTI … EXEC, WATCH) and blocking pop run on its own
// connection, in order, against a real redis-server: the counters end as
// the trace's transactions left them, and the blocked pop is served by
// another client's push.
func TestReplayPerClientTransactions(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var trace strings.Builder
	line := func(ms int, client string, argv ...string) {
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = `"` + a + `"`
		}
		trace.WriteString("1339518083." + strconv.Itoa(100000+ms*1000) + " [0 " + client + "] " + strings.Join(q, " ") + "\n")
	}
	for k := range 20 {
		c := "127.0.0.1:" + strconv.Itoa(40000+k%4)
		line(k*10, c, "MULTI")
		line(k*10+1, c, "INCR", "tx:"+strconv.Itoa(k%4))
		line(k*10+2, c, "INCRBY", "total", "2")
		line(k*10+3, c, "EXEC")
	}
	line(250, "127.0.0.1:41000", "WATCH", "total")
	line(251, "127.0.0.1:41000", "MULTI")
	line(252, "127.0.0.1:41000", "SET", "watched", "yes")
	line(253, "127.0.0.1:41000", "EXEC")
	line(300, "127.0.0.1:42000", "BLPOP", "queue", "5")
	line(400, "127.0.0.1:43000", "RPUSH", "queue", "job")
	path := filepath.Join(t.TempDir(), "tx.txt")
	if err := os.WriteFile(path, []byte(trace.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := pacer(t, "replay", "-p", srv.PortString(), "--per-client", "-q", path)
	if !runOK(code) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for key, want := range map[string]string{"tx:0": "5", "tx:3": "5", "total": "40", "watched": "yes"} {
		if got, err := srv.Do("GET", key); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", key, got, err, want)
		}
	}
	if n, err := srv.Do("LLEN", "queue"); err != nil || n != "0" {
		t.Errorf("queue length %q (%v): the blocked pop did not take the job", n, err)
	}
}
