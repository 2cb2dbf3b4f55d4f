package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pacer-load/pacer/conn"
)

// KeySpec says where a command's keys are among its arguments (args[0] is
// the command's name): from First to Last (-1: the last argument, -2: the
// one before, ...) every Step. First 0 means the command has no keys.
type KeySpec struct{ First, Last, Step int }

// specs is the table of known commands by upper-case name, replaced (never
// changed) by Learn, so lookups need no lock.
var specs atomic.Pointer[map[string]KeySpec]

var learnMu sync.Mutex

func init() {
	m := map[string]KeySpec{}
	keyless := []string{"PING", "ECHO", "INFO", "TIME", "DBSIZE", "CONFIG", "CLIENT", "COMMAND",
		"HELLO", "AUTH", "SELECT", "CLUSTER", "FLUSHALL", "FLUSHDB", "SCRIPT", "FUNCTION",
		"MULTI", "EXEC", "DISCARD", "RANDOMKEY", "SCAN", "LASTSAVE", "ROLE", "READONLY", "READWRITE", "ASKING"}
	for _, n := range keyless {
		m[n] = KeySpec{}
	}
	one := []string{
		// redis-benchmark's tests
		"SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LRANGE", "XADD",
		// strings
		"SETEX", "PSETEX", "SETNX", "GETSET", "GETDEL", "GETEX", "APPEND", "STRLEN", "INCRBY", "INCRBYFLOAT", "DECR", "DECRBY",
		"SETRANGE", "GETRANGE", "SETBIT", "GETBIT", "BITCOUNT", "BITPOS",
		// keys
		"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "TTL", "PTTL", "PERSIST", "TYPE", "DUMP", "RESTORE", "OBJECT",
		// hashes
		"HGET", "HMSET", "HMGET", "HGETALL", "HDEL", "HEXISTS", "HLEN", "HKEYS", "HVALS", "HINCRBY", "HINCRBYFLOAT", "HSETNX", "HSTRLEN", "HRANDFIELD", "HSCAN",
		// lists
		"LLEN", "LINDEX", "LSET", "LREM", "LTRIM", "LINSERT", "LPOS", "LPUSHX", "RPUSHX",
		// sets
		"SREM", "SCARD", "SMEMBERS", "SISMEMBER", "SMISMEMBER", "SRANDMEMBER", "SSCAN",
		// sorted sets
		"ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZSCORE", "ZMSCORE", "ZINCRBY", "ZREM",
		"ZCARD", "ZCOUNT", "ZRANK", "ZREVRANK", "ZPOPMAX", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZSCAN", "ZRANDMEMBER",
		// streams, hyperloglog, geo
		"XLEN", "XRANGE", "XREVRANGE", "XDEL", "XTRIM", "XACK", "XCLAIM", "XAUTOCLAIM", "XPENDING", "XSETID",
		"PFADD", "GEOADD", "GEODIST", "GEOPOS", "GEOHASH", "GEOSEARCH",
	}
	for _, n := range one {
		m[n] = KeySpec{First: 1, Last: 1, Step: 1}
	}
	all := []string{"DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "PFCOUNT", "PFMERGE", "SUNION", "SINTER", "SDIFF",
		"SUNIONSTORE", "SINTERSTORE", "SDIFFSTORE", "WATCH"}
	for _, n := range all {
		m[n] = KeySpec{First: 1, Last: -1, Step: 1}
	}
	for _, n := range []string{"MSET", "MSETNX"} {
		m[n] = KeySpec{First: 1, Last: -1, Step: 2}
	}
	for _, n := range []string{"RENAME", "RENAMENX", "COPY", "SMOVE", "RPOPLPUSH", "LMOVE", "BLMOVE", "BRPOPLPUSH", "GEOSEARCHSTORE", "ZRANGESTORE"} {
		m[n] = KeySpec{First: 1, Last: 2, Step: 1}
	}
	for _, n := range []string{"BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX"} {
		m[n] = KeySpec{First: 1, Last: -2, Step: 1}
	}
	specs.Store(&m)
}

// KeyPositions returns where the named command's keys are (case does not
// matter), ok false for a command neither the table nor Learn knows. A
// subcommand is named with its command ("OBJECT ENCODING"): its keys are
// the key table's (keyspec.go), where one range holds them.
func KeyPositions(name string) (KeySpec, bool) {
	if s, ok := lookup([]byte(name)); ok {
		return s, true
	}
	if cmd, sub, ok := strings.Cut(name, " "); ok {
		return subcommandPositions(cmd, sub)
	}
	return KeySpec{}, false
}

// lookup finds name without allocating.
func lookup(name []byte) (KeySpec, bool) {
	m := *specs.Load()
	if s, ok := m[string(name)]; ok {
		return s, true
	}
	var up [32]byte
	if len(name) > len(up) {
		s, ok := m[strings.ToUpper(string(name))]
		return s, ok
	}
	for i, c := range name {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up[i] = c
	}
	s, ok := m[string(up[:len(name)])]
	return s, ok
}

// Learn asks the server (with o) for the key positions of the commands in
// names the table does not know yet (COMMAND INFO), and adds them. A
// command the server does not know, or whose keys move with its arguments
// (EVAL, ZUNIONSTORE, XREAD: "movablekeys"), is an error naming it.
func Learn(ctx context.Context, o conn.Options, names []string) error {
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		u := strings.ToUpper(n)
		if _, ok := lookup([]byte(u)); !ok && !seen[u] {
			seen[u] = true
			unknown = append(unknown, u)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	v, err := conn.Do(ctx, o, append([]string{"COMMAND", "INFO"}, unknown...)...)
	if err != nil {
		return fmt.Errorf("COMMAND INFO: %w", err)
	}
	learned, err := parseCommandInfo(unknown, v)
	if err != nil {
		return err
	}
	learnMu.Lock()
	defer learnMu.Unlock()
	old := *specs.Load()
	m := make(map[string]KeySpec, len(old)+len(learned))
	for k, s := range old {
		m[k] = s
	}
	for k, s := range learned {
		m[k] = s
	}
	specs.Store(&m)
	return nil
}

// parseCommandInfo reads COMMAND INFO's reply for names: per command
// [name, arity, flags, first, last, step, ...], or nil when unknown.
func parseCommandInfo(names []string, v conn.Value) (map[string]KeySpec, error) {
	if len(v.Elems) != len(names) {
		return nil, fmt.Errorf("COMMAND INFO: %d replies for %d commands", len(v.Elems), len(names))
	}
	out := map[string]KeySpec{}
	for i, e := range v.Elems {
		if e.Nil || len(e.Elems) < 6 {
			return nil, fmt.Errorf("the server does not know the command %s", names[i])
		}
		for _, f := range e.Elems[2].Elems {
			if strings.EqualFold(f.Str, "movablekeys") {
				return nil, fmt.Errorf("%s has keys whose positions depend on its arguments (movablekeys): pacer cannot route it in cluster mode", names[i])
			}
		}
		s := KeySpec{First: int(e.Elems[3].Int), Last: int(e.Elems[4].Int), Step: int(e.Elems[5].Int)}
		if s.First <= 0 || s.Step <= 0 {
			s = KeySpec{}
		}
		out[names[i]] = s
	}
	return out, nil
}

// ErrUnknownCommand is wrapped by CommandSlot's error for a command whose
// key positions are unknown (see Learn).
var ErrUnknownCommand = errors.New("key positions unknown")

// CommandSlot returns the slot of a command given as its arguments
// (args[0] is the name); hasKey is false for a keyless command. A command
// whose keys map to different slots is an error naming it ("MSET keys span
// slots 1 and 5000; use a {hash tag}"), and so is a command the table does
// not know (wrapping ErrUnknownCommand).
func CommandSlot(args [][]byte) (slot uint16, hasKey bool, err error) {
	if len(args) == 0 {
		return 0, false, errors.New("empty command")
	}
	s, ok := lookup(args[0])
	if !ok {
		return 0, false, fmt.Errorf("%s: %w (cluster mode needs to know where its keys are)", strings.ToUpper(string(args[0])), ErrUnknownCommand)
	}
	if s.First <= 0 || s.Step <= 0 {
		return 0, false, nil
	}
	last := s.Last
	if last < 0 {
		last += len(args)
	}
	for i := s.First; i <= last && i < len(args); i += s.Step {
		k := Slot(args[i])
		switch {
		case !hasKey:
			slot, hasKey = k, true
		case k != slot:
			return 0, false, fmt.Errorf("%s keys span slots %d and %d; use a {hash tag}", strings.ToUpper(string(args[0])), slot, k)
		}
	}
	return slot, hasKey, nil
}
