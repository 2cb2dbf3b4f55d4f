package scenarios

// What a replay may send. A production trace holds commands that would
// wreck the server under test or the measurement (FLUSHALL, SHUTDOWN,
// CLIENT PAUSE, MONITOR, ...): the Policy refuses them unless the user
// allows them by name, and drops what the user names to skip. Commands
// are named case-insensitively, by their name, or for container commands
// (CONFIG, CLUSTER, ACL, ...) by name and subcommand: "CONFIG SET".
// A name with a NUL, a control byte or a blank is no name a flag can
// allow (the server's lookup may read it as another command's), and a
// script is judged by what it ran (ScanTrace).

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
	// Forbid stops the replay at the command's line whatever the flags
	// say: its name or subcommand holds a byte no command's name has (a
	// NUL, a control byte, a blank), and Redis looks names up in a way a
	// NUL can cut short: "FLUSHALL\x00N" can run as FLUSHALL.
	Forbid
)

func (a Action) String() string {
	switch a {
	case Refuse:
		return "refuse"
	case Skip:
		return "skip"
	case Forbid:
		return "forbid"
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
	script    bool // runs a script: its effects are the trace's lua lines
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
	mark(func(c *commandClass) { c.script = true }, scriptCalls...)
	return m
}()

// scriptCalls are the commands that run a script or a function.
var scriptCalls = []string{"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"}

// scriptsWord is the word --allow and --skip take for every script call.
const scriptsWord = "SCRIPTS"

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

// IsScriptCall reports whether argv runs a script or a function: EVAL,
// EVALSHA, FCALL and their read-only variants.
func IsScriptCall(argv [][]byte) bool {
	_, c := classOf(argv)
	return c.script
}

// oddName says what is wrong with argv's name, or with its subcommand for
// a container command: "" when nothing. A byte below '!' or DEL is in no
// command's name; Redis 7 compares names up to a NUL, so a name that
// holds one may run as the command before it.
func oddName(argv [][]byte) string {
	if len(argv) == 0 {
		return ""
	}
	if k := oddBytes(argv[0]); k != 0 {
		return oddWhy[0][k]
	}
	var buf [maxNameLen]byte
	if len(argv) > 1 && len(argv[0]) <= maxNameLen/2 && commands[string(upper(buf[:0], argv[0]))].container {
		if k := oddBytes(argv[1]); k != 0 {
			return oddWhy[1][k]
		}
	}
	return ""
}

// oddWhy words oddName's findings, for a name ([0]) and a subcommand
// ([1]), by oddBytes's kind.
var oddWhy = [2][4]string{
	{"", "the command's name holds a NUL byte (Redis may run it as the command before the NUL)",
		"the command's name holds a blank", "the command's name holds a control byte"},
	{"", "the subcommand holds a NUL byte (Redis may run it as the command before the NUL)",
		"the subcommand holds a blank", "the subcommand holds a control byte"},
}

// oddBytes finds the first byte of b no command's name has: 1 a NUL, 2 a
// blank, 3 another control byte; 0 none.
func oddBytes(b []byte) int {
	for _, c := range b {
		switch {
		case c == 0:
			return 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return 2
		case c < 0x20 || c == 0x7f:
			return 3
		}
	}
	return 0
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
// commands refused, AUTH, HELLO, SELECT, QUIT and RESET skipped, the
// commands scripts ran not sent (their call is), the rest replayed.
type Policy struct {
	allow map[string]bool
	skip  map[string]bool
	// allowScripts and skipScripts: "scripts" in --allow or --skip, for
	// every script call.
	allowScripts, skipScripts bool
	// effects sends the commands scripts ran too (--script-commands).
	effects bool
	// isolate refuses what reaches past a key prefix (WithKeyPrefix);
	// keysFound says whether the keys of a command can be found.
	isolate   bool
	keysFound func(argv [][]byte) bool
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
	p.allowScripts, p.skipScripts = p.allow[scriptsWord], p.skip[scriptsWord]
	return p, nil
}

// WithScriptCommands returns a copy of p (nil: the default) that also
// sends the commands scripts ran (MONITOR's lua lines), as commands of
// their own.
func (p *Policy) WithScriptCommands() *Policy {
	c := p.clone()
	c.effects = true
	return c
}

// WithKeyPrefix returns a copy of p (nil: the default) for a replay whose
// keys are prefixed: it also refuses, unless --allow names them, what
// reaches keys or databases a prefix cannot keep apart: script calls (a
// script reaches keys it is not given), MOVE, COPY with DB, and every
// command for which keysFound is false (its keys cannot be found).
func (p *Policy) WithKeyPrefix(keysFound func(argv [][]byte) bool) *Policy {
	c := p.clone()
	c.isolate, c.keysFound = true, keysFound
	return c
}

func (p *Policy) clone() *Policy {
	if p == nil {
		return &Policy{}
	}
	c := *p
	return &c
}

// SendsScriptCommands reports whether p sends the commands scripts ran.
func (p *Policy) SendsScriptCommands() bool { return p != nil && p.effects }

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
		if len(words) == 1 && words[0] == scriptsWord {
			m[name] = true // every script call: EVAL, EVALSHA, FCALL and their read-only variants
			continue
		}
		m[name] = true
	}
	return m, nil
}

func quoteName(s string) string { return excerpt([]byte(s)) }

// Decide is what a replay does with rec: a command a script ran is
// Forbid for a name no flag sends, else Skip unless p sends them
// (WithScriptCommands); any other command is Classify's.
func (p *Policy) Decide(rec *TraceRecord) (Action, string) {
	if rec.Effect && !p.SendsScriptCommands() {
		if why := oddName(rec.Argv); why != "" {
			return Forbid, why
		}
		return Skip, "run by a script"
	}
	return p.Classify(rec.Argv)
}

// Classify decides what a replay does with argv, and why (a short reason
// for Refuse, Skip and Forbid). It does not allocate.
func (p *Policy) Classify(argv [][]byte) (Action, string) {
	if len(argv) == 0 {
		return Refuse, "empty command"
	}
	if why := oddName(argv); why != "" {
		return Forbid, why
	}
	var buf [maxNameLen]byte
	one, two := names(&buf, argv)
	var sub, cmd commandClass
	if one != nil {
		if two != nil {
			sub = commands[string(two)]
		}
		cmd = commands[string(one)]
	}
	if p != nil && (p.skip != nil && (two != nil && p.skip[string(two)] || one != nil && p.skip[string(one)]) ||
		p.skipScripts && cmd.script) {
		return Skip, "--skip"
	}
	if p.allows(one, two, cmd) {
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
	if p != nil && p.isolate {
		if why := escapesPrefix(argv, cmd); why != "" {
			return Refuse, why
		}
		if p.keysFound != nil && !p.keysFound(argv) {
			return Refuse, "pacer cannot find its keys to put --key-prefix before them"
		}
	}
	return Replay, ""
}

// allows says whether --allow names the command.
func (p *Policy) allows(one, two []byte, cmd commandClass) bool {
	if p == nil || one == nil {
		return false
	}
	return p.allow != nil && (two != nil && p.allow[string(two)] || p.allow[string(one)]) || p.allowScripts && cmd.script
}

// AllowsScript says whether --allow names argv, a script call: it is then
// sent although the trace does not show what it ran.
func (p *Policy) AllowsScript(argv [][]byte) bool {
	var buf [maxNameLen]byte
	one, two := names(&buf, argv)
	_, cmd := classOf(argv)
	return cmd.script && p.allows(one, two, cmd)
}

// escapesPrefix says why argv would reach past a key prefix: keys it is
// not given, or another database.
func escapesPrefix(argv [][]byte, cmd commandClass) string {
	switch {
	case cmd.script:
		return "a script reaches keys it is not given: --key-prefix cannot keep it apart"
	case equalFold(argv[0], "MOVE"):
		return "moves a key to another database, which --key-prefix does not keep apart"
	case equalFold(argv[0], "COPY"):
		for _, a := range argv[min(3, len(argv)):] {
			if equalFold(a, "DB") {
				return "copies a key to another database, which --key-prefix does not keep apart"
			}
		}
	}
	return ""
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
