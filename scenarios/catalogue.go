package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// Test is one entry of redis-benchmark's default suite.
type Test struct {
	// Title is what redis-benchmark prints, e.g. "LRANGE_100 (first 100 elements)".
	Title string
	// selectors are the -t names that select the test.
	selectors []string
	// mix is its name in --mix ("" for the LPUSH that feeds LRANGE).
	mix string
	// id is its ID when that is not its mix name.
	id string
	// inline is set for tests sent in the inline protocol.
	inline string
	// args use two markers: keyTag, replaced by ":{tag}" in cluster mode and
	// removed otherwise, and DataPlaceholder.
	args []string
}

// keyTag marks where redis-benchmark inserts ":{tag}" in cluster mode.
const keyTag = "<tag>"

// scorePlaceholder is ZADD's score: "0", or __rand_int__ with -r.
const scorePlaceholder = "<score>"

// Catalogue is redis-benchmark 7.2's default suite, in its order, with its
// titles, commands and key names.
var Catalogue = []Test{
	{Title: "PING_INLINE", mix: "ping_inline", selectors: []string{"ping_inline", "ping"}, inline: "PING"},
	{Title: "PING_MBULK", mix: "ping_mbulk", selectors: []string{"ping_mbulk", "ping"}, args: []string{"PING"}},
	{Title: "SET", mix: "set", selectors: []string{"set"}, args: []string{"SET", "key" + keyTag + ":__rand_int__", DataPlaceholder}},
	{Title: "GET", mix: "get", selectors: []string{"get"}, args: []string{"GET", "key" + keyTag + ":__rand_int__"}},
	{Title: "INCR", mix: "incr", selectors: []string{"incr"}, args: []string{"INCR", "counter" + keyTag + ":__rand_int__"}},
	{Title: "LPUSH", mix: "lpush", selectors: []string{"lpush"}, args: []string{"LPUSH", "mylist" + keyTag, DataPlaceholder}},
	{Title: "RPUSH", mix: "rpush", selectors: []string{"rpush"}, args: []string{"RPUSH", "mylist" + keyTag, DataPlaceholder}},
	{Title: "LPOP", mix: "lpop", selectors: []string{"lpop"}, args: []string{"LPOP", "mylist" + keyTag}},
	{Title: "RPOP", mix: "rpop", selectors: []string{"rpop"}, args: []string{"RPOP", "mylist" + keyTag}},
	{Title: "SADD", mix: "sadd", selectors: []string{"sadd"}, args: []string{"SADD", "myset" + keyTag, "element:__rand_int__"}},
	{Title: "HSET", mix: "hset", selectors: []string{"hset"}, args: []string{"HSET", "myhash" + keyTag, "element:__rand_int__", DataPlaceholder}},
	{Title: "SPOP", mix: "spop", selectors: []string{"spop"}, args: []string{"SPOP", "myset" + keyTag}},
	{Title: "ZADD", mix: "zadd", selectors: []string{"zadd"}, args: []string{"ZADD", "myzset" + keyTag, scorePlaceholder, "element:__rand_int__"}},
	{Title: "ZPOPMIN", mix: "zpopmin", selectors: []string{"zpopmin"}, args: []string{"ZPOPMIN", "myzset" + keyTag}},
	{Title: "LPUSH (needed to benchmark LRANGE)", mix: "", id: "lpush_for_lrange", selectors: []string{"lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"}, args: []string{"LPUSH", "mylist" + keyTag, DataPlaceholder}},
	{Title: "LRANGE_100 (first 100 elements)", mix: "lrange_100", selectors: []string{"lrange", "lrange_100"}, args: []string{"LRANGE", "mylist" + keyTag, "0", "99"}},
	{Title: "LRANGE_300 (first 300 elements)", mix: "lrange_300", selectors: []string{"lrange", "lrange_300"}, args: []string{"LRANGE", "mylist" + keyTag, "0", "299"}},
	{Title: "LRANGE_500 (first 500 elements)", mix: "lrange_500", selectors: []string{"lrange", "lrange_500"}, args: []string{"LRANGE", "mylist" + keyTag, "0", "499"}},
	{Title: "LRANGE_600 (first 600 elements)", mix: "lrange_600", selectors: []string{"lrange", "lrange_600"}, args: []string{"LRANGE", "mylist" + keyTag, "0", "599"}},
	{Title: "MSET (10 keys)", mix: "mset", selectors: []string{"mset"}, args: msetArgs()},
	{Title: "XADD", mix: "xadd", selectors: []string{"xadd"}, args: []string{"XADD", "mystream" + keyTag, "*", "myfield", DataPlaceholder}},
}

func msetArgs() []string {
	args := []string{"MSET"}
	for range 10 {
		args = append(args, "key"+keyTag+":__rand_int__", DataPlaceholder)
	}
	return args
}

// ID is the test's stable identifier (tests[].id in the JSON): its --mix
// name, such as "get" or "lrange_100", and "lpush_for_lrange" for the
// LPUSH that fills the list the LRANGE tests read. Unlike Title it never
// changes with the display.
func (t Test) ID() string {
	if t.id != "" {
		return t.id
	}
	return t.mix
}

// TestNames lists every name -t accepts.
func TestNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, t := range Catalogue {
		for _, s := range t.selectors {
			if !seen[s] {
				seen[s] = true
				names = append(names, s)
			}
		}
	}
	sort.Strings(names)
	return names
}

// Select returns the tests chosen by a -t list, in the suite's order, as
// redis-benchmark does: names are case-insensitive and comma-separated, and
// "ping" or "lrange" select a family. An empty list selects the whole suite.
// Unlike redis-benchmark, which silently runs nothing for a misspelt name,
// an unknown name is an error.
func Select(list string) ([]Test, error) {
	if strings.TrimSpace(list) == "" {
		return Catalogue, nil
	}
	want := map[string]bool{}
	known := map[string]bool{}
	for _, n := range TestNames() {
		known[n] = true
	}
	for _, n := range strings.Split(strings.ToLower(list), ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !known[n] {
			return nil, fmt.Errorf("unknown test %q in -t (known: %s)", n, strings.Join(TestNames(), ", "))
		}
		want[n] = true
	}
	var out []Test
	for _, t := range Catalogue {
		for _, s := range t.selectors {
			if want[s] {
				out = append(out, t)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-t %q selects no test", list)
	}
	return out, nil
}

// Compile builds the test's template. cluster inserts redis-benchmark's
// ":{tag}" hash tag after each key prefix.
func (t Test) Compile(o Options, cluster bool) (*Template, error) {
	if t.inline != "" {
		return Inline(t.Title, t.inline, o), nil
	}
	return Compile(t.Title, t.expand(o, cluster), o)
}

// expand returns the test's arguments with its markers replaced.
func (t Test) expand(o Options, cluster bool) []string {
	tag := ""
	if cluster {
		tag = ":{tag}"
	}
	score := "0"
	if o.random() {
		score = RandPlaceholder
	}
	args := make([]string, len(t.args))
	for i, a := range t.args {
		a = strings.ReplaceAll(a, keyTag, tag)
		a = strings.ReplaceAll(a, scorePlaceholder, score)
		args[i] = a
	}
	return args
}
