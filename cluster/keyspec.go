package cluster

// Where a command's keys are, by Redis 7's key specifications: every
// command and subcommand of the table (keytable.go) with its specs, and
// KeyIndexes, which finds the keys of one command's arguments as the
// server does. The legacy first/last/step triple (KeySpec) cannot say
// where the keys of ZUNIONSTORE, XREAD, EVAL or OBJECT ENCODING are; the
// specs can.

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is one key specification of a command: where the search for its
// keys begins (an argument's index, or the argument after a keyword) and
// how the keys are found from there (a range, or a count given in the
// arguments). Indexes count argv[0], the command's name, as 0.
type Spec struct {
	// Begin: Index > 0 is the argument the keys start at; else Keyword
	// is searched for from argument StartFrom (negative: counted from the
	// end, searching backwards) and the keys start after it. Neither:
	// the table cannot say where the keys are (Unknown).
	Index     int
	Keyword   string
	StartFrom int
	// Find: KeyNum false is a range: the last key is LastKey after the
	// first (negative: counted from the end; with Limit, the keys are the
	// first 1/Limit of the rest), every KeyStep. KeyNum true: the number
	// of keys is the argument at KeyNumIdx (from the beginning), the keys
	// start at FirstKey (from the beginning) every KeyStep.
	KeyNum                  bool
	LastKey, KeyStep, Limit int
	KeyNumIdx, FirstKey     int
	// Unknown says the table cannot find these keys (Redis's "unknown"
	// search, or a spec it marks incomplete); NotKey that the arguments
	// found are not keys (shard channels, which only route).
	Unknown, NotKey bool
}

// command is an entry of the table: its specs, or its subcommands.
type command struct {
	name  string
	specs []Spec
	subs  map[string]*command
	// moreKeys finds keys the specs leave to the server's own code (SORT's
	// STORE, BY and GET): false when argv uses them.
	moreKeys func(argv [][]byte) bool
}

// commandTable is keyTable parsed, by upper-case name.
var commandTable = func() map[string]*command {
	m := map[string]*command{}
	for name, text := range keyTable {
		specs, err := parseSpecs(text)
		if err != nil {
			panic("cluster: keyTable " + name + ": " + err.Error())
		}
		parent, sub, isSub := strings.Cut(name, "|")
		if !isSub {
			c := m[name]
			if c == nil {
				c = &command{name: name}
				m[name] = c
			}
			if text == "+" {
				if c.subs == nil {
					c.subs = map[string]*command{}
				}
			} else {
				c.specs = specs
			}
			continue
		}
		p := m[parent]
		if p == nil {
			p = &command{name: parent}
			m[parent] = p
		}
		if p.subs == nil {
			p.subs = map[string]*command{}
		}
		p.subs[sub] = &command{name: parent + " " + sub, specs: specs}
	}
	for _, n := range []string{"SORT", "SORT_RO"} {
		if c := m[n]; c != nil {
			c.moreKeys = sortOptionsFree
		}
	}
	return m
}()

// sortOptionsFree says a SORT uses none of the options whose keys only the
// server's code finds: STORE (a key), BY and GET (patterns of key names).
// An argument equal to one of them that is a value (LIMIT's) counts too:
// the caller then refuses a command it could have handled.
func sortOptionsFree(argv [][]byte) bool {
	for _, a := range argv[min(2, len(argv)):] {
		if equalFoldASCII(a, "STORE") || equalFoldASCII(a, "BY") || equalFoldASCII(a, "GET") {
			return false
		}
	}
	return true
}

// parseSpecs reads a table entry: "" (no keys), "+" (subcommands), or
// specs separated by "; ", each "BEGIN FIND [FLAG...]": BEGIN is iN (the
// index) or kKEYWORD,START, FIND is rLAST,STEP,LIMIT or nIDX,FIRST,STEP,
// either may be ? (unknown); the flags are incomplete and notkey.
func parseSpecs(text string) ([]Spec, error) {
	if text == "" || text == "+" {
		return nil, nil
	}
	var out []Spec
	for _, part := range strings.Split(text, "; ") {
		f := strings.Fields(part)
		if len(f) < 2 {
			return nil, fmt.Errorf("%q: want BEGIN FIND [FLAGS]", part)
		}
		var s Spec
		switch b := f[0]; {
		case b == "?":
			s.Unknown = true
		case b[0] == 'i':
			n, err := strconv.Atoi(b[1:])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q: bad index", part)
			}
			s.Index = n
		case b[0] == 'k':
			kw, start, ok := strings.Cut(b[1:], ",")
			n, err := strconv.Atoi(start)
			if !ok || kw == "" || err != nil || n == 0 {
				return nil, fmt.Errorf("%q: bad keyword", part)
			}
			s.Keyword, s.StartFrom = kw, n
		default:
			return nil, fmt.Errorf("%q: bad begin", part)
		}
		if fk := f[1]; fk == "?" {
			s.Unknown = true
		} else {
			nums := strings.Split(fk[1:], ",")
			if len(nums) != 3 || fk[0] != 'r' && fk[0] != 'n' {
				return nil, fmt.Errorf("%q: bad find", part)
			}
			var v [3]int
			for i, x := range nums {
				n, err := strconv.Atoi(x)
				if err != nil {
					return nil, fmt.Errorf("%q: bad find", part)
				}
				v[i] = n
			}
			if fk[0] == 'r' {
				s.LastKey, s.KeyStep, s.Limit = v[0], v[1], v[2]
			} else {
				s.KeyNum, s.KeyNumIdx, s.FirstKey, s.KeyStep = true, v[0], v[1], v[2]
			}
			if s.KeyStep < 1 || s.Limit < 0 {
				return nil, fmt.Errorf("%q: bad step or limit", part)
			}
		}
		for _, flag := range f[2:] {
			switch flag {
			case "incomplete":
				s.Unknown = true
			case "notkey":
				s.NotKey = true
			default:
				return nil, fmt.Errorf("%q: unknown flag %q", part, flag)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// maxCommandName bounds a command's name as looked up: longer names are
// no command of the table.
const maxCommandName = 32

// lookupCommand finds argv's entry, its subcommand's for a command that
// has them; nil for a name the table does not know. sub is false when
// the command has subcommands and argv names none.
func lookupCommand(argv [][]byte) (c *command, sub bool) {
	if len(argv) == 0 {
		return nil, false
	}
	var buf [maxCommandName]byte
	name, ok := upperInto(&buf, argv[0])
	if !ok {
		return nil, false
	}
	c = commandTable[string(name)]
	if c == nil || c.subs == nil {
		return c, true
	}
	if len(argv) < 2 {
		return c, false
	}
	if name, ok = upperInto(&buf, argv[1]); !ok {
		return nil, false
	}
	return c.subs[string(name)], true
}

func upperInto(buf *[maxCommandName]byte, b []byte) ([]byte, bool) {
	if len(b) > len(buf) {
		return nil, false
	}
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(b)], true
}

// KeyIndexes appends to dst[:0] the indexes in argv of its keys, as the
// server finds them from its key specifications, in the order of the
// specs (an argument twice when two specs find it). ok is false when the
// table cannot find them: a command (or subcommand) it does not know, a
// spec it cannot follow (SORT with STORE, BY or GET; MIGRATE's KEYS), or
// a key count that is not a count. Arguments the server would reject
// (too few, a range past the end) give the keys that are there. It does
// not allocate when dst has room.
func KeyIndexes(dst []int, argv [][]byte) (keys []int, ok bool) {
	dst = dst[:0]
	c, sub := lookupCommand(argv)
	switch {
	case c == nil:
		return dst, false
	case !sub: // a container without its subcommand: an arity error
		return dst, true
	}
	unknown := c.moreKeys != nil && !c.moreKeys(argv)
	argc := len(argv)
	for i := range c.specs {
		s := &c.specs[i]
		if s.Unknown {
			if c.moreKeys == nil || unknown {
				return dst, false
			}
			continue
		}
		if s.NotKey {
			continue
		}
		first := s.Index
		if first == 0 {
			first = keywordEnd(argv, s.Keyword, s.StartFrom)
			if first == 0 {
				continue // the keyword is not there: no keys from it
			}
		}
		var last, step int
		if !s.KeyNum {
			switch {
			case s.LastKey >= 0:
				last = first + s.LastKey
			case s.Limit == 0:
				last = argc + s.LastKey
			default:
				last = first + (argc-first)/s.Limit + s.LastKey
			}
			step = s.KeyStep
		} else {
			at := first + s.KeyNumIdx
			if at >= argc {
				return dst, false
			}
			n, err := strconv.Atoi(string(argv[at])) // no allocation: the conversion does not escape
			if err != nil || n < 0 || n > argc {
				return dst, false
			}
			first += s.FirstKey
			last = first + n - 1
			step = s.KeyStep
		}
		for i := first; i <= last && i < argc; i += step {
			dst = append(dst, i)
		}
	}
	return dst, true
}

// keywordEnd is the index after keyword in argv, searched from start
// (negative: from len(argv)+start, backwards), as the server searches;
// 0 when it is not found.
func keywordEnd(argv [][]byte, keyword string, start int) int {
	argc := len(argv)
	if start > 0 {
		// The last argument is not searched: no key could follow it.
		for i := start; i < argc-1; i++ {
			if equalFoldASCII(argv[i], keyword) {
				return i + 1
			}
		}
		return 0
	}
	for i := argc + start; i > 1 && i < argc; i-- {
		if equalFoldASCII(argv[i], keyword) {
			return i + 1
		}
	}
	return 0
}

// equalFoldASCII compares b with upper-case s, ignoring b's ASCII case.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// subcommandPositions is a subcommand's keys as a KeySpec, when its specs
// say one range from a fixed index (every keyed subcommand of Redis 7.0:
// OBJECT ENCODING k, XGROUP CREATE k g id, MEMORY USAGE k).
func subcommandPositions(cmd, sub string) (KeySpec, bool) {
	c, ok := lookupCommand([][]byte{[]byte(cmd), []byte(sub)})
	if c == nil || !ok {
		return KeySpec{}, false
	}
	var out KeySpec
	for _, s := range c.specs {
		if s.NotKey {
			continue
		}
		if out.First > 0 || s.Unknown || s.Index == 0 || s.KeyNum || s.LastKey < 0 && s.Limit > 0 {
			return KeySpec{}, false
		}
		out = KeySpec{First: s.Index, Last: s.Index + s.LastKey, Step: s.KeyStep}
		if s.LastKey < 0 {
			out.Last = s.LastKey
		}
	}
	return out, true
}
