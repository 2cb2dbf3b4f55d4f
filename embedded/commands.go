package embedded

// The command table and dispatch: each command's name, arity, flags and key
// positions, found by name without hashing, and run after the checks Redis
// makes first (arity, AUTH, maxmemory).

import (
	"math"
	"strings"

	"github.com/pacer-load/pacer/internal/clock"
)

// cmdFlags are what COMMAND reports of a command; flagDenyOOM also marks
// the commands refused while the dataset exceeds Config.MaxMemory.
type cmdFlags uint8

const (
	flagWrite cmdFlags = 1 << iota
	flagReadonly
	flagDenyOOM
	flagAdmin
	flagFast
)

// flagNames are the flags' names in COMMAND's reply, in bit order.
var flagNames = [...]string{"write", "readonly", "denyoom", "admin", "fast"}

// command is one entry of the command table.
type command struct {
	name string // lower case, as Redis names it in errors and COMMAND
	// arity counts the words with the name, as Redis's command table
	// does: N means exactly N, -N at least N.
	arity int
	flags cmdFlags
	// firstKey, lastKey and step locate the keys among the words for
	// COMMAND (lastKey -1: the last word).
	firstKey, lastKey, step int
	run                     func(c *client, args [][]byte)
}

// acceptsArgs reports whether n words (the name included) fit the arity.
func (cmd *command) acceptsArgs(n int) bool {
	if cmd.arity >= 0 {
		return n == cmd.arity
	}
	return n >= -cmd.arity
}

// commandTable is every command the embedded target answers. It is filled
// by init: COMMAND's handler reads it.
var commandTable []command

// commandBuckets find a command by its name's length and first letter:
// indexes into commandTable, a handful per bucket at most, compared in
// place without hashing or copying the name.
var commandBuckets [maxNameLen + 1][26][]int

// commandUpper are the names of commandTable in upper case, to match.
var commandUpper []string

// maxNameLen is the longest command name in the table (PUNSUBSCRIBE):
// longer names are unknown without a lookup.
const maxNameLen = 12

// findCommand returns the index in commandTable of the command called
// name, in any case.
func findCommand(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > maxNameLen {
		return 0, false
	}
	first := name[0] | 0x20 // lower case, for letters
	if first < 'a' || first > 'z' {
		return 0, false
	}
	for _, i := range commandBuckets[len(name)][first-'a'] {
		if is(name, commandUpper[i]) {
			return i, true
		}
	}
	return 0, false
}

func init() {
	const (
		w, r, oom, adm, fast = flagWrite, flagReadonly, flagDenyOOM, flagAdmin, flagFast
	)
	commandTable = []command{
		{"ping", -1, fast, 0, 0, 0, cmdPing},
		{"echo", 2, fast, 0, 0, 0, func(c *client, a [][]byte) { c.bulk(a[1]) }},
		{"quit", -1, fast, 0, 0, 0, func(c *client, _ [][]byte) { c.simple("OK"); c.quit = true }},
		{"auth", -2, fast, 0, 0, 0, cmdAuth},
		{"hello", -1, fast, 0, 0, 0, cmdHello},
		{"select", 2, fast, 0, 0, 0, cmdSelect},
		{"time", 1, fast, 0, 0, 0, cmdTime},
		{"command", -1, 0, 0, 0, 0, cmdCommand},
		{"config", -2, adm, 0, 0, 0, cmdConfig},
		{"client", -2, adm, 0, 0, 0, cmdClient},
		{"info", -1, 0, 0, 0, 0, cmdInfo},
		{"latency", -2, adm, 0, 0, 0, cmdLatency},
		{"dbsize", 1, r | fast, 0, 0, 0, func(c *client, _ [][]byte) { c.integer(int64(len(c.keys()))) }},
		{"flushdb", -1, w, 0, 0, 0, func(c *client, _ [][]byte) { c.srv.flush(c.db); c.simple("OK"); c.flushed() }},
		{"flushall", -1, w, 0, 0, 0, cmdFlushAll},
		{"keys", 2, r, 0, 0, 0, func(c *client, a [][]byte) { c.keyList(a[1]) }},
		{"scan", -2, r, 0, 0, 0, cmdScan},
		{"del", -2, w, 1, -1, 1, cmdDel},
		{"unlink", -2, w | fast, 1, -1, 1, cmdDel},
		{"exists", -2, r | fast, 1, -1, 1, cmdExists},
		{"type", 2, r | fast, 1, 1, 1, cmdType},
		{"set", -3, w | oom, 1, 1, 1, cmdSet},
		{"get", 2, r | fast, 1, 1, 1, cmdGet},
		{"getset", 3, w | oom | fast, 1, 1, 1, cmdGetSet},
		{"mset", -3, w | oom, 1, -1, 2, cmdMSet},
		{"mget", -2, r | fast, 1, -1, 1, cmdMGet},
		{"incr", 2, w | oom | fast, 1, 1, 1, func(c *client, a [][]byte) { c.incrBy(a[1], 1) }},
		{"decr", 2, w | oom | fast, 1, 1, 1, func(c *client, a [][]byte) { c.incrBy(a[1], -1) }},
		{"incrby", 3, w | oom | fast, 1, 1, 1, cmdIncrBy},
		{"decrby", 3, w | oom | fast, 1, 1, 1, cmdIncrBy},
		{"append", 3, w | oom | fast, 1, 1, 1, cmdAppend},
		{"strlen", 2, r | fast, 1, 1, 1, cmdLen('s')},
		{"lpush", -3, w | oom | fast, 1, 1, 1, cmdPush},
		{"rpush", -3, w | oom | fast, 1, 1, 1, cmdPush},
		{"lpop", -2, w | fast, 1, 1, 1, cmdPop},
		{"rpop", -2, w | fast, 1, 1, 1, cmdPop},
		{"llen", 2, r | fast, 1, 1, 1, cmdLen('l')},
		{"lrange", 4, r, 1, 1, 1, cmdLRange},
		{"sadd", -3, w | oom | fast, 1, 1, 1, cmdSAdd},
		{"srem", -3, w | fast, 1, 1, 1, cmdSRem},
		{"scard", 2, r | fast, 1, 1, 1, cmdLen('S')},
		{"sismember", 3, r | fast, 1, 1, 1, cmdSIsMember},
		{"smembers", 2, r, 1, 1, 1, cmdSMembers},
		{"spop", -2, w | fast, 1, 1, 1, cmdSPop},
		{"hset", -4, w | oom | fast, 1, 1, 1, cmdHSet},
		{"hmset", -4, w | oom | fast, 1, 1, 1, cmdHSet},
		{"hget", 3, r | fast, 1, 1, 1, cmdHGet},
		{"hlen", 2, r | fast, 1, 1, 1, cmdLen('h')},
		{"hgetall", 2, r, 1, 1, 1, cmdHGetAll},
		{"zadd", -4, w | oom | fast, 1, 1, 1, cmdZAdd},
		{"zpopmin", -2, w | fast, 1, 1, 1, cmdZPopMin},
		{"zcard", 2, r | fast, 1, 1, 1, cmdLen('z')},
		{"zscore", 3, r | fast, 1, 1, 1, cmdZScore},
		{"xadd", -5, w | oom | fast, 1, 1, 1, cmdXAdd},
		{"xlen", 2, r | fast, 1, 1, 1, cmdLen('x')},
		{"xrange", -4, r, 1, 1, 1, cmdXRange},
		{"xdel", -3, w | fast, 1, 1, 1, cmdXDel},
		{"xtrim", -4, w, 1, 1, 1, cmdXTrim},
		{"xread", -4, r, 0, 0, 0, cmdXRead},
		{"xreadgroup", -7, w, 0, 0, 0, cmdXReadGroup},
		{"xack", -4, w | fast, 1, 1, 1, cmdXAck},
		{"xpending", -3, r, 1, 1, 1, cmdXPending},
		{"xgroup", -2, w, 2, 2, 1, cmdXGroup},
		{"xinfo", -2, r, 2, 2, 1, cmdXInfo},
		{"subscribe", -2, 0, 0, 0, 0, subscribe(' ', "subscribe")},
		{"psubscribe", -2, 0, 0, 0, 0, subscribe('p', "psubscribe")},
		{"ssubscribe", -2, 0, 1, -1, 1, subscribe('s', "ssubscribe")},
		{"unsubscribe", -1, 0, 0, 0, 0, unsubscribe(' ', "unsubscribe")},
		{"punsubscribe", -1, 0, 0, 0, 0, unsubscribe('p', "punsubscribe")},
		{"sunsubscribe", -1, 0, 1, -1, 1, unsubscribe('s', "sunsubscribe")},
		{"publish", 3, fast, 0, 0, 0, publish(false)},
		{"spublish", 3, fast, 1, 1, 1, publish(true)},
		{"pubsub", -2, 0, 0, 0, 0, cmdPubsub},
	}
	commandUpper = make([]string, len(commandTable))
	for i, cmd := range commandTable {
		commandUpper[i] = strings.ToUpper(cmd.name)
		b := &commandBuckets[len(cmd.name)][cmd.name[0]-'a']
		*b = append(*b, i)
	}
}

// exec runs one command (args[0] is its name) and appends its reply.
func (c *client) exec(args [][]byte) {
	c.ran = -1
	if c.track != nil && c.track.caching {
		c.track.nextCommand(args[0])
	}
	i, ok := findCommand(args[0])
	if !ok {
		c.unknownCommand(args)
		return
	}
	cmd := &commandTable[i]
	if !cmd.acceptsArgs(len(args)) {
		c.wrongArgs(cmd.name)
		return
	}
	if c.noauth && cmd.name != "auth" && cmd.name != "quit" && cmd.name != "hello" {
		c.errorRaw(errNoAuth)
		return
	}
	if !c.subscribedOK(args[0]) {
		return
	}
	if cmd.flags&flagDenyOOM != 0 && c.srv.used > c.srv.cfg.MaxMemory {
		c.errorRaw(errOOM)
		return
	}
	start := c.mark
	if start == 0 {
		start = clock.Now()
	}
	cmd.run(c, args)
	if c.track != nil || c.srv.trk.dirty {
		c.afterCommand(cmd, args)
	}
	if c.block != nil {
		return // it waits: counted once it answers
	}
	end := clock.Now()
	// Counted once done, as Redis does: INFO does not count itself.
	c.ran, c.took = i, end-start
	c.srv.record(i, c.took)
	if c.mark != 0 {
		c.mark = end
	}
}

// is reports whether word is the keyword kw (upper case), in any case.
func is(word []byte, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i, ch := range word {
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		if ch != kw[i] {
			return false
		}
	}
	return true
}

// parseInt reads a decimal int64 as Redis's string2ll does: an optional
// minus, digits, no leading zeros, no overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' || u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(ch-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// countArg reads the optional COUNT of LPOP, RPOP, SPOP and ZPOPMIN: a
// non-negative integer, or it answers Redis's error and reports false.
func (c *client) countArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.errorRaw(errNotPositive)
		return 0, false
	}
	return n, true
}
