package scenarios

import (
	"bytes"
	"strings"
	"testing"
)

func args(s string) [][]byte {
	var a [][]byte
	for _, f := range strings.Fields(s) {
		a = append(a, []byte(f))
	}
	return a
}

func TestPolicy(t *testing.T) {
	dflt, _ := newPolicy(nil, nil)
	allowKeys, _ := ParsePolicy("keys, config set", "")
	allowConfig, _ := ParsePolicy("CONFIG", "")
	skipping, _ := ParsePolicy("", "FLUSHALL,get,client setname")
	both, _ := ParsePolicy("KEYS", "KEYS")
	allowAuth, _ := ParsePolicy("auth", "")
	allowAll, _ := ParsePolicy("FLUSHALL,CONFIG,SHUTDOWN", "")
	skipScripts, _ := ParsePolicy("", "scripts")
	found := func(argv [][]byte) bool { return !equalFold(argv[0], "NOSUCH") }
	prefixed := (*Policy)(nil).WithKeyPrefix(found)
	allowSome, _ := ParsePolicy("scripts,MOVE,NOSUCH", "")
	prefixedAllow := allowSome.WithKeyPrefix(found)
	for _, c := range []struct {
		p      *Policy
		cmd    string
		want   Action
		reason string
	}{
		// One comment per row: what the row shows.
		{nil, "GET k", Replay, ""},                                                     // a nil policy is the default
		{dflt, "get k", Replay, ""},                                                    // most commands are sent
		{dflt, "flushall", Refuse, "deletes every key"},                                // names in any case
		{dflt, "FlushDB ASYNC", Refuse, "deletes every key"},                           // arguments do not matter
		{dflt, "CONFIG SET maxmemory 0", Refuse, "changes the server's configuration"}, // by subcommand
		{dflt, "config get maxmemory", Replay, ""},                                     // a container's reads are sent
		{dflt, "CLUSTER SETSLOT 1 NODE x", Refuse, "changes the cluster"},              // cluster changes
		{dflt, "CLUSTER INFO", Replay, ""},                                             // cluster reads
		{dflt, "MODULE LIST", Refuse, "loads or unloads server code"},                  // a container refused whole
		{dflt, "CLIENT REPLY OFF", Refuse, "switches replies off: the replay counts one reply per command"},
		{dflt, "CLIENT SETNAME app", Replay, ""}, // harmless CLIENT subcommands
		{dflt, "SELECT 3", Skip, "the replay selects each connection's database from the trace"},
		{dflt, "AUTH (redacted)", Skip, "credentials: MONITOR shows them redacted, a replay authenticates with its own"},
		{dflt, "HELLO 3 AUTH (redacted) (redacted)", Skip, "credentials: MONITOR shows them redacted, a replay authenticates with its own"},
		{dflt, "QUIT", Skip, "would close or reset a replay connection"},
		{dflt, "KEYS *", Refuse, "scans every key and blocks the server meanwhile"},
		{allowKeys, "KEYS *", Replay, ""},                                                                                          // --allow un-refuses
		{allowKeys, "config set x y", Replay, ""},                                                                                  // --allow by two words
		{allowKeys, "CONFIG REWRITE", Refuse, "changes the server's configuration"},                                                // only the subcommand named
		{allowConfig, "CONFIG REWRITE", Replay, ""},                                                                                // a container's name covers its subcommands
		{allowAuth, "AUTH pw", Replay, ""},                                                                                         // --allow sends a default-skipped command
		{skipping, "FLUSHALL", Skip, "--skip"},                                                                                     // --skip drops a refused command
		{skipping, "GET k", Skip, "--skip"},                                                                                        // and a normal one
		{skipping, "CLIENT SETNAME x", Skip, "--skip"},                                                                             // by subcommand
		{skipping, "CLIENT GETNAME", Replay, ""},                                                                                   // only that subcommand
		{both, "KEYS *", Skip, "--skip"},                                                                                           // skipping wins over allowing
		{dflt, "CONFIG", Replay, ""},                                                                                               // a container without subcommand: the server answers
		{dflt, strings.Repeat("X", 100), Replay, ""},                                                                               // a long name is no known command
		{dflt, "", Refuse, "empty command"},                                                                                        // nothing to send
		{dflt, "FLUSHALL\x00N", Forbid, "the command's name holds a NUL byte (Redis may run it as the command before the NUL)"},    // a NUL
		{allowAll, "FLUSHALL\x00", Forbid, "the command's name holds a NUL byte (Redis may run it as the command before the NUL)"}, // whatever --allow says
		{skipping, "FLUSHALL\x00", Forbid, "the command's name holds a NUL byte (Redis may run it as the command before the NUL)"}, // or --skip
		{dflt, "CONFIG SET\x00N maxmemory-policy x", Forbid, "the subcommand holds a NUL byte (Redis may run it as the command before the NUL)"},
		{dflt, "GET\x7f k", Forbid, "the command's name holds a control byte"},                                                                    // DEL is a control byte
		{dflt, "SHUTDOWN\x01", Forbid, "the command's name holds a control byte"},                                                                 // so are the others
		{dflt, "SET k v\x00\r\n", Replay, ""},                                                                                                     // an argument may hold any byte
		{dflt, "GET \x00k", Replay, ""},                                                                                                           // a key too: GET has no subcommands
		{dflt, strings.Repeat("X", 100) + "\x00", Forbid, "the command's name holds a NUL byte (Redis may run it as the command before the NUL)"}, // however long
		{dflt, "EVAL s 0", Replay, ""},                                                                                                            // a script call: judged by its effects (ScanTrace)
		{skipScripts, "evalsha x 0", Skip, "--skip"},                                                                                              // --skip scripts: every script call
		{skipScripts, "FCALL_RO f 0", Skip, "--skip"},                                                                                             // the read-only ones too
		{skipScripts, "GET k", Replay, ""},                                                                                                        // and nothing else
		{prefixed, "GET k", Replay, ""},                                                                                                           // --key-prefix: keys found
		{prefixed, "NOSUCH k", Refuse, "pacer cannot find its keys to put --key-prefix before them"},
		{prefixed, "EVAL s 0", Refuse, "a script reaches keys it is not given: --key-prefix cannot keep it apart"},
		{prefixed, "MOVE k 1", Refuse, "moves a key to another database, which --key-prefix does not keep apart"},
		{prefixed, "COPY a b db 1", Refuse, "copies a key to another database, which --key-prefix does not keep apart"},
		{prefixed, "COPY a b REPLACE", Replay, ""},          // a COPY in its database
		{prefixed, "FLUSHALL", Refuse, "deletes every key"}, // the default's refusals first
		{prefixedAllow, "EVAL s 0", Replay, ""},             // --allow scripts
		{prefixedAllow, "MOVE k 1", Replay, ""},             // --allow MOVE
		{prefixedAllow, "NOSUCH k", Replay, ""},             // --allow NOSUCH
	} {
		got, reason := c.p.Classify(args(c.cmd))
		if got != c.want || reason != c.reason {
			t.Errorf("%q: got %v %q, want %v %q", c.cmd, got, reason, c.want, c.reason)
		}
	}
}

func TestPolicyNames(t *testing.T) {
	for _, c := range []struct{ allow, skip, err string }{
		{"KEYS,CONFIG SET", "SELECT", ""},
		{" keys , config  set ", "", ""},
		{"GET,,SET", "", `--allow: "" is not a command name (NAME or NAME SUBCOMMAND)`},
		{"", "CONFIG SET X", `--skip: "CONFIG SET X" is not a command name (NAME or NAME SUBCOMMAND)`},
		{"GET X", "", `--allow: "GET X": GET has no subcommands (name it alone)`},
		{strings.Repeat("A", 70), "", `--allow: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"... is longer than any command name`},
	} {
		_, err := ParsePolicy(c.allow, c.skip)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%q %q: got %q, want %q", c.allow, c.skip, got, c.err)
		}
	}
}

// Every name the brief of the replay lists is refused by default.
func TestRefusedByDefault(t *testing.T) {
	for _, cmd := range []string{"FLUSHALL", "FLUSHDB", "SHUTDOWN NOSAVE", "DEBUG SLEEP 0", "CONFIG SET a b",
		"CONFIG REWRITE", "CONFIG RESETSTAT", "REPLICAOF NO ONE", "SLAVEOF h 1", "CLUSTER ADDSLOTS 1",
		"CLUSTER ADDSLOTSRANGE 1 2", "CLUSTER DELSLOTS 1", "CLUSTER DELSLOTSRANGE 1 2", "CLUSTER FAILOVER",
		"CLUSTER FORGET x", "CLUSTER MEET h 1", "CLUSTER REPLICATE x", "CLUSTER RESET", "CLUSTER SETSLOT 1 STABLE",
		"CLUSTER FLUSHSLOTS", "CLUSTER SET-CONFIG-EPOCH 1", "CLUSTER BUMPEPOCH", "CLUSTER SAVECONFIG",
		"ACL SETUSER u", "ACL DELUSER u", "ACL LOAD", "ACL SAVE", "SCRIPT FLUSH", "SCRIPT KILL",
		"FUNCTION FLUSH", "FUNCTION DELETE l", "FUNCTION LOAD x", "FUNCTION RESTORE x", "FUNCTION KILL",
		"MODULE LOAD x", "MONITOR", "SAVE", "BGSAVE", "BGREWRITEAOF", "KEYS *", "SWAPDB 0 1", "FAILOVER",
		"CLIENT KILL ID 1", "CLIENT PAUSE 10", "CLIENT NO-EVICT on", "SYNC", "PSYNC ? -1", "MIGRATE h 1 k 0 10",
		"LATENCY RESET", "SLOWLOG RESET", "REPLCONF ack 1", "PFDEBUG GETREG k", "PFSELFTEST"} {
		if a, _ := (*Policy)(nil).Classify(args(cmd)); a != Refuse {
			t.Errorf("%s: %v", cmd, a)
		}
	}
	if l := refusedByDefault(); len(l) < 50 || l[0] != "ACL DELUSER" {
		t.Errorf("%d: %v", len(l), l)
	}
	for _, argv := range [][][]byte{{[]byte("CONFIG"), []byte("GET\r"), []byte("x")}, {[]byte("client"), []byte("kill id")}, {[]byte("GET\t"), []byte("k")}} {
		if a, why := (*Policy)(nil).Classify(argv); a != Forbid || !strings.Contains(why, "a blank") {
			t.Errorf("%q: %v %q, want a blank forbidden", argv, a, why)
		}
	}
	a := args("CONFIG SET\x00 x y")
	if n := testing.AllocsPerRun(100, func() { (*Policy)(nil).Classify(a) }); n != 0 {
		t.Errorf("Classify of a forbidden name: %.1f allocations", n)
	}
}

func TestClassifiers(t *testing.T) {
	for _, c := range []struct {
		cmd                     string
		blocking, pubsub, tx, s bool
	}{
		{"GET k", false, false, false, false},
		{"blpop a b 0", true, false, false, false},
		{"BRPOP a 0", true, false, false, false},
		{"BLMOVE a b LEFT RIGHT 0", true, false, false, false},
		{"BRPOPLPUSH a b 0", true, false, false, false},
		{"BZPOPMIN a 0", true, false, false, false},
		{"BZPOPMAX a 0", true, false, false, false},
		{"BZMPOP 0 1 a MIN", true, false, false, false},
		{"BLMPOP 0 1 a LEFT", true, false, false, false},
		{"WAIT 1 0", true, false, false, false},
		{"WAITAOF 1 0 0", true, false, false, false},
		{"XREAD COUNT 1 BLOCK 0 STREAMS s $", true, false, false, false},
		{"xreadgroup GROUP g c block 10 STREAMS s >", true, false, false, false},
		{"XREAD COUNT 1 STREAMS BLOCK $", false, false, false, false}, // a stream called BLOCK
		{"XREAD STREAMS s 0", false, false, false, false},
		{"SUBSCRIBE c", false, true, false, false},
		{"psubscribe c*", false, true, false, false},
		{"SSUBSCRIBE c", false, true, false, false},
		{"UNSUBSCRIBE", false, true, false, false},
		{"PUNSUBSCRIBE", false, true, false, false},
		{"SUNSUBSCRIBE", false, true, false, false},
		{"PUBLISH c m", false, false, false, false},
		{"MULTI", false, false, true, false},
		{"exec", false, false, true, false},
		{"DISCARD", false, false, true, false},
		{"WATCH k", false, false, true, false},
		{"UNWATCH", false, false, true, false},
		{"select 2", false, false, false, true},
		{"", false, false, false, false},
	} {
		a := args(c.cmd)
		if IsBlocking(a) != c.blocking || IsPubSub(a) != c.pubsub || IsTransaction(a) != c.tx || IsSelect(a) != c.s {
			t.Errorf("%q: blocking %v pubsub %v tx %v select %v", c.cmd, IsBlocking(a), IsPubSub(a), IsTransaction(a), IsSelect(a))
		}
	}
	a := args("xread block 0 streams s $")
	if n := testing.AllocsPerRun(100, func() { IsBlocking(a); IsPubSub(a); IsTransaction(a); IsSelect(a) }); n != 0 {
		t.Errorf("%.1f allocations", n)
	}
}

func TestAppendCommandName(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"get k", "GET"}, {"config set a b", "CONFIG SET"}, {"Client SetName x", "CLIENT SETNAME"},
		{"xinfo stream s", "XINFO STREAM"}, {"object freq k", "OBJECT FREQ"}, {"CONFIG", "CONFIG"}, {"", ""},
	} {
		if got := string(AppendCommandName(nil, args(c.cmd))); got != c.want {
			t.Errorf("%q: %q, want %q", c.cmd, got, c.want)
		}
	}
}

func TestPrefixKeys(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		keys []int
		want string
	}{
		// One comment per row: what the row shows.
		{"GET k", []int{1}, "GET p:k"},                                       // one key
		{"MSET a 1 b 2", []int{1, 3}, "MSET p:a 1 p:b 2"},                    // every other one
		{"OBJECT ENCODING k", []int{2}, "OBJECT ENCODING p:k"},               // a subcommand's key
		{"ZUNIONSTORE d 2 a b", []int{1, 3, 4}, "ZUNIONSTORE p:d 2 p:a p:b"}, // a destination and a key count
		{"PING", nil, "PING"},                                                // no keys
		{"GET", []int{1}, "GET"},                                             // a key missing from the command
		{"SET k k", []int{1, 1}, "SET p:k k"},                                // an index given twice: once
		{"DEL b a", []int{2, 1}, "DEL p:b p:a"},                              // in any order
		{"DEL a", []int{0, -1, 5}, "DEL a"},                                  // indexes outside the arguments
	} {
		a := args(c.cmd)
		got, _ := PrefixKeys(a, c.keys, []byte("p:"), nil)
		if s := string(bytes.Join(got, []byte(" "))); s != c.want {
			t.Errorf("%s %v: %q, want %q", c.cmd, c.keys, s, c.want)
		}
	}
	buf := make([]byte, 0, 64)
	orig := args("MSET a 1 b 2")
	a := make([][]byte, len(orig))
	keys := []int{1, 3}
	if n := testing.AllocsPerRun(100, func() {
		copy(a, orig)
		a, buf = PrefixKeys(a, keys, []byte("p:"), buf)
	}); n != 0 {
		t.Errorf("%.1f allocations", n)
	}
	// A buffer that grows keeps the keys before intact.
	got, _ := PrefixKeys(args("DEL aaaaaaaa bbbbbbbb cccccccc"), []int{1, 2, 3}, []byte("prefix:"), make([]byte, 0, 4))
	if s := string(bytes.Join(got, []byte(" "))); s != "DEL prefix:aaaaaaaa prefix:bbbbbbbb prefix:cccccccc" {
		t.Errorf("%q", s)
	}
}
