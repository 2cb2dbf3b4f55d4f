package embedded

import (
	"bytes"
	"crypto/subtle"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

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

// maxNameLen is the longest command name in the table (SISMEMBER): longer
// names are unknown without a lookup.
const maxNameLen = 9

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
		{"flushdb", -1, w, 0, 0, 0, func(c *client, _ [][]byte) { c.srv.flush(c.db); c.simple("OK") }},
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
		{"strlen", 2, r | fast, 1, 1, 1, cmdStrlen},
		{"lpush", -3, w | oom | fast, 1, 1, 1, cmdPush},
		{"rpush", -3, w | oom | fast, 1, 1, 1, cmdPush},
		{"lpop", -2, w | fast, 1, 1, 1, cmdPop},
		{"rpop", -2, w | fast, 1, 1, 1, cmdPop},
		{"llen", 2, r | fast, 1, 1, 1, cmdLLen},
		{"lrange", 4, r, 1, 1, 1, cmdLRange},
		{"sadd", -3, w | oom | fast, 1, 1, 1, cmdSAdd},
		{"srem", -3, w | fast, 1, 1, 1, cmdSRem},
		{"scard", 2, r | fast, 1, 1, 1, cmdSCard},
		{"sismember", 3, r | fast, 1, 1, 1, cmdSIsMember},
		{"smembers", 2, r, 1, 1, 1, cmdSMembers},
		{"spop", -2, w | fast, 1, 1, 1, cmdSPop},
		{"hset", -4, w | oom | fast, 1, 1, 1, cmdHSet},
		{"hmset", -4, w | oom | fast, 1, 1, 1, cmdHSet},
		{"hget", 3, r | fast, 1, 1, 1, cmdHGet},
		{"hlen", 2, r | fast, 1, 1, 1, cmdHLen},
		{"hgetall", 2, r, 1, 1, 1, cmdHGetAll},
		{"zadd", -4, w | oom | fast, 1, 1, 1, cmdZAdd},
		{"zpopmin", -2, w | fast, 1, 1, 1, cmdZPopMin},
		{"zcard", 2, r | fast, 1, 1, 1, cmdZCard},
		{"zscore", 3, r | fast, 1, 1, 1, cmdZScore},
		{"xadd", -5, w | oom | fast, 1, 1, 1, cmdXAdd},
		{"xlen", 2, r | fast, 1, 1, 1, cmdXLen},
	}
	commandUpper = make([]string, len(commandTable))
	for i, cmd := range commandTable {
		commandUpper[i] = strings.ToUpper(cmd.name)
		b := &commandBuckets[len(cmd.name)][cmd.name[0]-'a']
		*b = append(*b, i)
	}
}

// client is one connection's state as commands see it.
type client struct {
	srv   *Server
	db    int
	proto int // 2 or 3 (HELLO 3)
	out   []byte
	name  string
	quit  bool // QUIT: answer, then close
	// noauth: the server has a password and the client has not given it
	// yet; every command but AUTH and QUIT is refused.
	noauth bool
	// ran and took are the table index of the last command executed (-1
	// for none: unknown, refused) and how long it took.
	ran  int
	took int64
	// mark, when set, is when the previous command of the chunk ended:
	// the next one starts there, which saves a clock reading per command.
	mark int64
}

// Error replies, worded as Redis words them.
const (
	errWrongType   = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	errNotInt      = "-ERR value is not an integer or out of range\r\n"
	errSyntax      = "-ERR syntax error\r\n"
	errNotFloat    = "-ERR value is not a valid float\r\n"
	errOverflow    = "-ERR increment or decrement would overflow\r\n"
	errNotPositive = "-ERR value is out of range, must be positive\r\n"
	errNoPassword  = "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"
	errNoAuth      = "-NOAUTH Authentication required.\r\n"
	errNoAuthHello = "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"
	errWrongPass   = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	errTooLong     = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	// errOOM is Redis's reply (its prefix is what clients match) and a
	// hint for whoever meets it with the embedded target.
	errOOM = "-OOM command not allowed when used memory > 'maxmemory' (the embedded target's dataset limit: CONFIG GET maxmemory)\r\n"
)

// exec runs one command (args[0] is its name) and appends its reply.
func (c *client) exec(args [][]byte) {
	c.ran = -1
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
	if cmd.flags&flagDenyOOM != 0 && c.srv.used > c.srv.cfg.MaxMemory {
		c.errorRaw(errOOM)
		return
	}
	start := c.mark
	if start == 0 {
		start = clock.Now()
	}
	cmd.run(c, args)
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

// Reply encoders.

func (c *client) simple(s string)   { c.out = append(append(append(c.out, '+'), s...), '\r', '\n') }
func (c *client) errorRaw(s string) { c.out = append(c.out, s...) }

// errorf appends msg as an error reply. CR and LF become spaces, as Redis
// does: msg may quote the client's words, which must not end the reply.
func (c *client) errorf(msg string) {
	c.out = append(c.out, '-')
	for i := 0; i < len(msg); i++ {
		ch := msg[i]
		if ch == '\r' || ch == '\n' {
			ch = ' '
		}
		c.out = append(c.out, ch)
	}
	c.out = append(c.out, '\r', '\n')
}

func (c *client) integer(n int64) {
	c.out = append(c.out, ':')
	c.out = strconv.AppendInt(c.out, n, 10)
	c.out = append(c.out, '\r', '\n')
}
func (c *client) bulk(b []byte) {
	c.out = append(c.out, '$')
	c.out = strconv.AppendInt(c.out, int64(len(b)), 10)
	c.out = append(c.out, '\r', '\n')
	c.out = append(c.out, b...)
	c.out = append(c.out, '\r', '\n')
}
func (c *client) bulkString(s string) {
	c.out = append(c.out, '$')
	c.out = strconv.AppendInt(c.out, int64(len(s)), 10)
	c.out = append(c.out, '\r', '\n')
	c.out = append(c.out, s...)
	c.out = append(c.out, '\r', '\n')
}
func (c *client) null() {
	if c.proto == 3 {
		c.out = append(c.out, "_\r\n"...)
		return
	}
	c.out = append(c.out, "$-1\r\n"...)
}
func (c *client) nullArray() {
	if c.proto == 3 {
		c.out = append(c.out, "_\r\n"...)
		return
	}
	c.out = append(c.out, "*-1\r\n"...)
}
func (c *client) aggregate(kind byte, n int) {
	c.out = append(c.out, kind)
	c.out = strconv.AppendInt(c.out, int64(n), 10)
	c.out = append(c.out, '\r', '\n')
}
func (c *client) array(n int) { c.aggregate('*', n) }
func (c *client) mapHeader(n int) {
	if c.proto == 3 {
		c.aggregate('%', n)
		return
	}
	c.array(2 * n)
}
func (c *client) setHeader(n int) {
	if c.proto == 3 {
		c.aggregate('~', n)
		return
	}
	c.array(n)
}
func (c *client) float(f float64) {
	if c.proto == 3 {
		c.out = append(c.out, ',')
		c.out = strconv.AppendFloat(c.out, f, 'g', 17, 64)
		c.out = append(c.out, '\r', '\n')
		return
	}
	c.bulk(strconv.AppendFloat(nil, f, 'g', 17, 64))
}
func (c *client) boolean(b bool) {
	if b {
		c.integer(1)
	} else {
		c.integer(0)
	}
}

// wrongArgs is Redis's arity error; name is the command's lower-case name
// ("config|get" for a subcommand).
func (c *client) wrongArgs(name string) {
	c.errorf("ERR wrong number of arguments for '" + name + "' command")
}

// quoteLimit is how much of the client's words an error reply quotes, as
// Redis's.
const quoteLimit = 128

// unknownCommand is Redis's reply to a command it does not have: the name
// and the first arguments, quoted up to quoteLimit bytes.
func (c *client) unknownCommand(args [][]byte) {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(args[0][:min(len(args[0]), quoteLimit)])
	b.WriteString("', with args beginning with: ")
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= quoteLimit {
			break
		}
		a = a[:min(len(a), quoteLimit-quoted)]
		b.WriteString("'")
		b.Write(a)
		b.WriteString("' ")
		quoted += len(a) + 3
	}
	c.errorf(b.String())
}

// unknownSubcommand is Redis's reply to a subcommand it does not have.
func (c *client) unknownSubcommand(sub []byte, cmd string) {
	c.errorf("ERR unknown subcommand '" + string(sub[:min(len(sub), quoteLimit)]) + "'. Try " + cmd + " HELP.")
}

func (c *client) keys() map[string]*object { return c.srv.dbs[c.db] }

// lookup returns the key's object if it has kind, reporting WRONGTYPE
// (written to the client) when it holds another kind.
func (c *client) lookup(key []byte, kind byte) (*object, bool) {
	o := c.keys()[string(key)]
	if o != nil && o.kind != kind {
		c.errorRaw(errWrongType)
		return nil, false
	}
	return o, true
}

// create returns the key's object of kind, creating it when missing.
func (c *client) create(key []byte, kind byte) (*object, bool) {
	o, ok := c.lookup(key, kind)
	if !ok {
		return nil, false
	}
	if o == nil {
		o = &object{kind: kind}
		switch kind {
		case 'l':
			o.list = &deque{}
		case 'S':
			o.set = map[string]struct{}{}
		case 'h':
			o.hash = map[string][]byte{}
		case 'z':
			o.zset = newZset()
		case 'x':
			o.stream = &stream{}
		}
		c.setKey(key, o)
	}
	return o, true
}

// dropIfEmpty deletes a collection that has become empty, as Redis does.
func (c *client) dropIfEmpty(key []byte, n int) {
	if n == 0 {
		c.delKey(key)
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

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

// Connection and server commands.

func cmdPing(c *client, a [][]byte) {
	switch len(a) {
	case 1:
		c.simple("PONG")
	case 2:
		c.bulk(a[1])
	default:
		c.wrongArgs("ping")
	}
}

func cmdSelect(c *client, a [][]byte) {
	n, ok := parseInt(a[1])
	switch {
	case !ok:
		c.errorRaw(errNotInt)
	case n < 0 || n >= int64(len(c.srv.dbs)):
		c.errorf("ERR DB index is out of range")
	default:
		c.db = int(n)
		c.simple("OK")
	}
}

func cmdTime(c *client, _ [][]byte) {
	now := time.Now()
	c.array(2)
	c.bulkString(strconv.FormatInt(now.Unix(), 10))
	c.bulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func cmdFlushAll(c *client, _ [][]byte) {
	for i := range c.srv.dbs {
		c.srv.flush(i)
	}
	c.simple("OK")
}

func cmdScan(c *client, a [][]byte) {
	// One pass: every matching key, cursor 0.
	pattern := []byte("*")
	for i := 2; i+1 < len(a); i += 2 {
		if is(a[i], "MATCH") {
			pattern = a[i+1]
		}
	}
	c.array(2)
	c.bulkString("0")
	c.keyList(pattern)
}

func (c *client) keyList(pattern []byte) {
	var keys []string
	p := string(pattern)
	for k := range c.keys() {
		if p == "*" {
			keys = append(keys, k)
		} else if ok, _ := path.Match(p, k); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	c.array(len(keys))
	for _, k := range keys {
		c.bulkString(k)
	}
}

// cmdAuth checks AUTH [user] password against Config.User and
// Config.Password, as Redis does for one ACL user.
func cmdAuth(c *client, a [][]byte) {
	ok := false
	switch len(a) {
	case 2:
		ok = c.auth([]byte("default"), a[1])
	case 3:
		ok = c.auth(a[1], a[2])
	default:
		c.errorRaw(errSyntax)
		return
	}
	if ok {
		c.simple("OK")
	}
}

// auth authenticates the client as user with pass, or answers why not
// and reports false.
func (c *client) auth(user, pass []byte) bool {
	cfg := &c.srv.cfg
	if cfg.Password == "" {
		c.errorRaw(errNoPassword)
		return false
	}
	want := cfg.User
	if want == "" {
		want = "default"
	}
	userOK := subtle.ConstantTimeCompare(user, []byte(want)) == 1
	passOK := subtle.ConstantTimeCompare(pass, []byte(cfg.Password)) == 1
	if !userOK || !passOK {
		c.errorRaw(errWrongPass)
		return false
	}
	c.noauth = false
	return true
}

func cmdHello(c *client, a [][]byte) {
	if len(a) > 1 {
		v, ok := parseInt(a[1])
		if !ok || (v != 2 && v != 3) {
			c.errorf("NOPROTO unsupported protocol version")
			return
		}
		for i := 2; i < len(a); i++ {
			switch {
			case is(a[i], "AUTH") && i+2 < len(a):
				if !c.auth(a[i+1], a[i+2]) {
					return
				}
				i += 2
			case is(a[i], "AUTH"):
				c.errorRaw(errSyntax)
				return
			case is(a[i], "SETNAME") && i+1 < len(a):
				c.name = string(a[i+1])
				i++
			}
		}
		if c.noauth { // before the protocol changes
			c.errorRaw(errNoAuthHello)
			return
		}
		c.proto = int(v)
	}
	if c.noauth {
		c.errorRaw(errNoAuthHello)
		return
	}
	c.mapHeader(7)
	c.bulkString("server")
	c.bulkString("redis")
	c.bulkString("version")
	c.bulkString("7.2.0")
	c.bulkString("proto")
	c.integer(int64(c.proto))
	c.bulkString("id")
	c.integer(1)
	c.bulkString("mode")
	c.bulkString("standalone")
	c.bulkString("role")
	c.bulkString("master")
	c.bulkString("modules")
	c.array(0)
}

// configValues are what CONFIG GET answers (persistence is off).
func (s *Server) configValues() map[string]string {
	return map[string]string{
		"save": "", "appendonly": "no", "io-threads": "1", "databases": strconv.Itoa(len(s.dbs)),
		"maxmemory":                  strconv.FormatInt(s.cfg.MaxMemory, 10),
		"maxmemory-policy":           "noeviction",
		"proto-max-bulk-len":         strconv.Itoa(MaxBulkLen),
		"client-query-buffer-limit":  strconv.Itoa(s.cfg.MaxQueryBuffer),
		"client-output-buffer-limit": "normal " + strconv.Itoa(s.cfg.MaxOutputBuffer) + " 0 0",
		"maxmemory-clients":          strconv.Itoa(s.cfg.MaxClientMemory),
	}
}

func cmdConfig(c *client, a [][]byte) {
	switch sub := a[1]; {
	case is(sub, "GET"):
		if len(a) < 3 {
			c.wrongArgs("config|get")
			return
		}
		values := c.srv.configValues()
		var names []string
		for _, p := range a[2:] {
			for k := range values {
				if ok, _ := path.Match(strings.ToLower(string(p)), k); ok {
					names = append(names, k)
				}
			}
		}
		sort.Strings(names)
		c.mapHeader(len(names))
		for _, k := range names {
			c.bulkString(k)
			c.bulkString(values[k])
		}
	case is(sub, "RESETSTAT"):
		clear(c.srv.stats)
		c.simple("OK")
	case is(sub, "SET"):
		c.simple("OK") // accepted and ignored: clients tune what the target does not have
	default:
		c.unknownSubcommand(sub, "CONFIG")
	}
}

func cmdClient(c *client, a [][]byte) {
	switch sub := a[1]; {
	case is(sub, "SETNAME"):
		if len(a) == 3 {
			c.name = string(a[2])
		}
		c.simple("OK")
	case is(sub, "GETNAME"):
		if c.name == "" {
			c.null()
		} else {
			c.bulkString(c.name)
		}
	case is(sub, "ID"):
		c.integer(1)
	case is(sub, "TRACKING"), is(sub, "SETINFO"), is(sub, "REPLY"), is(sub, "NO-EVICT"), is(sub, "NO-TOUCH"):
		c.simple("OK")
	default:
		c.unknownSubcommand(sub, "CLIENT")
	}
}

// infoSections are INFO's sections, in order.
var infoSections = []string{"server", "memory", "stats", "commandstats", "keyspace"}

// cmdInfo answers INFO [section ...]: the sections named (all of them when
// none is, or for all, everything or default).
func cmdInfo(c *client, a [][]byte) {
	want := map[string]bool{}
	for _, w := range a[1:] {
		sec := strings.ToLower(string(w))
		if sec == "all" || sec == "everything" || sec == "default" {
			want = map[string]bool{}
			break
		}
		want[sec] = true
	}
	var b bytes.Buffer
	s := c.srv
	for _, sec := range infoSections {
		if len(want) > 0 && !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		switch sec {
		case "server":
			b.WriteString("# Server\r\nredis_version:7.2.0\r\nredis_mode:standalone\r\npacer_embedded:1\r\n")
			b.WriteString("faults:" + s.cfg.Faults.String() + "\r\n")
		case "memory":
			b.WriteString("# Memory\r\nused_memory:" + strconv.FormatInt(s.used, 10) + "\r\n")
			b.WriteString("maxmemory:" + strconv.FormatInt(s.cfg.MaxMemory, 10) + "\r\nmaxmemory_policy:noeviction\r\n")
			b.WriteString("mem_clients_normal:" + strconv.FormatInt(s.clientMem.Load(), 10) + "\r\n")
		case "stats":
			b.WriteString("# Stats\r\ntotal_commands_processed:" + strconv.FormatUint(s.processed.Load(), 10) + "\r\n")
		case "commandstats":
			s.writeCommandstats(&b)
		case "keyspace":
			b.WriteString("# Keyspace\r\n")
			for i, db := range s.dbs {
				if len(db) > 0 {
					b.WriteString("db" + strconv.Itoa(i) + ":keys=" + strconv.Itoa(len(db)) + ",expires=0,avg_ttl=0\r\n")
				}
			}
		}
	}
	c.bulk(b.Bytes())
}

// cmdCommand answers COMMAND, COMMAND COUNT, COMMAND INFO, COMMAND LIST
// and COMMAND DOCS (empty: the target has no docs) from the table.
func cmdCommand(c *client, a [][]byte) {
	if len(a) == 1 {
		c.array(len(commandTable))
		for i := range commandTable {
			c.commandInfo(&commandTable[i])
		}
		return
	}
	switch sub := a[1]; {
	case is(sub, "COUNT"):
		c.integer(int64(len(commandTable)))
	case is(sub, "LIST"):
		c.array(len(commandTable))
		for _, cmd := range commandTable {
			c.bulkString(cmd.name)
		}
	case is(sub, "INFO"):
		c.array(len(a) - 2)
		for _, name := range a[2:] {
			if i, ok := findCommand(name); ok {
				c.commandInfo(&commandTable[i])
			} else {
				c.nullArray()
			}
		}
	case is(sub, "DOCS"):
		c.mapHeader(0)
	default:
		c.unknownSubcommand(sub, "COMMAND")
	}
}

// commandInfo is one command's entry in COMMAND's reply, Redis 7's ten
// fields (ACL categories, tips, key specs and subcommands empty).
func (c *client) commandInfo(cmd *command) {
	c.array(10)
	c.bulkString(cmd.name)
	c.integer(int64(cmd.arity))
	n := 0
	for bit := range flagNames {
		if cmd.flags&(1<<bit) != 0 {
			n++
		}
	}
	c.setHeader(n)
	for bit, name := range flagNames {
		if cmd.flags&(1<<bit) != 0 {
			c.simple(name)
		}
	}
	c.integer(int64(cmd.firstKey))
	c.integer(int64(cmd.lastKey))
	c.integer(int64(cmd.step))
	c.setHeader(0)
	c.setHeader(0)
	c.array(0)
	c.array(0)
}

// Keyspace commands.

func cmdDel(c *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		if c.delKey(k) {
			n++
		}
	}
	c.integer(int64(n))
}

func cmdExists(c *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		if _, ok := c.keys()[string(k)]; ok {
			n++
		}
	}
	c.integer(int64(n))
}

func cmdType(c *client, a [][]byte) {
	if o := c.keys()[string(a[1])]; o != nil {
		c.simple(o.typeName())
	} else {
		c.simple("none")
	}
}

// Strings.

func cmdGet(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 's'); !ok {
	} else if o == nil {
		c.null()
	} else {
		c.bulk(o.str)
	}
}

func cmdSet(c *client, args [][]byte) {
	var nx, xx, get bool
	for i := 3; i < len(args); i++ {
		switch opt := args[i]; {
		case is(opt, "NX"):
			nx = true
		case is(opt, "XX"):
			xx = true
		case is(opt, "GET"):
			get = true
		case is(opt, "KEEPTTL"):
		case is(opt, "EX"), is(opt, "PX"), is(opt, "EXAT"), is(opt, "PXAT"):
			// Accepted; the embedded target keeps no expiry.
			if i+1 >= len(args) {
				c.errorRaw(errSyntax)
				return
			}
			if _, ok := parseInt(args[i+1]); !ok {
				c.errorRaw(errNotInt)
				return
			}
			i++
		default:
			c.errorRaw(errSyntax)
			return
		}
	}
	if nx && xx {
		c.errorRaw(errSyntax)
		return
	}
	old := c.keys()[string(args[1])]
	if get && old != nil && old.kind != 's' {
		c.errorRaw(errWrongType)
		return
	}
	if (nx && old != nil) || (xx && old == nil) {
		if get && old != nil {
			c.bulk(old.str)
		} else {
			c.null()
		}
		return
	}
	switch { // reply first: the old value's storage may be reused below
	case get && old != nil:
		c.bulk(old.str)
	case get:
		c.null()
	default:
		c.simple("OK")
	}
	if old != nil && old.kind == 's' {
		old.str = append(old.str[:0], args[2]...)
		c.resized(old)
	} else {
		c.setKey(args[1], &object{kind: 's', str: clone(args[2])})
	}
}

func cmdGetSet(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 's')
	if !ok {
		return
	}
	if o == nil {
		c.null()
	} else {
		c.bulk(o.str)
	}
	c.setKey(a[1], &object{kind: 's', str: clone(a[2])})
}

func cmdMSet(c *client, a [][]byte) {
	if len(a)%2 != 1 {
		c.wrongArgs("mset")
		return
	}
	for i := 1; i < len(a); i += 2 {
		c.setKey(a[i], &object{kind: 's', str: clone(a[i+1])})
	}
	c.simple("OK")
}

func cmdMGet(c *client, a [][]byte) {
	c.array(len(a) - 1)
	for _, k := range a[1:] {
		if o := c.keys()[string(k)]; o != nil && o.kind == 's' {
			c.bulk(o.str)
		} else {
			c.null()
		}
	}
}

func cmdIncrBy(c *client, a [][]byte) {
	by, ok := parseInt(a[2])
	if !ok {
		c.errorRaw(errNotInt)
		return
	}
	if a[0][0] == 'd' || a[0][0] == 'D' {
		if by == math.MinInt64 {
			c.errorf("ERR decrement would overflow")
			return
		}
		by = -by
	}
	c.incrBy(a[1], by)
}

func (c *client) incrBy(key []byte, by int64) {
	o, ok := c.lookup(key, 's')
	if !ok {
		return
	}
	cur := int64(0)
	if o != nil {
		if cur, ok = parseInt(o.str); !ok {
			c.errorRaw(errNotInt)
			return
		}
	}
	if (by > 0 && cur > math.MaxInt64-by) || (by < 0 && cur < math.MinInt64-by) {
		c.errorRaw(errOverflow)
		return
	}
	cur += by
	if o == nil {
		c.setKey(key, &object{kind: 's', str: strconv.AppendInt(nil, cur, 10)})
	} else {
		o.str = strconv.AppendInt(o.str[:0], cur, 10)
		c.resized(o)
	}
	c.integer(cur)
}

func cmdAppend(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 's')
	if !ok {
		return
	}
	if o != nil && len(o.str)+len(a[2]) > MaxBulkLen {
		c.errorRaw(errTooLong)
		return
	}
	if o == nil {
		o, _ = c.create(a[1], 's')
	}
	o.str = append(o.str, a[2]...)
	c.resized(o)
	c.integer(int64(len(o.str)))
}

func cmdStrlen(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 's'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(len(o.str)))
		}
	}
}

// Lists.

func cmdPush(c *client, a [][]byte) {
	o, ok := c.create(a[1], 'l')
	if !ok {
		return
	}
	left := a[0][0] == 'l' || a[0][0] == 'L'
	for _, v := range a[2:] {
		if left {
			o.list.pushFront(clone(v))
		} else {
			o.list.pushBack(clone(v))
		}
		o.bytes += int64(len(v))
	}
	c.resized(o)
	c.integer(int64(o.list.len()))
}

func cmdPop(c *client, a [][]byte) {
	if len(a) > 3 {
		c.wrongArgs(strings.ToLower(string(a[0])))
		return
	}
	count, withCount := 1, len(a) == 3
	if withCount {
		n, ok := parseInt(a[2])
		if !ok || n < 0 {
			c.errorRaw(errNotPositive)
			return
		}
		count = int(min(n, math.MaxInt32))
	}
	o, ok := c.lookup(a[1], 'l')
	if !ok {
		return
	}
	if o == nil {
		if withCount {
			c.nullArray()
		} else {
			c.null()
		}
		return
	}
	left := a[0][0] == 'l' || a[0][0] == 'L'
	take := func() []byte {
		var v []byte
		if left {
			v = o.list.popFront()
		} else {
			v = o.list.popBack()
		}
		o.bytes -= int64(len(v))
		return v
	}
	if !withCount {
		c.bulk(take())
	} else {
		n := min(count, o.list.len())
		c.array(n)
		for range n {
			c.bulk(take())
		}
	}
	c.resized(o)
	c.dropIfEmpty(a[1], o.list.len())
}

func cmdLLen(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'l'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(o.list.len()))
		}
	}
}

func cmdLRange(c *client, a [][]byte) {
	start64, ok1 := parseInt(a[2])
	stop64, ok2 := parseInt(a[3])
	if !ok1 || !ok2 {
		c.errorRaw(errNotInt)
		return
	}
	o, ok := c.lookup(a[1], 'l')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := int64(o.list.len())
	start, stop := start64, stop64
	if start < 0 {
		start = max(n+start, 0)
	}
	if stop < 0 {
		stop = n + stop
	}
	stop = min(stop, n-1)
	if start > stop || start >= n {
		c.array(0)
		return
	}
	c.array(int(stop - start + 1))
	for i := start; i <= stop; i++ {
		c.bulk(o.list.at(int(i)))
	}
}

// Sets.

func cmdSAdd(c *client, a [][]byte) {
	o, ok := c.create(a[1], 'S')
	if !ok {
		return
	}
	n := 0
	for _, m := range a[2:] {
		if _, there := o.set[string(m)]; !there {
			o.set[string(m)] = struct{}{}
			o.bytes += int64(len(m))
			n++
		}
	}
	c.resized(o)
	c.integer(int64(n))
}

func cmdSRem(c *client, a [][]byte) {
	o, ok := c.lookup(a[1], 'S')
	if !ok {
		return
	}
	n := 0
	if o != nil {
		for _, m := range a[2:] {
			if _, there := o.set[string(m)]; there {
				delete(o.set, string(m))
				o.bytes -= int64(len(m))
				n++
			}
		}
		c.resized(o)
		c.dropIfEmpty(a[1], len(o.set))
	}
	c.integer(int64(n))
}

func cmdSCard(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'S'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(len(o.set)))
		}
	}
}

func cmdSIsMember(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'S'); ok {
		there := false
		if o != nil {
			_, there = o.set[string(a[2])]
		}
		c.boolean(there)
	}
}

func cmdSMembers(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'S'); ok {
		if o == nil {
			c.setHeader(0)
			return
		}
		c.setHeader(len(o.set))
		for m := range o.set {
			c.bulkString(m)
		}
	}
}

func cmdSPop(c *client, a [][]byte) {
	if len(a) > 3 {
		c.errorRaw(errSyntax)
		return
	}
	o, ok := c.lookup(a[1], 'S')
	if !ok {
		return
	}
	if len(a) == 2 {
		if o == nil {
			c.null()
			return
		}
		for m := range o.set {
			delete(o.set, m)
			o.bytes -= int64(len(m))
			c.bulkString(m)
			break
		}
		c.resized(o)
		c.dropIfEmpty(a[1], len(o.set))
		return
	}
	n64, ok := parseInt(a[2])
	if !ok || n64 < 0 {
		c.errorRaw(errNotPositive)
		return
	}
	if o == nil {
		c.setHeader(0)
		return
	}
	n := int(min(n64, int64(len(o.set))))
	c.setHeader(n)
	for m := range o.set {
		if n == 0 {
			break
		}
		delete(o.set, m)
		o.bytes -= int64(len(m))
		c.bulkString(m)
		n--
	}
	c.resized(o)
	c.dropIfEmpty(a[1], len(o.set))
}

// Hashes.

func cmdHSet(c *client, a [][]byte) {
	if len(a)%2 != 0 {
		c.wrongArgs(strings.ToLower(string(a[0])))
		return
	}
	o, ok := c.create(a[1], 'h')
	if !ok {
		return
	}
	n := 0
	for i := 2; i < len(a); i += 2 {
		if old, there := o.hash[string(a[i])]; there {
			o.bytes -= int64(len(a[i]) + len(old))
		} else {
			n++
		}
		o.hash[string(a[i])] = clone(a[i+1])
		o.bytes += int64(len(a[i]) + len(a[i+1]))
	}
	c.resized(o)
	if is(a[0], "HMSET") {
		c.simple("OK")
	} else {
		c.integer(int64(n))
	}
}

func cmdHGet(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'h'); ok {
		var v []byte
		there := false
		if o != nil {
			v, there = o.hash[string(a[2])]
		}
		if there {
			c.bulk(v)
		} else {
			c.null()
		}
	}
}

func cmdHLen(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'h'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(len(o.hash)))
		}
	}
}

func cmdHGetAll(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'h'); ok {
		if o == nil {
			c.mapHeader(0)
			return
		}
		c.mapHeader(len(o.hash))
		for k, v := range o.hash {
			c.bulkString(k)
			c.bulk(v)
		}
	}
}

// Sorted sets.

func cmdZAdd(c *client, args [][]byte) {
	i := 2
	var nx, xx, ch bool
options:
	for ; i < len(args); i++ {
		switch opt := args[i]; {
		case is(opt, "NX"):
			nx = true
		case is(opt, "XX"):
			xx = true
		case is(opt, "CH"):
			ch = true
		case is(opt, "GT"), is(opt, "LT"), is(opt, "INCR"):
			c.errorf("ERR the embedded target does not support ZADD " + strings.ToUpper(string(opt)))
			return
		default:
			break options
		}
	}
	pairs := args[i:]
	if nx && xx {
		c.errorf("ERR XX and NX options at the same time are not compatible")
		return
	}
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		c.errorRaw(errSyntax)
		return
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, err := strconv.ParseFloat(string(pairs[2*j]), 64)
		if err != nil || math.IsNaN(f) {
			c.errorRaw(errNotFloat)
			return
		}
		scores[j] = f
	}
	o, ok := c.create(args[1], 'z')
	if !ok {
		return
	}
	added, changed := 0, 0
	for j, sc := range scores {
		m := string(pairs[2*j+1])
		old, there := o.zset.score[m]
		if (nx && there) || (xx && !there) {
			continue
		}
		if !there {
			added++
			o.bytes += int64(len(m))
		} else if old != sc {
			changed++
		} else {
			continue
		}
		o.zset.set(m, sc)
	}
	c.resized(o)
	c.dropIfEmpty(args[1], len(o.zset.score))
	if ch {
		c.integer(int64(added + changed))
	} else {
		c.integer(int64(added))
	}
}

func cmdZPopMin(c *client, a [][]byte) {
	if len(a) > 3 {
		c.errorRaw(errSyntax)
		return
	}
	count := int64(1)
	if len(a) == 3 {
		n, ok := parseInt(a[2])
		if !ok || n < 0 {
			c.errorRaw(errNotPositive)
			return
		}
		count = n
	}
	o, ok := c.lookup(a[1], 'z')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := int(min(count, int64(len(o.zset.score))))
	c.array(2 * n)
	for range n {
		m, sc := o.zset.popMin()
		o.bytes -= int64(len(m))
		c.bulkString(m)
		c.bulk(strconv.AppendFloat(nil, sc, 'g', 17, 64))
	}
	c.resized(o)
	c.dropIfEmpty(a[1], len(o.zset.score))
}

func cmdZCard(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'z'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(len(o.zset.score)))
		}
	}
}

func cmdZScore(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'z'); ok {
		if o == nil {
			c.null()
		} else if sc, there := o.zset.score[string(a[2])]; there {
			c.float(sc)
		} else {
			c.null()
		}
	}
}

// Streams.

func cmdXAdd(c *client, args [][]byte) {
	if len(args)%2 != 1 {
		c.wrongArgs("xadd")
		return
	}
	if string(args[2]) != "*" {
		c.errorf("ERR the embedded target only supports XADD with * IDs")
		return
	}
	o, ok := c.create(args[1], 'x')
	if !ok {
		return
	}
	ms := time.Now().UnixMilli()
	st := o.stream
	if ms > st.lastMs {
		st.lastMs, st.lastSeq = ms, 0
	} else {
		st.lastSeq++
	}
	st.n++
	id := strconv.AppendInt(nil, st.lastMs, 10)
	id = append(id, '-')
	id = strconv.AppendUint(id, st.lastSeq, 10)
	c.bulk(id)
}

func cmdXLen(c *client, a [][]byte) {
	if o, ok := c.lookup(a[1], 'x'); ok {
		if o == nil {
			c.integer(0)
		} else {
			c.integer(int64(o.stream.n))
		}
	}
}
