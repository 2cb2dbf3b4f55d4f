package embedded

import (
	"bytes"
	"container/heap"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// object is a value in the keyspace.
type object struct {
	kind   byte // 's' string, 'l' list, 'S' set, 'h' hash, 'z' sorted set, 'x' stream
	str    []byte
	list   *deque
	set    map[string]struct{}
	hash   map[string][]byte
	zset   *zset
	stream *stream
}

func (o *object) typeName() string {
	return map[byte]string{'s': "string", 'l': "list", 'S': "set", 'h': "hash", 'z': "zset", 'x': "stream"}[o.kind]
}

// client is one connection's state.
type client struct {
	srv   *Server
	db    int
	proto int // 2 or 3 (HELLO 3)
	out   []byte
	name  string
}

const (
	errWrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	errNotInt    = "-ERR value is not an integer or out of range\r\n"
	errSyntax    = "-ERR syntax error\r\n"
	errNotFloat  = "-ERR value is not a valid float\r\n"
)

// Reply encoders.

func (c *client) simple(s string)   { c.out = append(append(append(c.out, '+'), s...), '\r', '\n') }
func (c *client) errorRaw(s string) { c.out = append(c.out, s...) }
func (c *client) errorf(msg string) { c.out = append(append(append(c.out, '-'), msg...), '\r', '\n') }
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
func (c *client) array(n int) {
	c.out = append(c.out, '*')
	c.out = strconv.AppendInt(c.out, int64(n), 10)
	c.out = append(c.out, '\r', '\n')
}
func (c *client) mapHeader(n int) {
	if c.proto == 3 {
		c.out = append(c.out, '%')
		c.out = strconv.AppendInt(c.out, int64(n), 10)
		c.out = append(c.out, '\r', '\n')
		return
	}
	c.array(2 * n)
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

func (c *client) wrongArgs(name []byte) {
	c.errorf("ERR wrong number of arguments for '" + strings.ToLower(string(name)) + "' command")
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
		c.keys()[string(key)] = o
	}
	return o, true
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// upper writes name in upper case into buf (commands are matched without
// allocating).
func upper(buf []byte, name []byte) []byte {
	buf = buf[:0]
	for _, ch := range name {
		if 'a' <= ch && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		buf = append(buf, ch)
	}
	return buf
}

// arity bounds the arguments (after the name) of the commands whose case
// does not check them itself; max -1 is unbounded.
var arity = map[string]struct{ min, max int }{
	"ECHO": {1, 1}, "GET": {1, 1}, "GETSET": {2, 2}, "MGET": {1, -1}, "APPEND": {2, 2}, "STRLEN": {1, 1},
	"DEL": {1, -1}, "UNLINK": {1, -1}, "EXISTS": {1, -1}, "TYPE": {1, 1},
	"LPUSH": {2, -1}, "RPUSH": {2, -1}, "LLEN": {1, 1},
	"SADD": {2, -1}, "SREM": {2, -1}, "SCARD": {1, 1}, "SISMEMBER": {2, 2}, "SMEMBERS": {1, 1},
	"HGET": {2, 2}, "HLEN": {1, 1}, "HGETALL": {1, 1}, "ZCARD": {1, 1}, "ZSCORE": {2, 2}, "XLEN": {1, 1},
	"SELECT": {1, 1}, "KEYS": {1, 1},
}

// exec runs one command and appends its reply; it reports QUIT.
func (c *client) exec(args [][]byte) bool {
	var nameBuf [16]byte
	name := upper(nameBuf[:], args[0])
	if len(name) > 16 {
		name = []byte(strings.ToUpper(string(args[0])))
	}
	st := c.srv.stats[string(name)]
	if st == nil {
		st = &cmdStat{}
		c.srv.stats[string(name)] = st
	}
	st.calls++
	a := args[1:]
	if ar, ok := arity[string(name)]; ok && (len(a) < ar.min || (ar.max >= 0 && len(a) > ar.max)) {
		c.wrongArgs(args[0])
		return false
	}
	switch string(name) {
	case "PING":
		switch len(a) {
		case 0:
			c.simple("PONG")
		case 1:
			c.bulk(a[0])
		default:
			c.wrongArgs(args[0])
		}
	case "ECHO":
		c.bulk(a[0])
	case "QUIT":
		c.simple("OK")
		return true
	case "SET":
		c.set(args)
	case "GET":
		if o, ok := c.lookup(a[0], 's'); !ok {
		} else if o == nil {
			c.null()
		} else {
			c.bulk(o.str)
		}
	case "GETSET":
		o, ok := c.lookup(a[0], 's')
		if !ok {
			return false
		}
		if o == nil {
			c.null()
		} else {
			c.bulk(o.str)
		}
		c.keys()[string(a[0])] = &object{kind: 's', str: clone(a[1])}
	case "MSET":
		if len(a) == 0 || len(a)%2 != 0 {
			c.wrongArgs(args[0])
			return false
		}
		for i := 0; i < len(a); i += 2 {
			c.keys()[string(a[i])] = &object{kind: 's', str: clone(a[i+1])}
		}
		c.simple("OK")
	case "MGET":
		c.array(len(a))
		for _, k := range a {
			if o := c.keys()[string(k)]; o != nil && o.kind == 's' {
				c.bulk(o.str)
			} else {
				c.null()
			}
		}
	case "INCR", "DECR", "INCRBY", "DECRBY":
		c.incr(string(name), args)
	case "APPEND":
		o, ok := c.create(a[0], 's')
		if ok {
			o.str = append(o.str, a[1]...)
			c.integer(int64(len(o.str)))
		}
	case "STRLEN":
		if o, ok := c.lookup(a[0], 's'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(len(o.str)))
			}
		}
	case "DEL", "UNLINK":
		n := 0
		for _, k := range a {
			if _, ok := c.keys()[string(k)]; ok {
				delete(c.keys(), string(k))
				n++
			}
		}
		c.integer(int64(n))
	case "EXISTS":
		n := 0
		for _, k := range a {
			if _, ok := c.keys()[string(k)]; ok {
				n++
			}
		}
		c.integer(int64(n))
	case "TYPE":
		if o := c.keys()[string(a[0])]; o != nil {
			c.simple(o.typeName())
		} else {
			c.simple("none")
		}
	case "LPUSH", "RPUSH":
		o, ok := c.create(a[0], 'l')
		if !ok {
			return false
		}
		for _, v := range a[1:] {
			if name[0] == 'L' {
				o.list.pushFront(clone(v))
			} else {
				o.list.pushBack(clone(v))
			}
		}
		c.integer(int64(o.list.len()))
	case "LPOP", "RPOP":
		c.pop(name[0] == 'L', args)
	case "LLEN":
		if o, ok := c.lookup(a[0], 'l'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(o.list.len()))
			}
		}
	case "LRANGE":
		c.lrange(args)
	case "SADD":
		o, ok := c.create(a[0], 'S')
		if !ok {
			return false
		}
		n := 0
		for _, m := range a[1:] {
			if _, there := o.set[string(m)]; !there {
				o.set[string(m)] = struct{}{}
				n++
			}
		}
		c.integer(int64(n))
	case "SREM":
		o, ok := c.lookup(a[0], 'S')
		if !ok {
			return false
		}
		n := 0
		if o != nil {
			for _, m := range a[1:] {
				if _, there := o.set[string(m)]; there {
					delete(o.set, string(m))
					n++
				}
			}
			c.dropIfEmpty(a[0], len(o.set))
		}
		c.integer(int64(n))
	case "SCARD":
		if o, ok := c.lookup(a[0], 'S'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(len(o.set)))
			}
		}
	case "SISMEMBER":
		if o, ok := c.lookup(a[0], 'S'); ok {
			there := false
			if o != nil {
				_, there = o.set[string(a[1])]
			}
			if there {
				c.integer(1)
			} else {
				c.integer(0)
			}
		}
	case "SMEMBERS":
		if o, ok := c.lookup(a[0], 'S'); ok {
			if o == nil {
				c.array(0)
				return false
			}
			c.array(len(o.set))
			for m := range o.set {
				c.bulkString(m)
			}
		}
	case "SPOP":
		c.spop(args)
	case "HSET", "HMSET":
		if len(a) < 3 || len(a)%2 != 1 {
			c.wrongArgs(args[0])
			return false
		}
		o, ok := c.create(a[0], 'h')
		if !ok {
			return false
		}
		n := 0
		for i := 1; i < len(a); i += 2 {
			if _, there := o.hash[string(a[i])]; !there {
				n++
			}
			o.hash[string(a[i])] = clone(a[i+1])
		}
		if name[1] == 'M' {
			c.simple("OK")
		} else {
			c.integer(int64(n))
		}
	case "HGET":
		if o, ok := c.lookup(a[0], 'h'); ok {
			if v, there := hashGet(o, a[1]); there {
				c.bulk(v)
			} else {
				c.null()
			}
		}
	case "HLEN":
		if o, ok := c.lookup(a[0], 'h'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(len(o.hash)))
			}
		}
	case "HGETALL":
		if o, ok := c.lookup(a[0], 'h'); ok {
			if o == nil {
				c.mapHeader(0)
				return false
			}
			c.mapHeader(len(o.hash))
			for k, v := range o.hash {
				c.bulkString(k)
				c.bulk(v)
			}
		}
	case "ZADD":
		c.zadd(args)
	case "ZPOPMIN":
		c.zpopmin(args)
	case "ZCARD":
		if o, ok := c.lookup(a[0], 'z'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(len(o.zset.score)))
			}
		}
	case "ZSCORE":
		if o, ok := c.lookup(a[0], 'z'); ok {
			if o == nil {
				c.null()
			} else if sc, there := o.zset.score[string(a[1])]; there {
				c.float(sc)
			} else {
				c.null()
			}
		}
	case "XADD":
		c.xadd(args)
	case "XLEN":
		if o, ok := c.lookup(a[0], 'x'); ok {
			if o == nil {
				c.integer(0)
			} else {
				c.integer(int64(o.stream.n))
			}
		}
	case "SELECT":
		n, err := strconv.Atoi(string(a[0]))
		if err != nil {
			c.errorRaw(errNotInt)
		} else if n < 0 || n >= len(c.srv.dbs) {
			c.errorf("ERR DB index is out of range")
		} else {
			c.db = n
			c.simple("OK")
		}
	case "DBSIZE":
		c.integer(int64(len(c.keys())))
	case "FLUSHDB":
		c.srv.dbs[c.db] = map[string]*object{}
		c.simple("OK")
	case "FLUSHALL":
		for i := range c.srv.dbs {
			c.srv.dbs[i] = map[string]*object{}
		}
		c.simple("OK")
	case "KEYS":
		c.keyList(string(a[0]))
	case "SCAN":
		// One pass: every matching key, cursor 0.
		pattern := "*"
		for i := 1; i+1 < len(a); i += 2 {
			if strings.EqualFold(string(a[i]), "MATCH") {
				pattern = string(a[i+1])
			}
		}
		c.array(2)
		c.bulkString("0")
		c.keyList(pattern)
	case "AUTH":
		c.errorf("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	case "HELLO":
		c.hello(a)
	case "CONFIG":
		c.config(a)
	case "CLIENT":
		c.clientCmd(a)
	case "INFO":
		c.info()
	case "COMMAND":
		if len(a) > 0 && strings.EqualFold(string(a[0]), "COUNT") {
			c.integer(0)
		} else {
			c.array(0)
		}
	case "TIME":
		now := time.Now()
		c.array(2)
		c.bulkString(strconv.FormatInt(now.Unix(), 10))
		c.bulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
	default:
		var b strings.Builder
		for _, x := range a {
			b.WriteString("'")
			b.Write(x)
			b.WriteString("' ")
		}
		c.errorf("ERR unknown command '" + string(args[0]) + "', with args beginning with: " + b.String())
	}
	return false
}

func hashGet(o *object, f []byte) ([]byte, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.hash[string(f)]
	return v, ok
}

func (c *client) dropIfEmpty(key []byte, n int) {
	if n == 0 {
		delete(c.keys(), string(key))
	}
}

func (c *client) set(args [][]byte) {
	if len(args) < 3 {
		c.wrongArgs(args[0])
		return
	}
	var nx, xx, get bool
	for i := 3; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GET":
			get = true
		case "KEEPTTL":
		case "EX", "PX", "EXAT", "PXAT":
			// Accepted; the embedded target keeps no expiry.
			if i+1 >= len(args) {
				c.errorRaw(errSyntax)
				return
			}
			if _, err := strconv.ParseInt(string(args[i+1]), 10, 64); err != nil {
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
	} else {
		c.keys()[string(args[1])] = &object{kind: 's', str: clone(args[2])}
	}
}

func (c *client) incr(name string, args [][]byte) {
	by := int64(1)
	switch name {
	case "INCR", "DECR":
		if len(args) != 2 {
			c.wrongArgs(args[0])
			return
		}
	default:
		if len(args) != 3 {
			c.wrongArgs(args[0])
			return
		}
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil {
			c.errorRaw(errNotInt)
			return
		}
		by = n
	}
	if name[0] == 'D' {
		by = -by
	}
	o, ok := c.create(args[1], 's')
	if !ok {
		return
	}
	cur := int64(0)
	if len(o.str) > 0 {
		n, err := strconv.ParseInt(string(o.str), 10, 64)
		if err != nil {
			c.errorRaw(errNotInt)
			return
		}
		cur = n
	}
	cur += by
	o.str = strconv.AppendInt(o.str[:0], cur, 10)
	c.integer(cur)
}

func (c *client) pop(left bool, args [][]byte) {
	if len(args) != 2 && len(args) != 3 {
		c.wrongArgs(args[0])
		return
	}
	count, withCount := 1, len(args) == 3
	if withCount {
		n, err := strconv.Atoi(string(args[2]))
		if err != nil || n < 0 {
			c.errorf("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	o, ok := c.lookup(args[1], 'l')
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
	take := func() []byte {
		if left {
			return o.list.popFront()
		}
		return o.list.popBack()
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
	c.dropIfEmpty(args[1], o.list.len())
}

func (c *client) lrange(args [][]byte) {
	if len(args) != 4 {
		c.wrongArgs(args[0])
		return
	}
	start, err1 := strconv.Atoi(string(args[2]))
	stop, err2 := strconv.Atoi(string(args[3]))
	if err1 != nil || err2 != nil {
		c.errorRaw(errNotInt)
		return
	}
	o, ok := c.lookup(args[1], 'l')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := o.list.len()
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
	c.array(stop - start + 1)
	for i := start; i <= stop; i++ {
		c.bulk(o.list.at(i))
	}
}

func (c *client) spop(args [][]byte) {
	if len(args) != 2 && len(args) != 3 {
		c.wrongArgs(args[0])
		return
	}
	o, ok := c.lookup(args[1], 'S')
	if !ok {
		return
	}
	if len(args) == 2 {
		if o == nil {
			c.null()
			return
		}
		for m := range o.set {
			delete(o.set, m)
			c.bulkString(m)
			break
		}
		c.dropIfEmpty(args[1], len(o.set))
		return
	}
	n, err := strconv.Atoi(string(args[2]))
	if err != nil || n < 0 {
		c.errorf("ERR value is out of range, must be positive")
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n = min(n, len(o.set))
	c.array(n)
	for m := range o.set {
		if n == 0 {
			break
		}
		delete(o.set, m)
		c.bulkString(m)
		n--
	}
	c.dropIfEmpty(args[1], len(o.set))
}

func (c *client) zadd(args [][]byte) {
	if len(args) < 4 {
		c.wrongArgs(args[0])
		return
	}
	i := 2
	var nx, xx, ch bool
	for ; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "NX":
			nx = true
			continue
		case "XX":
			xx = true
			continue
		case "CH":
			ch = true
			continue
		case "GT", "LT", "INCR":
			c.errorf("ERR the embedded target does not support ZADD " + strings.ToUpper(string(args[i])))
			return
		}
		break
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		c.errorRaw(errSyntax)
		return
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, err := strconv.ParseFloat(string(pairs[2*j]), 64)
		if err != nil {
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
		} else if old != sc {
			changed++
		} else {
			continue
		}
		o.zset.set(m, sc)
	}
	c.dropIfEmpty(args[1], len(o.zset.score))
	if ch {
		c.integer(int64(added + changed))
	} else {
		c.integer(int64(added))
	}
}

func (c *client) zpopmin(args [][]byte) {
	if len(args) != 2 && len(args) != 3 {
		c.wrongArgs(args[0])
		return
	}
	count := 1
	if len(args) == 3 {
		n, err := strconv.Atoi(string(args[2]))
		if err != nil || n < 0 {
			c.errorf("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	o, ok := c.lookup(args[1], 'z')
	if !ok {
		return
	}
	if o == nil {
		c.array(0)
		return
	}
	n := min(count, len(o.zset.score))
	c.array(2 * n)
	for range n {
		m, sc := o.zset.popMin()
		c.bulkString(m)
		c.bulk(strconv.AppendFloat(nil, sc, 'g', 17, 64))
	}
	c.dropIfEmpty(args[1], len(o.zset.score))
}

func (c *client) xadd(args [][]byte) {
	if len(args) < 5 || len(args)%2 != 1 {
		c.wrongArgs(args[0])
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

func (c *client) keyList(pattern string) {
	var keys []string
	for k := range c.keys() {
		if pattern == "*" {
			keys = append(keys, k)
		} else if ok, _ := path.Match(pattern, k); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	c.array(len(keys))
	for _, k := range keys {
		c.bulkString(k)
	}
}

func (c *client) hello(a [][]byte) {
	if len(a) > 0 {
		v, err := strconv.Atoi(string(a[0]))
		if err != nil || (v != 2 && v != 3) {
			c.errorf("NOPROTO unsupported protocol version")
			return
		}
		for i := 1; i < len(a); i++ {
			switch strings.ToUpper(string(a[i])) {
			case "AUTH":
				c.errorf("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
				return
			case "SETNAME":
				if i+1 < len(a) {
					c.name = string(a[i+1])
					i++
				}
			}
		}
		c.proto = v
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
var configValues = map[string]string{"save": "", "appendonly": "no", "maxmemory": "0", "databases": "16"}

func (c *client) config(a [][]byte) {
	if len(a) == 0 {
		c.errorf("ERR wrong number of arguments for 'config' command")
		return
	}
	switch strings.ToUpper(string(a[0])) {
	case "GET":
		var names []string
		for _, p := range a[1:] {
			for k := range configValues {
				if ok, _ := path.Match(strings.ToLower(string(p)), k); ok {
					names = append(names, k)
				}
			}
		}
		sort.Strings(names)
		c.mapHeader(len(names))
		for _, k := range names {
			c.bulkString(k)
			c.bulkString(configValues[k])
		}
	case "SET", "RESETSTAT":
		if strings.EqualFold(string(a[0]), "RESETSTAT") {
			c.srv.stats = map[string]*cmdStat{}
		}
		c.simple("OK")
	default:
		c.errorf("ERR unknown subcommand '" + string(a[0]) + "'")
	}
}

func (c *client) clientCmd(a [][]byte) {
	if len(a) == 0 {
		c.errorf("ERR wrong number of arguments for 'client' command")
		return
	}
	switch strings.ToUpper(string(a[0])) {
	case "SETNAME":
		if len(a) == 2 {
			c.name = string(a[1])
		}
		c.simple("OK")
	case "GETNAME":
		if c.name == "" {
			c.null()
		} else {
			c.bulkString(c.name)
		}
	case "ID":
		c.integer(1)
	case "TRACKING", "SETINFO", "REPLY", "NO-EVICT", "NO-TOUCH":
		c.simple("OK")
	default:
		c.errorf("ERR unknown subcommand '" + string(a[0]) + "'")
	}
}

func (c *client) info() {
	var b bytes.Buffer
	s := c.srv
	b.WriteString("# Server\r\nredis_version:7.2.0\r\npacer_embedded:1\r\n")
	b.WriteString("faults:" + s.cfg.Faults.String() + "\r\n")
	b.WriteString("\r\n# Stats\r\ntotal_commands_processed:" + strconv.FormatUint(s.processed.Load(), 10) + "\r\n")
	b.WriteString("\r\n# Commandstats\r\n")
	var names []string
	for n := range s.stats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("cmdstat_" + strings.ToLower(n) + ":calls=" + strconv.FormatUint(s.stats[n].calls, 10) + "\r\n")
	}
	b.WriteString("\r\n# Keyspace\r\n")
	for i, db := range s.dbs {
		if len(db) > 0 {
			b.WriteString("db" + strconv.Itoa(i) + ":keys=" + strconv.Itoa(len(db)) + ",expires=0,avg_ttl=0\r\n")
		}
	}
	c.bulk(b.Bytes())
}

// deque is a ring buffer of values: O(1) push and pop at both ends and
// O(1) indexing, for lists.
type deque struct {
	buf        [][]byte
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([][]byte, max(8, 2*len(d.buf)))
	for i := range d.size {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushFront(v []byte) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = v
	d.size++
}

func (d *deque) pushBack(v []byte) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = v
	d.size++
}

func (d *deque) popFront() []byte {
	v := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return v
}

func (d *deque) popBack() []byte {
	i := (d.head + d.size - 1) % len(d.buf)
	v := d.buf[i]
	d.buf[i] = nil
	d.size--
	return v
}

func (d *deque) at(i int) []byte { return d.buf[(d.head+i)%len(d.buf)] }

// zset keeps scores by member and a min-heap with lazy deletion for
// ZPOPMIN: an updated member leaves a stale heap entry that pops skip.
type zset struct {
	score map[string]float64
	h     zheap
}

func newZset() *zset { return &zset{score: map[string]float64{}} }

func (z *zset) set(m string, sc float64) {
	z.score[m] = sc
	heap.Push(&z.h, zentry{sc, m})
}

func (z *zset) popMin() (string, float64) {
	for {
		e := heap.Pop(&z.h).(zentry)
		if sc, ok := z.score[e.member]; ok && sc == e.score {
			delete(z.score, e.member)
			return e.member, e.score
		}
	}
}

type zentry struct {
	score  float64
	member string
}

type zheap []zentry

func (h zheap) Len() int { return len(h) }
func (h zheap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].member < h[j].member
}
func (h zheap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *zheap) Push(x any)   { *h = append(*h, x.(zentry)) }
func (h *zheap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// stream counts entries and hands out IDs; the embedded target does not
// keep entries (no XRANGE/XREAD).
type stream struct {
	n       int
	lastMs  int64
	lastSeq uint64
}
