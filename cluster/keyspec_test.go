package cluster

import (
	"slices"
	"strings"
	"testing"
)

func TestKeyIndexes(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []int
		ok   bool
	}{
		// One comment per row: what the row shows.
		{"GET k", []int{1}, true},                                            // one key
		{"get k", []int{1}, true},                                            // names in any case
		{"MSET a 1 b 2", []int{1, 3}, true},                                  // every other argument
		{"OBJECT ENCODING k", []int{2}, true},                                // a subcommand's key, not the subcommand
		{"object freq k", []int{2}, true},                                    // in any case
		{"MEMORY USAGE k SAMPLES 5", []int{2}, true},                         // a subcommand with options
		{"XINFO STREAM s FULL", []int{2}, true},                              // a container's key
		{"OBJECT", nil, true},                                                // a container alone: an arity error, no keys
		{"OBJECT NOSUCH k", nil, false},                                      // an unknown subcommand
		{"CONFIG GET maxmemory", nil, true},                                  // a keyless subcommand
		{"ZUNIONSTORE d 2 a b WEIGHTS 1 2", []int{1, 3, 4}, true},            // a destination and a key count
		{"EVAL s 2 a b x", []int{3, 4}, true},                                // a script's keys
		{"EVAL s 0 x", nil, true},                                            // and none
		{"FCALL f 1 a x", []int{3}, true},                                    // a function's
		{"EVAL s x a", nil, false},                                           // a count that is not one
		{"EVAL s -1 a", nil, false},                                          // or negative
		{"XREAD COUNT 2 STREAMS a b 0 0", []int{4, 5}, true},                 // half the arguments after STREAMS
		{"XREADGROUP GROUP g c STREAMS a >", []int{5}, true},                 // after STREAMS
		{"GEORADIUS g 0 0 1 km STORE d", []int{1, 7}, true},                  // a keyword's key
		{"GEORADIUS g 0 0 1 km", []int{1}, true},                             // without it
		{"SORT l LIMIT 0 10 ALPHA", []int{1}, true},                          // SORT's key
		{"SORT l STORE d", nil, false},                                       // STORE is found by the server's code
		{"sort l by w_*", nil, false},                                        // and BY's patterns
		{"SORT_RO l GET #", nil, false},                                      // and GET's
		{"MIGRATE h 1 k 0 10", []int{3}, false},                              // MIGRATE's KEYS cannot be found
		{"SPUBLISH ch m", nil, true},                                         // a shard channel is not a key
		{"LMPOP 2 a b LEFT", []int{2, 3}, true},                              // a count first
		{"BLPOP a b 0", []int{1, 2}, true},                                   // all but the last
		{"NOSUCHCOMMAND k", nil, false},                                      // a command the table does not know
		{strings.Repeat("X", 40), nil, false},                                // a name longer than any
		{"", nil, false},                                                     // nothing
		{"RENAME a", []int{1}, true},                                         // too few arguments: those there
		{"ZUNIONSTORE d 5 a b", []int{1, 3, 4}, true},                        // a count past the end: those there
		{"SINTERCARD 2 a b LIMIT 1", []int{2, 3}, true},                      // a count at 1
		{"BITFIELD_RO k GET u8 0", []int{1}, true},                           // read-only variants
		{"GEOSEARCHSTORE d s FROMMEMBER m BYRADIUS 1 km", []int{1, 2}, true}, // two fixed keys
	} {
		got, ok := KeyIndexes(nil, bytesOf(strings.Fields(c.cmd)))
		if ok != c.ok || ok && !slices.Equal(got, c.want) {
			t.Errorf("%q: %v %v, want %v %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
	argv := bytesOf(strings.Fields("OBJECT ENCODING k"))
	dst := make([]int, 0, 8)
	if n := testing.AllocsPerRun(100, func() { dst, _ = KeyIndexes(dst, argv) }); n != 0 {
		t.Errorf("%.1f allocations", n)
	}
	argv = bytesOf(strings.Fields("ZUNIONSTORE d 2 a b"))
	if n := testing.AllocsPerRun(100, func() { dst, _ = KeyIndexes(dst, argv) }); n != 0 {
		t.Errorf("%.1f allocations with a key count", n)
	}
}

func TestParseSpecs(t *testing.T) {
	for _, bad := range []string{"x", "i0 r0,1,0", "i1 r0,0,0", "kX,0 r0,1,0", "i1 q0,1,0", "i1 r0,1", "i1 r0,1,0 odd"} {
		if _, err := parseSpecs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	s, err := parseSpecs("kSTREAMS,1 r-1,1,2; i2 n0,1,1 notkey; ? ?")
	if err != nil || len(s) != 3 || s[0].Keyword != "STREAMS" || s[0].Limit != 2 || !s[1].KeyNum || !s[1].NotKey || !s[2].Unknown {
		t.Errorf("%+v %v", s, err)
	}
}

// TestKeyPositionsOfSubcommands: a subcommand named with its command has
// the key table's positions, for routing a replay's kinds.
func TestKeyPositionsOfSubcommands(t *testing.T) {
	for _, c := range []struct {
		name string
		want KeySpec
		ok   bool
	}{
		{"OBJECT ENCODING", KeySpec{First: 2, Last: 2, Step: 1}, true},
		{"object freq", KeySpec{First: 2, Last: 2, Step: 1}, true},
		{"XGROUP CREATE", KeySpec{First: 2, Last: 2, Step: 1}, true},
		{"CONFIG GET", KeySpec{}, true},
		{"OBJECT NOSUCH", KeySpec{}, false},
		{"GET", KeySpec{First: 1, Last: 1, Step: 1}, true},
	} {
		if got, ok := KeyPositions(c.name); got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	for name, text := range keyTable {
		if cmd, sub, ok := strings.Cut(name, "|"); ok && text != "" {
			if s, ok := KeyPositions(cmd + " " + sub); !ok || s.First == 0 {
				t.Errorf("%s: %+v %v", name, s, ok)
			}
		}
	}
}
