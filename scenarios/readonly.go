package scenarios

import "strings"

// readOnlyCommands lists the commands Redis 7.0 flags "readonly" in COMMAND (a
// container's subcommand as "object|encoding", as COMMAND names it):
// they read and never write, so a replica can serve them. Checked against
// a real server's COMMAND by TestReadOnlyMatchesCommandInfo.
var readOnlyCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`bitcount bitfield_ro bitpos dbsize dump eval_ro evalsha_ro exists
		expiretime fcall_ro geodist geohash geopos georadius_ro georadiusbymember_ro geosearch get getbit
		getrange hexists hget hgetall hkeys hlen hmget hrandfield hscan hstrlen hvals keys lcs lindex llen
		lolwut lpos lrange memory|usage mget object|encoding object|freq object|idletime object|refcount
		pexpiretime pfcount pttl randomkey scan scard sdiff sinter sintercard sismember smembers smismember
		sort_ro srandmember sscan strlen substr sunion touch ttl type xinfo|consumers xinfo|groups
		xinfo|stream xlen xpending xrange xread xrevrange zcard zcount zdiff zinter zintercard zlexcount
		zmscore zrandmember zrange zrangebylex zrangebyscore zrank zrevrange zrevrangebylex
		zrevrangebyscore zrevrank zscan zscore zunion`) {
		m[n] = true
	}
	return m
}()

// ReadOnly reports whether the command of args (its words, the name
// first) only reads, by Redis 7.0's flags: known is false for a command
// the table does not hold (ask the server: COMMAND INFO). A container
// command (OBJECT, MEMORY, XINFO) is judged by its subcommand.
func ReadOnly(args []string) (readOnly, known bool) {
	if len(args) == 0 {
		return false, true // an inline command: PING
	}
	name := strings.ToLower(args[0])
	if containers[name] {
		if len(args) < 2 {
			return false, true
		}
		name += "|" + strings.ToLower(args[1])
	}
	if readOnlyCommands[name] {
		return true, true
	}
	return false, knownCommand(name)
}

// containers are the commands whose subcommand says whether they read.
var containers = map[string]bool{"object": true, "memory": true, "xinfo": true}

// knownCommand reports whether name is a command the table speaks for:
// one the catalogue sends, or a core command of Redis 7.0 that writes or
// administers (anything else may be a module's, whose flags the server
// knows).
func knownCommand(name string) bool {
	return writers[strings.SplitN(name, "|", 2)[0]]
}

// writers are Redis 7.0's core commands that are not read-only: the
// table knows they are not reads.
var writers = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`append bitfield blmove blmpop blpop brpop brpoplpush bzmpop bzpopmax
		bzpopmin copy decr decrby del eval evalsha expire expireat fcall flushall flushdb geoadd georadius
		georadiusbymember geosearchstore getdel getex getset hdel hincrby hincrbyfloat hmset hset hsetnx incr
		incrby incrbyfloat linsert lmove lmpop lpop lpush lpushx lrem lset ltrim migrate move mset msetnx
		persist pexpire pexpireat pfadd pfmerge psetex publish rename renamenx restore rpop rpoplpush rpush
		rpushx sadd sdiffstore set setbit setex setnx setrange sinterstore smove sort spop srem sunionstore
		swapdb unlink xack xadd xautoclaim xclaim xdel xgroup xreadgroup xsetid xtrim zadd zdiffstore zincrby
		zinterstore zmpop zpopmax zpopmin zrangestore zrem zremrangebylex zremrangebyrank zremrangebyscore
		zunionstore ping echo multi exec discard watch unwatch select auth hello client config info time
		command object memory xinfo`) {
		m[n] = true
	}
	return m
}()
