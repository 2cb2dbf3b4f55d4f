package scenarios

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/internal/usage"
)

// Mix is a weighted set of templates sent from one timeline as one test.
// Each command's kind is its index here, so results can be kept per
// command.
type Mix struct {
	entries []mixEntry
	total   uint64
}

type mixEntry struct {
	name   string
	weight uint64
	cum    uint64
	t      *Template
}

// Single is a mix of one template.
func Single(t *Template) *Mix {
	return &Mix{entries: []mixEntry{{name: t.Name(), weight: 1, cum: 1, t: t}}, total: 1}
}

// Add appends a template with a weight.
func (m *Mix) Add(name string, weight uint64, t *Template) {
	m.total += weight
	m.entries = append(m.entries, mixEntry{name: name, weight: weight, cum: m.total, t: t})
}

// Len is the number of templates.
func (m *Mix) Len() int { return len(m.entries) }

// Name returns the name of entry i.
func (m *Mix) Name(i int) string { return m.entries[i].name }

// Names lists the entries' names, in kind order.
func (m *Mix) Names() []string {
	out := make([]string, len(m.entries))
	for i, e := range m.entries {
		out[i] = e.name
	}
	return out
}

// Share is entry i's expected fraction of the commands.
func (m *Mix) Share(i int) float64 { return float64(m.entries[i].weight) / float64(m.total) }

// Title names the mix as a test: "MIX get:9,set:1".
func (m *Mix) Title() string {
	parts := make([]string, len(m.entries))
	for i, e := range m.entries {
		parts[i] = e.name + ":" + strconv.FormatUint(e.weight, 10)
	}
	return "MIX " + strings.Join(parts, ",")
}

// pick draws an entry by weight: a binary search of the cumulative
// weights, so a mix of MaxTemplates costs ten steps, not a thousand.
func (m *Mix) pick(r *Rand) int {
	if len(m.entries) == 1 {
		return 0
	}
	w := r.Below(m.total)
	lo, hi := 0, len(m.entries)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if w < m.entries[mid].cum {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Recipe says how to build a mix: named templates (catalogue tests or
// custom commands) with weights. It compiles a fresh Mix per sender.
type Recipe struct {
	Items []RecipeItem
	Opts  Options
}

// RecipeItem is one weighted command of a recipe.
type RecipeItem struct {
	Name   string
	Weight uint64
	// Args is a custom command; nil for a catalogue test.
	Args []string
	test *Test
}

// Build compiles the recipe into a Mix. Weights must be 1 to MaxWeight and
// their total must fit in 64 bits.
func (r *Recipe) Build() (*Mix, error) {
	m := &Mix{}
	for _, it := range r.Items {
		if it.Weight == 0 || it.Weight > MaxWeight {
			return nil, fmt.Errorf("%s: weight %d: want a whole number from 1 to %d", it.Name, it.Weight, MaxWeight)
		}
		if _, carry := bits.Add64(m.total, it.Weight, 0); carry != 0 {
			return nil, fmt.Errorf("%s: the weights add up to more than %d", it.Name, uint64(math.MaxUint64))
		}
		var t *Template
		var err error
		if it.test != nil {
			t, err = it.test.Compile(r.Opts, r.Opts.Cluster)
		} else {
			t, err = Compile(it.Name, it.Args, r.Opts)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Name, err)
		}
		if t.hasKey && !r.Opts.random() {
			return nil, fmt.Errorf("%s: %w", it.Name, errNoKeyspace)
		}
		m.Add(it.Name, it.Weight, t)
	}
	return m, nil
}

// MaxCommandSize is the size in bytes of the largest encoded command the
// recipe can produce (RESP framing included, values of the largest size),
// computed without compiling, so a memory budget can be checked before
// any value is allocated.
func (r *Recipe) MaxCommandSize() int {
	size := r.Opts.sizes().Max()
	random := r.Opts.random()
	n := 0
	for _, it := range r.Items {
		args := it.Args
		if it.test != nil {
			if it.test.inline != "" {
				n = max(n, len(it.test.inline)+len("\r\n"))
				continue
			}
			args = it.test.expand(r.Opts, r.Opts.Cluster)
		}
		parsed := make([]arg, len(args))
		for i, a := range args {
			parsed[i] = parseArg(a, random)
		}
		n = max(n, commandLen(parsed, size))
	}
	return n
}

// Args returns each item's arguments in kind order, as Build compiles
// them (catalogue tests expanded, with their "{tag}" when Opts.Cluster);
// nil for a test sent inline.
func (r *Recipe) Args() [][]string {
	out := make([][]string, len(r.Items))
	for i, it := range r.Items {
		switch {
		case it.test == nil:
			out[i] = it.Args
		case it.test.inline == "":
			out[i] = it.test.expand(r.Opts, r.Opts.Cluster)
		}
	}
	return out
}

// Title names the test the recipe makes.
func (r *Recipe) Title() string {
	if len(r.Items) == 1 {
		if r.Items[0].test != nil {
			return r.Items[0].test.Title
		}
		return Title(r.Items[0].Args)
	}
	parts := make([]string, len(r.Items))
	for i, it := range r.Items {
		parts[i] = it.Name + ":" + strconv.FormatUint(it.Weight, 10)
	}
	return "MIX " + strings.Join(parts, ",")
}

// IDs of the tests a recipe makes that are not catalogue tests.
const (
	// CustomID is the ID of a test of one custom command.
	CustomID = "custom"
	// MixID is the ID of a test of several weighted commands.
	MixID = "mix"
)

// ID is the stable identifier of the test the recipe makes: the catalogue
// test's ID for one catalogue test (Test.ID), CustomID for one custom
// command, MixID for several commands.
func (r *Recipe) ID() string {
	if len(r.Items) == 1 {
		if r.Items[0].test != nil {
			return r.Items[0].test.ID()
		}
		return CustomID
	}
	return MixID
}

// Names lists the items' names in kind order.
func (r *Recipe) Names() []string {
	out := make([]string, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Name
	}
	return out
}

// Custom is a named custom template, from --command or --commands.
type Custom struct {
	Name   string
	Args   []string
	Weight uint64
	// Named is set when the user gave the name (NAME=TEMPLATE). Two named
	// templates may not share a name; an unnamed one is named after its
	// verb, with a suffix when that is taken (see BuildRecipe).
	Named bool
}

// Limits of templates and of a --commands file.
const (
	// MaxWeight is the largest weight of a template or --mix entry.
	MaxWeight = math.MaxUint32
	// MaxCommandsFileSize is the most a --commands file may hold.
	MaxCommandsFileSize = 1 << 20
	// MaxCommandLine is the longest line of a --commands file, in bytes.
	MaxCommandLine = 64 << 10
	// MaxTemplates is the most templates a --commands file may hold.
	MaxTemplates = 1000
)

// ParseCustom reads one --command value: [NAME=]TEMPLATE, where TEMPLATE is
// split into arguments like a shell would (quotes group, backslash escapes).
func ParseCustom(s string) (Custom, error) {
	name, rest, ok := strings.Cut(s, "=")
	if ok && validName(name) && !strings.ContainsAny(name, " \t") {
		s = rest
	} else {
		name = ""
	}
	args, err := splitArgs(s)
	if err != nil {
		return Custom{}, err
	}
	if len(args) == 0 {
		return Custom{}, fmt.Errorf("command %q is empty", s)
	}
	named := name != ""
	if !named {
		name = strings.ToLower(args[0])
	}
	return Custom{Name: name, Args: args, Weight: 1, Named: named}, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '-' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// splitArgs splits a command line into arguments: spaces separate, single
// and double quotes group, and a backslash escapes the next character
// (outside single quotes).
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inArg = true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// parseCommandsFile reads --commands: one template per line, an optional
// leading weight, "#" comments and blank lines ignored:
//
//	9 hot=GET key:__key__
//	1 SET key:__key__ __data__
//
// A leading field that starts like a number is a weight: it must be a
// whole number from 1 to MaxWeight. The text may hold at most
// MaxCommandsFileSize bytes, MaxCommandLine bytes a line and MaxTemplates
// templates; errors name the line.
func parseCommandsFile(text string) ([]Custom, error) {
	return readCommands(strings.NewReader(text))
}

// loadCommandsFile reads a --commands file with parseCommandsFile's rules.
// It reads at most MaxCommandsFileSize bytes (plus one, to tell), so
// /dev/zero, a FIFO or a huge file ends with an error, not an endless read;
// a cancelled ctx (the first Ctrl-C) ends a read that waits (a FIFO that
// no one writes) with internal/input's ErrInterrupted.
func loadCommandsFile(ctx context.Context, path string) ([]Custom, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := readCommands(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

func readCommands(r io.Reader) ([]Custom, error) {
	lr := &io.LimitedReader{R: r, N: MaxCommandsFileSize + 1}
	sc := bufio.NewScanner(lr)
	// Room for the longest line, its "\r\n" and one byte to tell.
	sc.Buffer(make([]byte, 0, 4096), MaxCommandLine+3)
	tooBig := fmt.Errorf("the file holds more than %d bytes (1 MiB, the limit)", MaxCommandsFileSize)
	var out []Custom
	n := 0
	for sc.Scan() {
		n++
		if lr.N == 0 {
			return nil, tooBig
		}
		line := strings.TrimSuffix(sc.Text(), "\r")
		if len(line) > MaxCommandLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes (64 KiB, the limit)", n, MaxCommandLine)
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		weight := uint64(1)
		if f := strings.Fields(line); weightLike(f[0]) {
			w, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil || w == 0 || w > MaxWeight {
				return nil, fmt.Errorf("line %d: weight %q: want a whole number from 1 to %d", n, f[0], uint64(MaxWeight))
			}
			if len(f) == 1 {
				return nil, fmt.Errorf("line %d: weight %s and no command", n, f[0])
			}
			weight = w
			line = strings.TrimSpace(line[len(f[0]):])
		}
		if len(out) == MaxTemplates {
			return nil, fmt.Errorf("line %d: more than %d templates (the limit)", n, MaxTemplates)
		}
		c, err := ParseCustom(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		c.Weight = weight
		out = append(out, c)
	}
	switch err := sc.Err(); {
	case lr.N == 0:
		return nil, tooBig
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("line %d: longer than %d bytes (64 KiB, the limit)", n+1, MaxCommandLine)
	case err != nil:
		return nil, err
	case len(out) == 0:
		return nil, errors.New("no commands in the file")
	}
	return out, nil
}

// weightLike reports whether a leading field is meant as a weight: it
// starts with a digit or a sign and a digit. No command does.
func weightLike(f string) bool {
	if f != "" && (f[0] == '+' || f[0] == '-') {
		f = f[1:]
	}
	return f != "" && f[0] >= '0' && f[0] <= '9'
}

// parseRatio turns memtier_benchmark's --ratio SET:GET (e.g. 1:10) into the
// equivalent --mix spec ("set:1,get:10"): catalogue SET and GET in those
// proportions. A zero side is left out ("0:1" is "get:1"); both zero is an
// error. memtier sends each connection's share as a fixed cycle (its SETs,
// then its GETs); a mix draws each command at random with those weights,
// so the proportions match over a run, not within every cycle.
func parseRatio(s string) (mix string, err error) {
	bad := usage.Option("ratio", "{ratio} %q: want SET:GET, whole numbers from 0 to %d not both 0, such as 1:10", s, uint64(MaxWeight))
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	sets, err1 := strconv.ParseUint(a, 10, 32)
	gets, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || sets+gets == 0 {
		return "", bad
	}
	var parts []string
	if sets > 0 {
		parts = append(parts, "set:"+strconv.FormatUint(sets, 10))
	}
	if gets > 0 {
		parts = append(parts, "get:"+strconv.FormatUint(gets, 10))
	}
	return strings.Join(parts, ","), nil
}

// MixNames lists the catalogue's test names a mix takes (get, set,
// lrange_100, …): one per test, in the suite's order.
func MixNames() []string { return mixTests() }

// mixTests lists the catalogue names a --mix accepts: one per test.
func mixTests() []string {
	var names []string
	for _, t := range Catalogue {
		if t.mix != "" {
			names = append(names, t.mix)
		}
	}
	return names
}

// BuildRecipe makes the recipe of a --mix spec ("get:9,set:1", names from
// the catalogue or from customs) or, with an empty spec, of the customs
// with their own weights.
//
// Names: two customs the user named alike (Named) are an error. An unnamed
// custom takes its verb as name, or when that is taken (by a named custom
// or an earlier one) the verb with the first free suffix from 2: SET, SET,
// SET are set, set2, set3. customs is not modified.
func BuildRecipe(spec string, customs []Custom, o Options) (*Recipe, error) {
	r := &Recipe{Opts: o}
	customs = slices.Clone(customs)
	taken := map[string]bool{}
	for _, c := range customs {
		if !c.Named {
			continue
		}
		if taken[c.Name] {
			return nil, fmt.Errorf("two templates are named %q: give each its own NAME=", c.Name)
		}
		taken[c.Name] = true
	}
	byName := map[string]Custom{}
	for i, c := range customs {
		if !c.Named {
			base := c.Name
			if base == "" && len(c.Args) > 0 {
				base = strings.ToLower(c.Args[0])
			}
			c.Name = base
			for n := 2; taken[c.Name]; n++ {
				c.Name = base + strconv.Itoa(n)
			}
			taken[c.Name] = true
			customs[i] = c
		}
		byName[c.Name] = c
	}
	if spec == "" {
		for _, c := range customs {
			r.Items = append(r.Items, RecipeItem{Name: c.Name, Weight: c.Weight, Args: c.Args})
		}
		return r, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(item), ":")
		weight, err := strconv.ParseUint(w, 10, 32)
		if !ok || err != nil || weight == 0 {
			return nil, usage.Option("mix", "{mix} %q: want NAME:WEIGHT,... with whole weights from 1 to %d, such as get:9,set:1", spec, uint64(MaxWeight))
		}
		if seen[name] {
			return nil, usage.Option("mix", "{mix} %q names %s twice", spec, name)
		}
		seen[name] = true
		if c, ok := byName[name]; ok {
			r.Items = append(r.Items, RecipeItem{Name: name, Weight: weight, Args: c.Args})
			continue
		}
		t := testByMixName(strings.ToLower(name))
		if t == nil {
			return nil, usage.Option("mix", "{mix}: unknown command %q (catalogue: %s; or name a {command})", name, strings.Join(mixTests(), ", "))
		}
		r.Items = append(r.Items, RecipeItem{Name: strings.ToLower(name), Weight: weight, test: t})
	}
	return r, nil
}

func testByMixName(name string) *Test {
	for i := range Catalogue {
		if Catalogue[i].mix != "" && Catalogue[i].mix == name {
			return &Catalogue[i]
		}
	}
	return nil
}

// TestRecipe is the recipe of one catalogue test.
func TestRecipe(t Test, o Options) *Recipe {
	name := t.mix
	if name == "" {
		name = "lpush"
	}
	return &Recipe{Opts: o, Items: []RecipeItem{{Name: name, Weight: 1, test: &t}}}
}
