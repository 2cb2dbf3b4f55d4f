package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
)

// FuzzReplayPolicy sends what a replay would send of one command (any
// name, subcommand and arguments: any bytes), by the default policy and
// with --key-prefix, to a real redis-server, and checks with the
// server's own bookkeeping that the policy holds:
//
//   - the server's command lookup (COMMAND INFO) does not take the name
//     it lets through for a command it refuses; a name with a NUL that
//     it let through is tried with 1000 other endings after the NUL (the
//     server hashes the whole name but compares up to the NUL, so one
//     in a few hundred collides);
//   - no command the policy refuses ran, or was even looked up: the
//     calls, rejected_calls and failed_calls of every such command in
//     INFO commandstats stay as they were (a name the server takes for
//     FLUSHALL counts as FLUSHALL);
//   - the server answers PING, and its eviction policy and AOF setting
//     are unchanged;
//   - with --key-prefix, no key outside the prefix and no other
//     database changed: the canary keys of databases 0 and 1 keep their
//     DUMP, and every new key is prefixed.
//
// Its seeds (testdata/fuzz/FuzzReplayPolicy) run with the other tests;
// go test ./experiment/replay -run '^$' -fuzz FuzzReplayPolicy fuzzes.
func FuzzReplayPolicy(f *testing.F) {
	for _, s := range [][3]string{
		{"GET", "k", ""}, {"FLUSHALL", "", ""}, {"FLUSHALL\x00N", "", ""}, {"flushall\x00", "", ""},
		{"CONFIG", "SET", "maxmemory-policy\x1fallkeys-lru"}, {"config", "SET\x00x", "maxmemory-policy\x1fallkeys-lru"},
		{"SHUTDOWN\x00N", "NOSAVE", ""}, {"OBJECT", "ENCODING", "canary"}, {"MOVE", "canary", "1"},
		{"COPY", "canary", "x\x1fDB\x1f1"}, {"EVAL", "redis.call('FLUSHALL')", "0"}, {"SWAPDB", "0", "1"},
		{"DEL", "canary", ""}, {"RENAME", "canary", "x"}, {"ZUNIONSTORE", "canary", "1\x1fz"}, {"SORT", "l", "STORE\x1fcanary"},
		{"XREAD", "STREAMS", "canary\x1f0"}, {"MSET", "canary", "1\x1fx\x1f2"}, {"CLIENT", "KILL\r", "ID\x1f1"},
		{"GEORADIUS", "g", "0\x1f0\x1f1\x1fkm\x1fSTORE\x1fcanary"}, {"LMPOP", "1", "canary\x1fLEFT"}, {"MEMORY", "USAGE", "canary"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	srv := redistest.Start(f, "--maxmemory", "64mb", "--proto-max-bulk-len", "1mb",
		"--client-output-buffer-limit", "normal", "4mb", "4mb", "0")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name, sub, rest []byte) {
		argv := [][]byte{name}
		if len(sub) > 0 {
			argv = append(argv, sub)
		}
		if len(rest) > 0 {
			argv = append(argv, bytes.Split(rest, []byte{0x1f})...)
		}
		for _, prefix := range []string{"", "pfx:"} {
			checkPolicyOnServer(t, srv, dir, argv, prefix)
		}
	})
}

// checkPolicyOnServer plans a replay of the one command argv (with
// prefix as --key-prefix) and, when the plan sends it, sends it to srv
// and checks that nothing the policy forbids happened.
func checkPolicyOnServer(t *testing.T, srv *redistest.Server, dir string, argv [][]byte, prefix string) {
	cmd, err := planOne(dir, argv, prefix)
	if err != nil {
		if !usage.Is(err) {
			t.Fatalf("%q: %v", argv, err)
		}
		return // refused: nothing is sent
	}
	h := dialRaw(t, srv.Addr)
	defer h.close()
	// Refused by name (the arguments of the statistics' names are
	// unknown: where --key-prefix refuses by them, the keys' check below
	// holds it).
	var policy *scenarios.Policy
	if prefix != "" {
		policy = policy.WithKeyPrefix(func([][]byte) bool { return true })
	}
	for _, name := range h.lookup(t, argv) {
		if refusedStat(policy, name) {
			t.Errorf("%q (prefix %q) is sent, and the server's lookup takes it (or a name that differs from it after a NUL only) for %s", argv, prefix, name)
		}
	}
	h.reset(t)
	before := h.state(t)
	// Sent as the replay sends it, on a connection of its own; a command
	// that does not answer within a second (the server busy with it) is
	// left behind with its connection.
	c, err := net.DialTimeout("tcp", srv.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(cmd); err == nil {
		conn.NewReader(c, func() int64 { return 0 }).ReadValue()
	}
	c.Close()
	after := h.state(t)
	for name, n := range after.stats {
		if n != before.stats[name] && refusedStat(policy, name) {
			t.Errorf("%q (prefix %q) was sent as %q, and the server counted %s: %s → %s", argv, prefix, cmd, name, before.stats[name], n)
		}
	}
	if after.health != before.health {
		t.Errorf("%q (prefix %q) was sent as %q: the server went from %s to %s", argv, prefix, cmd, before.health, after.health)
	}
	if prefix == "" {
		return
	}
	for k, d := range after.keys {
		if b, ok := before.keys[k]; ok && b != d {
			t.Errorf("%q (prefix %q) was sent as %q: %s changed", argv, prefix, cmd, k)
		} else if !ok && !strings.HasPrefix(k, "db0 "+prefix) {
			t.Errorf("%q (prefix %q) was sent as %q: it made %s", argv, prefix, cmd, k)
		}
	}
	for k := range before.keys {
		if _, ok := after.keys[k]; !ok {
			t.Errorf("%q (prefix %q) was sent as %q: %s is gone", argv, prefix, cmd, k)
		}
	}
}

// planOne writes argv as a one-command trace, plans its replay as pacer
// replay does, and returns the bytes the replay would send.
func planOne(dir string, argv [][]byte, prefix string) ([]byte, error) {
	f, err := os.CreateTemp(dir, "one-*.jsonl")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	w := scenarios.NewTraceWriter(f)
	if err := w.Write(&scenarios.TraceRecord{Argv: argv}); err != nil {
		f.Close()
		return nil, err
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return nil, err
	}
	cfg := Config{Path: f.Name(), Speed: 1, Loops: 1, Conns: 1, KeyPrefix: prefix}
	plan, err := Scan(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	x := newReader(&cfg, plan)
	defer x.close()
	if !x.read(true) {
		return nil, fmt.Errorf("a plan of %d requests reads none: %v", plan.Requests, x.err)
	}
	return append([]byte(nil), x.cmd...), nil
}

// refusedStat says whether INFO commandstats' name ("flushall",
// "config|set") is a command policy refuses; a script call counts (a
// trace of one does not show what it ran).
func refusedStat(policy *scenarios.Policy, name string) bool {
	var argv [][]byte
	for _, w := range strings.Split(name, "|") {
		argv = append(argv, []byte(w))
	}
	a, _ := policy.Classify(argv)
	return a == scenarios.Refuse || a == scenarios.Forbid || scenarios.IsScriptCall(argv)
}

// lookup asks the server's command lookup (COMMAND INFO) which command it
// takes argv's name for, and argv's subcommand where the name is a
// command with subcommands, as it looks them up to run them: the names
// it finds ("flushall", "config|set"). A name with a NUL is asked again
// with other endings after the NUL, all in one COMMAND INFO.
func (h *rawClient) lookup(t *testing.T, argv [][]byte) []string {
	if bytes.IndexByte(argv[0], '|') >= 0 {
		return nil // the lookup that runs a command does not split at '|'
	}
	found := h.commandInfo(t, "", argv[0])
	if len(found) == 0 || len(argv) < 2 || bytes.IndexByte(argv[1], '|') >= 0 {
		return found
	}
	// The name is a command: its subcommand, if it has them.
	info := h.do(t, "COMMAND", "INFO", string(argv[0])).Elems
	if len(info) != 1 || len(info[0].Elems) < 10 || len(info[0].Elems[9].Elems) == 0 {
		return found
	}
	return append(found, h.commandInfo(t, string(argv[0])+"|", argv[1])...)
}

// commandInfo asks COMMAND INFO for prefix+name, and with a NUL in name
// for 1000 other endings after it too: the names of the commands found.
func (h *rawClient) commandInfo(t *testing.T, prefix string, name []byte) []string {
	ask := []string{prefix + string(name)}
	if i := bytes.IndexByte(name, 0); i >= 0 {
		for k := range 1000 {
			ask = append(ask, prefix+string(name[:i+1])+strconv.Itoa(k))
		}
	}
	var found []string
	for _, e := range h.do(t, append([]string{"COMMAND", "INFO"}, ask...)...).Elems {
		if len(e.Elems) > 0 {
			found = append(found, e.Elems[0].Str)
		}
	}
	return found
}

// rawClient is the check's own connection: plain RESP, no handshake.
type rawClient struct {
	c net.Conn
	r *conn.Reader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &rawClient{c: c, r: conn.NewReader(c, func() int64 { return 0 })}
}

func (h *rawClient) close() { h.c.Close() }

func (h *rawClient) do(t *testing.T, args ...string) conn.Value {
	h.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := h.c.Write(conn.AppendCommand(nil, args...)); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	v, err := h.r.ReadValue()
	var se *conn.ServerError
	if err != nil && !errors.As(err, &se) {
		t.Fatalf("%q: %v", args, err)
	}
	return v
}

// reset empties the server and sets its canaries: keys of several kinds
// in database 0, one in database 1.
func (h *rawClient) reset(t *testing.T) {
	h.do(t, "FLUSHALL")
	h.do(t, "SELECT", "1")
	h.do(t, "SET", "canary", "db1")
	h.do(t, "SELECT", "0")
	h.do(t, "SET", "canary", "db0")
	h.do(t, "SET", "x", "1")
	h.do(t, "RPUSH", "l", "b", "a")
	h.do(t, "ZADD", "z", "1", "m")
	h.do(t, "XADD", "s", "1-1", "f", "v")
}

// serverState is what the check compares: INFO commandstats' counters by
// command, the server's health and settings, and every key's DUMP.
type serverState struct {
	stats  map[string]string
	health string
	keys   map[string]string
}

func (h *rawClient) state(t *testing.T) serverState {
	s := serverState{stats: map[string]string{}, keys: map[string]string{}}
	info := h.do(t, "INFO", "commandstats").Str
	for _, l := range strings.Split(info, "\r\n") {
		name, v, ok := strings.Cut(strings.TrimPrefix(l, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(l, "cmdstat_") {
			continue
		}
		var counts []string
		for _, kv := range strings.Split(v, ",") {
			if k, _, _ := strings.Cut(kv, "="); k == "calls" || k == "rejected_calls" || k == "failed_calls" {
				counts = append(counts, kv)
			}
		}
		s.stats[name] = strings.Join(counts, ",")
	}
	var health []string
	health = append(health, "PING "+h.do(t, "PING").Str)
	for _, p := range []string{"maxmemory-policy", "appendonly", "maxmemory"} {
		v := h.do(t, "CONFIG", "GET", p)
		if len(v.Elems) == 2 {
			health = append(health, p+" "+v.Elems[1].Str)
		}
	}
	s.health = strings.Join(health, ", ")
	for _, db := range []string{"0", "1"} {
		h.do(t, "SELECT", db)
		cursor := "0"
		for {
			v := h.do(t, "SCAN", cursor, "COUNT", "1000")
			if len(v.Elems) != 2 {
				t.Fatalf("SCAN: %+v", v)
			}
			for _, k := range v.Elems[1].Elems {
				s.keys["db"+db+" "+k.Str] = h.do(t, "DUMP", k.Str).Str
			}
			if cursor = v.Elems[0].Str; cursor == "0" {
				break
			}
		}
	}
	h.do(t, "SELECT", "0")
	return s
}

// TestFuzzSeedsAreInTestdata: the seed corpus the fuzz target runs from
// testdata holds the findings of the issue (NUL names, a script that
// flushes, --key-prefix's escapes).
func TestFuzzSeedsAreInTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzReplayPolicy", "*"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d seed files: %v", len(files), err)
	}
	var all []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("go test fuzz v1\n")) {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, string(b))
	}
	sort.Strings(all)
	joined := strings.Join(all, "\n")
	for _, want := range []string{`FLUSHALL\x00`, `SHUTDOWN\x00`, `SET\x00`, `EVAL`, `MOVE`, `ENCODING`} {
		if !strings.Contains(joined, want) {
			t.Errorf("no seed holds %s", want)
		}
	}
}
