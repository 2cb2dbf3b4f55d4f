package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
)

// The replay's promise, tried as an attacker would against a real
// redis-server: what it refuses never runs, and --key-prefix keeps the
// server's own keys out of reach. Each test checks the server after the
// replay: both databases' sizes and canaries, PING, and the eviction
// policy.

// quoteArg quotes a as MONITOR does (sds.c's sdscatrepr).
func quoteArg(a string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// traceBuilder writes a MONITOR trace, a line every microsecond.
type traceBuilder struct {
	b strings.Builder
	n int
}

// cmd adds a client's command (source "" is a client's address) or, with
// source "lua", one its script ran.
func (tb *traceBuilder) line(source string, argv ...string) *traceBuilder {
	if source == "" {
		source = "127.0.0.1:50000"
	}
	tb.n++
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quoteArg(a)
	}
	fmt.Fprintf(&tb.b, "1339518083.%06d [0 %s] %s\n", tb.n, source, strings.Join(q, " "))
	return tb
}

func (tb *traceBuilder) cmd(argv ...string) *traceBuilder { return tb.line("", argv...) }
func (tb *traceBuilder) lua(argv ...string) *traceBuilder { return tb.line("lua", argv...) }

func (tb *traceBuilder) file(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(tb.b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// canaryServer starts a redis-server holding a canary key in databases 0
// and 1.
func canaryServer(t *testing.T) *redistest.Server {
	t.Helper()
	s := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for db := range 2 {
		if _, err := conn.Do(ctx, conn.Options{Addr: s.Addr, DB: db}, "SET", "canary", "db"+strconv.Itoa(db)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// serverState says what a replay must not change: each database's size
// and canary, whether the server answers, and its eviction policy.
func serverState(s *redistest.Server) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var parts []string
	for db := range 2 {
		o := conn.Options{Addr: s.Addr, DB: db}
		n, err := conn.Do(ctx, o, "DBSIZE")
		if err != nil {
			return "down: " + err.Error()
		}
		v, _ := conn.Do(ctx, o, "GET", "canary")
		parts = append(parts, fmt.Sprintf("db%d: %d keys, canary %q", db, n.Int, v.Str))
	}
	p, err := conn.Do(ctx, conn.Options{Addr: s.Addr}, "PING")
	parts = append(parts, fmt.Sprintf("PING %s %v", p.Str, err))
	mp, _ := conn.Do(ctx, conn.Options{Addr: s.Addr}, "CONFIG", "GET", "maxmemory-policy")
	if len(mp.Elems) == 2 {
		parts = append(parts, "maxmemory-policy "+mp.Elems[1].Str)
	}
	return strings.Join(parts, "; ")
}

// refusedCase is a trace the replay must refuse (exit 2, one line with
// each of want) without touching the server.
type refusedCase struct {
	name  string
	trace func(t *testing.T) string
	args  []string
	want  []string
}

func runRefused(t *testing.T, s *redistest.Server, cases []refusedCase) {
	t.Helper()
	before := serverState(s)
	for _, tc := range cases {
		path := tc.trace(t)
		args := append(append([]string{"replay", "-p", s.PortString(), "-q"}, tc.args...), path)
		code, stdout, stderr := pacer(t, args...)
		msg := strings.TrimSuffix(stderr, "\n")
		ok := code == exitUsage && !strings.Contains(msg, "\n") && strings.HasPrefix(msg, "pacer: ")
		for _, w := range tc.want {
			ok = ok && strings.Contains(msg, w)
		}
		if !ok {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.name, code, stdout, stderr, tc.want)
		}
		if after := serverState(s); after != before {
			t.Fatalf("%s: the server went from %s to %s", tc.name, before, after)
		}
	}
}

// TestReplayRefusesScriptsThatDestroy: a script is judged by what the
// trace shows it ran (MONITOR's lua lines after it); one whose effects
// the trace does not show is refused unless --allow scripts.
func TestReplayRefusesScriptsThatDestroy(t *testing.T) {
	t.Parallel()
	s := canaryServer(t)
	const sha = "d2b49dbc1de5ca5d1bd67ea7d1f5f1ffd79e8bca"
	runRefused(t, s, []refusedCase{
		{"EVAL that ran FLUSHALL", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("SET", "a", "1").cmd("EVAL", "redis.call('FLUSHALL') return 1", "0").lua("FLUSHALL").cmd("GET", "a").file(t, "eval.txt")
		}, nil, []string{"eval.txt:2: EVAL is refused", "FLUSHALL at line 3"}},
		{"SCRIPT LOAD and EVALSHA", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("SCRIPT", "LOAD", "redis.call('FLUSHALL') return 1").cmd("EVALSHA", sha, "0").lua("FLUSHALL").file(t, "evalsha.txt")
		}, nil, []string{"evalsha.txt:2: EVALSHA is refused", "FLUSHALL at line 3"}},
		{"FCALL that swapped the databases", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("FCALL", "f", "0").lua("SWAPDB", "0", "1").file(t, "fcall.txt")
		}, []string{"--allow", "FUNCTION LOAD"}, []string{"fcall.txt:1: FCALL is refused", "SWAPDB at line 2"}},
		{"a script's effect the policy skips", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("EVAL", "redis.call('DEL','canary') return 1", "0").lua("DEL", "canary").file(t, "skipped.txt")
		}, []string{"--skip", "DEL"}, []string{"skipped.txt:1: EVAL is refused", "DEL at line 2"}},
		{"a script without its effects", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("EVAL", "redis.call('FLUSHALL') return 1", "0").cmd("GET", "a").file(t, "nolua.txt")
		}, nil, []string{"nolua.txt:1: EVAL is refused", "--allow scripts"}},
		{"a JSON trace's script", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "eval.jsonl")
			os.WriteFile(p, []byte(`{"t": 0, "argv": ["EVAL", "redis.call('FLUSHALL') return 1", "0"]}`+"\n"), 0o600)
			return p
		}, nil, []string{"eval.jsonl:1: EVAL is refused", "--allow scripts"}},
		{"FCALL_RO without effects", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("fcall_ro", "f", "0").file(t, "ro.txt")
		}, nil, []string{"ro.txt:1: FCALL_RO is refused"}},
	})
	// A script whose effects are shown and sent by the policy is sent, as
	// is one the user allows.
	var tb traceBuilder
	path := tb.cmd("EVAL", "return redis.call('SET','fromscript','1')", "0").lua("SET", "fromscript", "1").file(t, "good.txt")
	if code, stdout, stderr := pacer(t, "replay", "-p", s.PortString(), "-q", path); !runOK(code) {
		t.Fatalf("a harmless script: exit %d\n%s%s", code, stdout, stderr)
	}
	var tb2 traceBuilder
	path = tb2.cmd("EVAL", "return redis.call('SET','allowed','1')", "0").file(t, "allowed.txt")
	if code, stdout, stderr := pacer(t, "replay", "-p", s.PortString(), "-q", "--allow", "scripts", path); !runOK(code) {
		t.Fatalf("--allow scripts: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, k := range []string{"fromscript", "allowed"} {
		if v, err := s.Do("GET", k); v != "1" {
			t.Errorf("%s = %q (%v): the script was not sent", k, v, err)
		}
	}
}

// TestReplayRefusesOddNames: a command name or subcommand with a NUL,
// a control byte or a blank is refused at its line, whatever --allow
// says. Redis 7.0 looks names up in a hash table whose comparison stops
// at a NUL: some of these run as FLUSHALL, SHUTDOWN or CONFIG SET.
func TestReplayRefusesOddNames(t *testing.T) {
	t.Parallel()
	s := canaryServer(t)
	flush, shut, config := traceBuilder{}, traceBuilder{}, traceBuilder{}
	flush.cmd("SET", "a", "1")
	for i := range 2000 {
		flush.cmd("FLUSHALL\x00" + strconv.Itoa(i))
	}
	for i := range 3000 {
		shut.cmd("SHUTDOWN\x00"+strconv.Itoa(i), "NOSAVE")
	}
	for i := range 64 {
		config.cmd("CONFIG", "SET\x00"+strconv.Itoa(i), "maxmemory-policy", "allkeys-lru")
	}
	runRefused(t, s, []refusedCase{
		{"FLUSHALL and a NUL", func(t *testing.T) string { return flush.file(t, "flush.txt") },
			[]string{"--speed", "10"}, []string{`flush.txt:2: "FLUSHALL\x000"`, "NUL"}},
		{"even allowed", func(t *testing.T) string { return flush.file(t, "flush.txt") },
			[]string{"--allow", "FLUSHALL", "--speed", "10"}, []string{`flush.txt:2: "FLUSHALL\x000"`}},
		{"SHUTDOWN and a NUL", func(t *testing.T) string { return shut.file(t, "shut.txt") },
			[]string{"--speed", "10"}, []string{`shut.txt:1: "SHUTDOWN\x000"`}},
		{"CONFIG SET and a NUL", func(t *testing.T) string { return config.file(t, "config.txt") },
			[]string{"--allow", "CONFIG"}, []string{`config.txt:1: "CONFIG SET\x000"`}},
		{"a JSON \\u0000", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "nul.jsonl")
			var b strings.Builder
			for i := range 2000 {
				fmt.Fprintf(&b, `{"t": %d, "argv": ["FLUSHALL\u0000%d"]}`+"\n", i, i)
			}
			os.WriteFile(p, []byte(b.String()), 0o600)
			return p
		}, []string{"--speed", "1e6"}, []string{`nul.jsonl:1: "FLUSHALL\x000"`}},
		{"a blank", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("FLUSHALL ").file(t, "blank.txt")
		}, nil, []string{`blank.txt:1: "FLUSHALL "`}},
		{"a control byte in a subcommand", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("CLIENT", "KILL\r", "ID", "1").file(t, "ctl.txt")
		}, nil, []string{`ctl.txt:1: "CLIENT KILL\r"`}},
	})
}

// TestReplayKeyPrefixKeepsAway: under --key-prefix, what would reach the
// server's own keys or other databases is refused unless --allow names
// it (scripts, MOVE, COPY ... DB, commands whose keys the table cannot
// find), and every key the replay sends is prefixed, subcommands' too.
func TestReplayKeyPrefixKeepsAway(t *testing.T) {
	t.Parallel()
	s := canaryServer(t)
	prefix := []string{"--key-prefix", "replay:"}
	runRefused(t, s, []refusedCase{
		{"a script that deleted the canary", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("EVAL", "redis.call('DEL','canary') return 1", "0").lua("DEL", "canary").file(t, "del.txt")
		}, prefix, []string{"del.txt:1: EVAL is refused", "--key-prefix"}},
		{"a script that swapped the databases", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("EVALSHA", "d2b49dbc1de5ca5d1bd67ea7d1f5f1ffd79e8bca", "0").lua("SWAPDB", "0", "1").file(t, "swap.txt")
		}, append([]string{"--allow", "SWAPDB"}, prefix...), []string{"swap.txt:1: EVALSHA is refused", "--key-prefix"}},
		{"MOVE", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("MOVE", "canary", "1").file(t, "move.txt")
		}, prefix, []string{"move.txt:1: MOVE is refused"}},
		{"COPY ... DB", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("COPY", "a", "canary", "db", "1", "REPLACE").file(t, "copy.txt")
		}, prefix, []string{"copy.txt:1: COPY is refused"}},
		{"a command the table does not know", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("SET", "a", "1").cmd("MYMODULE.DEL", "canary").file(t, "module.txt")
		}, prefix, []string{"module.txt:2: MYMODULE.DEL is refused"}},
		{"SORT with BY", func(t *testing.T) string {
			var tb traceBuilder
			return tb.cmd("SORT", "l", "BY", "canary").file(t, "sort.txt")
		}, prefix, []string{"sort.txt:1: SORT is refused"}},
	})
	// What is sent keeps away from the canaries: every key the server
	// holds after the replay is prefixed or a canary as it was.
	var tb traceBuilder
	tb.cmd("SET", "canary", "overwritten").cmd("RENAME", "canary", "gone").cmd("OBJECT", "ENCODING", "canary").
		cmd("ZADD", "z", "1", "m").cmd("ZUNIONSTORE", "canary", "1", "z").cmd("XADD", "canary", "*", "f", "v").
		cmd("XREAD", "COUNT", "1", "STREAMS", "canary", "0").cmd("LPUSH", "canary", "x").cmd("LMPOP", "1", "canary", "LEFT").
		cmd("MSET", "canary", "1", "other", "2").cmd("GETDEL", "canary").cmd("COPY", "other", "canary").
		cmd("SINTERCARD", "1", "canary").cmd("BITOP", "AND", "canary", "other").cmd("DEL", "canary").
		cmd("EXPIRE", "other", "100").cmd("MEMORY", "USAGE", "canary").cmd("SORT", "l", "LIMIT", "0", "1")
	path := tb.file(t, "keys.txt")
	before := serverState(s)
	code, stdout, stderr := pacer(t, append(append([]string{"replay", "-p", s.PortString(), "-c", "1", "-q"}, prefix...), path)...)
	if !runOK(code) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for db := range 2 {
		o := conn.Options{Addr: s.Addr, DB: db}
		keys, err := conn.Do(ctx, o, "SCAN", "0", "COUNT", "1000")
		if err != nil || len(keys.Elems) != 2 {
			t.Fatalf("SCAN: %v %+v", err, keys)
		}
		for _, k := range keys.Elems[1].Elems {
			if k.Str != "canary" && !strings.HasPrefix(k.Str, "replay:") {
				t.Errorf("db %d holds %q, neither the canary nor prefixed", db, k.Str)
			}
		}
		v, _ := conn.Do(ctx, o, "GET", "canary")
		if v.Str != "db"+strconv.Itoa(db) {
			t.Errorf("db %d: canary %q", db, v.Str)
		}
	}
	if v, _ := s.Do("TYPE", "replay:canary"); v != "none" && v != "string" {
		t.Errorf("replay:canary is a %s", v)
	}
	if v, _ := s.Do("GET", "replay:other"); v != "2" {
		t.Errorf("replay:other = %q: MSET's second key was not prefixed", v)
	}
	t.Logf("before %s; after %s", before, serverState(s))
}
