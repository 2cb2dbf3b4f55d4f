package scenarios

// What a replay may send. A production trace holds commands that would
// wreck the server under test or the measurement (FLUSHALL, SHUTDOWN,
// CLIENT PAUSE, MONITOR, ...): the Policy refuses them unless the user
// allows them by name, and drops what the user names to skip. Commands
// are named case-insensitively, by their name, or for container commands
// (CONFIG, CLUSTER, ACL, ...) by name and subcommand: "CONFIG SET".

import (
	"errors"
	"sort"
	"strings"
)

// Action is what a replay does with a command.
type Action uint8

const (
	// Replay sends the command.
	Replay Action = iota
	// Refuse stops the replay before it starts: the trace holds a command
	// the policy does not send unless allowed (--allow) or skipped (--skip).
	Refuse
	// Skip drops the command from the replay, counted.
	Skip
)

func (a Action) String() string {
	switch a {
	case Refuse:
		return "refuse"
	case Skip:
		return "skip"
	}
	return "replay"
}

// commandClass is what the table knows about one command name.
type commandClass struct {
	container bool   // the subcommand is part of the name
	refuse    string // why it is refused by default ("" if it is not)
	skip      string // why it is dropped by default ("" if it is not)
	blocking  bool
	pubsub    bool
	tx        bool
}

// commands is the table, by upper-case name ("CONFIG SET" for a
// subcommand). Checked against Redis 7.0's COMMAND INFO: every command
// flagged admin or in @dangerous was weighed. Beyond the obvious ones it
// refuses REPLCONF (a replica's side of replication), PFDEBUG and
// PFSELFTEST (admin-only HyperLogLog internals), CLIENT UNBLOCK (it ends
// another connection's blocking call), CLIENT REPLY (OFF and SKIP leave
// commands without replies: the replay counts one reply per command) and
// SCRIPT DEBUG (turns the connection into a Lua debugger session). It
// sends SORT, INFO, ROLE, LASTSAVE and the read-only admin subcommands
// (CONFIG GET, SLOWLOG GET, ...): they read, and load a server as
// production did.
var commands = func() map[string]commandClass {
	m := map[string]commandClass{}
	for _, n := range []string{"ACL", "CLIENT", "CLUSTER", "COMMAND", "CONFIG", "FUNCTION", "LATENCY",
		"MEMORY", "MODULE", "OBJECT", "PUBSUB", "SCRIPT", "SLOWLOG", "XGROUP", "XINFO"} {
		m[n] = commandClass{container: true}
	}
	mark := func(set func(*commandClass), names ...string) {
		for _, n := range names {
			c := m[n]
			set(&c)
			m[n] = c
		}
	}
	refuse := func(reason string, names ...string) { mark(func(c *commandClass) { c.refuse = reason }, names...) }
	refuse("deletes every key", "FLUSHALL", "FLUSHDB")
	refuse("stops the server", "SHUTDOWN")
	refuse("debugging commands can crash, freeze or corrupt the server", "DEBUG", "PFDEBUG")
	refuse("runs a CPU-heavy self-test", "PFSELFTEST")
	refuse("changes the server's configuration", "CONFIG SET", "CONFIG REWRITE", "CONFIG RESETSTAT")
	refuse("changes replication", "REPLICAOF", "SLAVEOF", "FAILOVER", "REPLCONF", "SYNC", "PSYNC")
	refuse("changes the cluster", "CLUSTER ADDSLOTS", "CLUSTER ADDSLOTSRANGE", "CLUSTER DELSLOTS",
		"CLUSTER DELSLOTSRANGE", "CLUSTER FAILOVER", "CLUSTER FORGET", "CLUSTER MEET", "CLUSTER REPLICATE",
		"CLUSTER RESET", "CLUSTER SETSLOT", "CLUSTER FLUSHSLOTS", "CLUSTER SET-CONFIG-EPOCH",
		"CLUSTER BUMPEPOCH", "CLUSTER SAVECONFIG")
	refuse("changes users and permissions", "ACL SETUSER", "ACL DELUSER", "ACL LOAD", "ACL SAVE")
	refuse("removes or stops scripts", "SCRIPT FLUSH", "SCRIPT KILL")
	refuse("makes the connection a Lua debugger", "SCRIPT DEBUG")
	refuse("removes, replaces or stops functions", "FUNCTION FLUSH", "FUNCTION DELETE", "FUNCTION LOAD",
		"FUNCTION RESTORE", "FUNCTION KILL")
	refuse("loads or unloads server code", "MODULE")
	refuse("streams every command back: it would measure itself", "MONITOR")
	refuse("writes the dataset to disk", "SAVE", "BGSAVE", "BGREWRITEAOF")
	refuse("scans every key and blocks the server meanwhile", "KEYS")
	refuse("swaps databases", "SWAPDB")
	refuse("stops or disconnects other clients", "CLIENT KILL", "CLIENT PAUSE", "CLIENT UNBLOCK")
	refuse("changes eviction for the connection", "CLIENT NO-EVICT")
	refuse("switches replies off: the replay counts one reply per command", "CLIENT REPLY")
	refuse("moves keys to another server", "MIGRATE")
	refuse("clears the server's diagnostics", "LATENCY RESET", "SLOWLOG RESET")

	skip := func(reason string, names ...string) { mark(func(c *commandClass) { c.skip = reason }, names...) }
	skip("credentials: MONITOR shows them redacted, a replay authenticates with its own", "AUTH", "HELLO")
	skip("the replay selects each connection's database from the trace", "SELECT")
	skip("would close or reset a replay connection", "QUIT", "RESET")

	mark(func(c *commandClass) { c.blocking = true }, "BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BZPOPMIN",
		"BZPOPMAX", "BZMPOP", "BLMPOP", "WAIT", "WAITAOF")
	mark(func(c *commandClass) { c.pubsub = true }, "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE",
		"UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE")
	mark(func(c *commandClass) { c.tx = true }, "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH")
	return m
}()

// maxNameLen bounds a command name (two words) as looked up; longer names
// are no command the table knows.
const maxNameLen = 64

// upper appends b in upper case (ASCII) to dst.
func upper(dst, b []byte) []byte {
	for _, c := range b {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// names fills buf with argv's upper-case name and returns it (one) and,
// for a container command with a subcommand, "NAME SUB" (two); nil when
// the name is too long to be known.
func names(buf *[maxNameLen]byte, argv [][]byte) (one, two []byte) {
	if len(argv) == 0 || len(argv[0]) > maxNameLen/2 {
		return nil, nil
	}
	one = upper(buf[:0], argv[0])
	if len(argv) > 1 && len(argv[1]) < maxNameLen/2 && commands[string(one)].container {
		two = upper(append(one, ' '), argv[1])
		one = two[:len(one)]
	}
	return one, two
}

// classOf looks argv up in the table: the subcommand's entry, then the
// command's.
func classOf(argv [][]byte) (sub, cmd commandClass) {
	var buf [maxNameLen]byte
	one, two := names(&buf, argv)
	if one == nil {
		return
	}
	if two != nil {
		sub = commands[string(two)]
	}
	return sub, commands[string(one)]
}

// AppendCommandName appends the name a summary counts argv by: the
// command's name in upper case, and for container commands the
// subcommand too ("CONFIG SET", "CLIENT SETNAME").
func AppendCommandName(dst []byte, argv [][]byte) []byte {
	if len(argv) == 0 {
		return dst
	}
	start := len(dst)
	dst = upper(dst, argv[0])
	if len(argv) > 1 && commands[string(dst[start:])].container {
		dst = upper(append(dst, ' '), argv[1])
	}
	return dst
}

// IsBlocking reports whether argv may block its connection waiting for
// data or replicas: BLPOP and its kin, WAIT, WAITAOF, and XREAD or
// XREADGROUP with BLOCK.
func IsBlocking(argv [][]byte) bool {
	if len(argv) == 0 {
		return false
	}
	if _, c := classOf(argv); c.blocking {
		return true
	}
	if !equalFold(argv[0], "XREAD") && !equalFold(argv[0], "XREADGROUP") {
		return false
	}
	// Options come before STREAMS; the keys and IDs after it could be
	// called BLOCK.
	for _, a := range argv[1:] {
		if equalFold(a, "STREAMS") {
			return false
		}
		if equalFold(a, "BLOCK") {
			return true
		}
	}
	return false
}

// IsPubSub reports whether argv subscribes or unsubscribes, turning the
// connection into (or out of) a subscriber. PUBLISH is a normal command.
func IsPubSub(argv [][]byte) bool {
	_, c := classOf(argv)
	return c.pubsub
}

// IsTransaction reports whether argv is MULTI, EXEC, DISCARD, WATCH or
// UNWATCH: commands whose meaning depends on the connection's other
// commands.
func IsTransaction(argv [][]byte) bool {
	_, c := classOf(argv)
	return c.tx
}

// IsSelect reports whether argv is SELECT. The replay drops SELECT lines
// (Policy skips them): every record carries its database and the driver
// selects it per connection.
func IsSelect(argv [][]byte) bool {
	return len(argv) > 0 && equalFold(argv[0], "SELECT")
}

// equalFold compares b with upper-case ASCII s, ignoring b's case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Policy decides which commands of a trace a replay sends. The zero value
// and a nil *Policy are the defaults: destructive and administrative
// commands refused, AUTH, HELLO, SELECT, QUIT and RESET skipped, the rest
// replayed.
type Policy struct {
	allow map[string]bool
	skip  map[string]bool
}

// newPolicy builds a policy from the names to allow (un-refuse, or send
// although skipped by default) and to skip (drop, refused or not). A name
// is a command ("KEYS") or a container command and its subcommand
// ("CONFIG SET"), in any case; a container's name alone covers all its
// subcommands. Skipping wins over allowing.
func newPolicy(allow, skip []string) (*Policy, error) {
	p := &Policy{}
	var err error
	if p.allow, err = nameSet("allow", allow); err != nil {
		return nil, err
	}
	if p.skip, err = nameSet("skip", skip); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePolicy is newPolicy for comma-separated lists, as --allow and
// --skip take them: "KEYS,CONFIG SET".
func ParsePolicy(allow, skip string) (*Policy, error) {
	return newPolicy(splitNames(allow), splitNames(skip))
}

func splitNames(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func nameSet(what string, list []string) (map[string]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]bool{}
	for _, n := range list {
		words := strings.Fields(strings.ToUpper(n))
		if len(words) == 0 || len(words) > 2 {
			return nil, errors.New("--" + what + ": " + quoteName(n) + " is not a command name (NAME or NAME SUBCOMMAND)")
		}
		name := strings.Join(words, " ")
		if len(name) > maxNameLen {
			return nil, errors.New("--" + what + ": " + quoteName(n) + " is longer than any command name")
		}
		if len(words) == 2 && !commands[words[0]].container {
			return nil, errors.New("--" + what + ": " + quoteName(n) + ": " + words[0] + " has no subcommands (name it alone)")
		}
		m[name] = true
	}
	return m, nil
}

func quoteName(s string) string { return excerpt([]byte(s)) }

// Classify decides what a replay does with argv, and why (a short reason
// for Refuse and Skip). It does not allocate.
func (p *Policy) Classify(argv [][]byte) (Action, string) {
	if len(argv) == 0 {
		return Refuse, "empty command"
	}
	var buf [maxNameLen]byte
	one, two := names(&buf, argv)
	if p != nil && p.skip != nil && (two != nil && p.skip[string(two)] || one != nil && p.skip[string(one)]) {
		return Skip, "--skip"
	}
	if one == nil {
		return Replay, ""
	}
	var sub commandClass
	if two != nil {
		sub = commands[string(two)]
	}
	cmd := commands[string(one)]
	allowed := p != nil && p.allow != nil && (two != nil && p.allow[string(two)] || p.allow[string(one)])
	if allowed {
		return Replay, ""
	}
	switch {
	case sub.refuse != "":
		return Refuse, sub.refuse
	case cmd.refuse != "":
		return Refuse, cmd.refuse
	case sub.skip != "":
		return Skip, sub.skip
	case cmd.skip != "":
		return Skip, cmd.skip
	}
	return Replay, ""
}

// refusedByDefault lists the names the default policy refuses, sorted.
func refusedByDefault() []string {
	var l []string
	for n, c := range commands {
		if c.refuse != "" {
			l = append(l, n)
		}
	}
	sort.Strings(l)
	return l
}
