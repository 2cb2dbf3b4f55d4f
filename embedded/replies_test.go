package embedded

import (
	"strings"
	"testing"
)

// TestRepliesTranscript runs a script of commands against one keyspace and
// compares every reply byte for byte, in RESP2 and then RESP3 (from HELLO
// 3 on): the counts, pops, optional counts and null forms of every data
// type, WRONGTYPE and argument errors in the order they are checked, and
// keys removed when a pop or a removal empties them. After each command
// the dataset's running memory estimate must equal a recount.
func TestRepliesTranscript(t *testing.T) {
	steps := []struct{ cmd, want string }{
		{"STRLEN s", ":0\r\n"},
		{"LLEN l", ":0\r\n"},
		{"SCARD S", ":0\r\n"},
		{"HLEN h", ":0\r\n"},
		{"ZCARD z", ":0\r\n"},
		{"XLEN x", ":0\r\n"},
		{"SET s hello", "+OK\r\n"},
		{"RPUSH l a b c", ":3\r\n"},
		{"SADD S m", ":1\r\n"},
		{"HSET h f v g w", ":2\r\n"},
		{"ZADD z 2.5 b 1 a 3 c", ":3\r\n"},
		{"XADD x * f v", ""}, // an ID from the clock
		{"STRLEN s", ":5\r\n"},
		{"LLEN l", ":3\r\n"},
		{"SCARD S", ":1\r\n"},
		{"HLEN h", ":2\r\n"},
		{"ZCARD z", ":3\r\n"},
		{"XLEN x", ":1\r\n"},
		{"STRLEN l", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"LLEN s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"SCARD s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"HLEN s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"ZCARD s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"XLEN s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"LPOP nosuch", "$-1\r\n"},
		{"LPOP nosuch 2", "*-1\r\n"},
		{"LPOP l -1", "-ERR value is out of range, must be positive\r\n"},
		{"LPOP l x", "-ERR value is out of range, must be positive\r\n"},
		{"LPOP l 1 2", "-ERR wrong number of arguments for 'lpop' command\r\n"},
		{"LPOP s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"LPOP s -1", "-ERR value is out of range, must be positive\r\n"},
		{"LPOP l 0", "*0\r\n"},
		{"LPOP l", "$1\r\na\r\n"},
		{"RPOP l 5", "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"},
		{"EXISTS l", ":0\r\n"},
		{"LPOP l", "$-1\r\n"},
		{"SPOP nosuch", "$-1\r\n"},
		{"SPOP nosuch 2", "*0\r\n"},
		{"SPOP S -1", "-ERR value is out of range, must be positive\r\n"},
		{"SPOP S 1 2", "-ERR syntax error\r\n"},
		{"SPOP s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"SPOP s -1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"SPOP S 0", "*0\r\n"},
		{"SPOP S", "$1\r\nm\r\n"},
		{"EXISTS S", ":0\r\n"},
		{"SADD S m", ":1\r\n"},
		{"SPOP S 3", "*1\r\n$1\r\nm\r\n"},
		{"EXISTS S", ":0\r\n"},
		{"SADD S m n", ":2\r\n"},
		{"SREM S m nosuch", ":1\r\n"},
		{"SREM S n", ":1\r\n"},
		{"EXISTS S", ":0\r\n"},
		{"SREM S n", ":0\r\n"},
		{"SISMEMBER S n", ":0\r\n"},
		{"ZPOPMIN nosuch", "*0\r\n"},
		{"ZPOPMIN z -1", "-ERR value is out of range, must be positive\r\n"},
		{"ZPOPMIN z 1 2", "-ERR syntax error\r\n"},
		{"ZPOPMIN s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"ZPOPMIN z 0", "*0\r\n"},
		{"ZPOPMIN z", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
		{"ZSCORE z b", "$3\r\n2.5\r\n"},
		{"ZSCORE z nosuch", "$-1\r\n"},
		{"ZSCORE nosuch b", "$-1\r\n"},
		{"ZPOPMIN z 5", "*4\r\n$1\r\nb\r\n$3\r\n2.5\r\n$1\r\nc\r\n$1\r\n3\r\n"},
		{"EXISTS z", ":0\r\n"},
		{"ZADD z XX 1 a", ":0\r\n"},
		{"EXISTS z", ":0\r\n"},
		{"ZADD z 1e300 a -0.125 b", ":2\r\n"},
		{"ZSCORE z a", "$23\r\n1.0000000000000001e+300\r\n"},
		{"ZSCORE z b", "$6\r\n-0.125\r\n"},
		{"SET k v", "+OK\r\n"},
		{"SET k v NX", "$-1\r\n"},
		{"SET k v2 NX GET", "$1\r\nv\r\n"},
		{"SET k v2 XX GET", "$1\r\nv\r\n"},
		{"GET k", "$2\r\nv2\r\n"},
		{"SET new v XX", "$-1\r\n"},
		{"SET new v XX GET", "$-1\r\n"},
		{"EXISTS new", ":0\r\n"},
		{"SET l2 v GET", "$-1\r\n"},
		{"RPUSH l2 a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"SET l2 v GET", "$1\r\nv\r\n"},
		{"SET l2 v NX GET", "$1\r\nv\r\n"},
		{"SET l2 v", "+OK\r\n"},
		{"TYPE l2", "+string\r\n"},
		{"GET l", "$-1\r\n"},
		{"RPUSH l a", ":1\r\n"},
		{"GET l", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"GETSET k x", "$2\r\nv2\r\n"},
		{"GETSET fresh y", "$-1\r\n"},
		{"GETSET l z", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"MGET k l nosuch", "*3\r\n$1\r\nx\r\n$-1\r\n$-1\r\n"},
		{"INCR n", ":1\r\n"},
		{"DECRBY n 5", ":-4\r\n"},
		{"APPEND k yz", ":3\r\n"},
		{"STRLEN k", ":3\r\n"},
		{"HGET h f", "$1\r\nv\r\n"},
		{"HGET h nosuch", "$-1\r\n"},
		{"HGETALL nosuch", "*0\r\n"},
		{"HLEN nosuch", ":0\r\n"},
		{"SMEMBERS nosuch", "*0\r\n"},
		{"SADD one m", ":1\r\n"},
		{"SMEMBERS one", "*1\r\n$1\r\nm\r\n"},
		{"COMMAND INFO nosuch", "*1\r\n*-1\r\n"},
		{"HELLO 3", "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"},
		{"LPOP nosuch", "_\r\n"},
		{"LPOP nosuch 2", "_\r\n"},
		{"SPOP nosuch", "_\r\n"},
		{"SPOP nosuch 2", "~0\r\n"},
		{"ZPOPMIN nosuch", "*0\r\n"},
		{"GET nosuch", "_\r\n"},
		{"ZSCORE z b", ",-0.125\r\n"},
		{"ZSCORE z nosuch", "_\r\n"},
		{"HGETALL nosuch", "%0\r\n"},
		{"SMEMBERS one", "~1\r\n$1\r\nm\r\n"},
		{"SPOP one 0", "~0\r\n"},
		{"COMMAND INFO nosuch", "*1\r\n_\r\n"},
		{"MGET k nosuch", "*2\r\n$3\r\nxyz\r\n_\r\n"},
		{"SET k v NX", "_\r\n"},
		{"SET k2 v GET", "_\r\n"},
		{"ZADD zz 1 a 2 b", ":2\r\n"},
		{"ZPOPMIN zz 2", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{"SISMEMBER one m", ":1\r\n"},
		{"HSET h1 f v", ":1\r\n"},
		{"HGETALL h1", "%1\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	}
	s := newServer(Config{}.withDefaults())
	cl := &client{srv: s, proto: 2}
	for _, st := range steps {
		var args [][]byte
		for _, w := range strings.Fields(st.cmd) {
			args = append(args, []byte(w))
		}
		cl.out = cl.out[:0]
		cl.exec(args)
		if got := string(cl.out); st.want != "" && got != st.want || st.want == "" && !strings.HasPrefix(got, "$") {
			t.Errorf("%s: got %q, want %q", st.cmd, got, st.want)
		}
		if got, want := s.used, s.recount(t); got != want {
			t.Fatalf("after %s: running memory estimate %d, recount %d", st.cmd, got, want)
		}
	}
}
