package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
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

func (m *Mix) pick(r *Rand) int {
	if len(m.entries) == 1 {
		return 0
	}
	w := r.Below(m.total)
	for i := range m.entries {
		if w < m.entries[i].cum {
			return i
		}
	}
	return len(m.entries) - 1
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

// Build compiles the recipe into a Mix.
func (r *Recipe) Build() (*Mix, error) {
	m := &Mix{}
	for _, it := range r.Items {
		var t *Template
		var err error
		if it.test != nil {
			t, err = it.test.Compile(r.Opts, false)
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
}

// ParseCustom reads one --command value: [NAME=]TEMPLATE, where TEMPLATE is
// split into arguments like a shell would (quotes group, backslash escapes).
func ParseCustom(s string) (Custom, error) {
	name, rest, ok := strings.Cut(s, "=")
	if ok && validName(name) && !strings.ContainsAny(name, " \t") {
		s = rest
	} else {
		name = ""
	}
	args, err := SplitArgs(s)
	if err != nil {
		return Custom{}, err
	}
	if len(args) == 0 {
		return Custom{}, fmt.Errorf("command %q is empty", s)
	}
	if name == "" {
		name = strings.ToLower(args[0])
	}
	return Custom{Name: name, Args: args, Weight: 1}, nil
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

// SplitArgs splits a command line into arguments: spaces separate, single
// and double quotes group, and a backslash escapes the next character
// (outside single quotes).
func SplitArgs(s string) ([]string, error) {
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

// ParseCommandsFile reads --commands: one template per line, an optional
// leading weight, "#" comments and blank lines ignored:
//
//	9 hot=GET key:__key__
//	1 SET key:__key__ __data__
func ParseCommandsFile(text string) ([]Custom, error) {
	var out []Custom
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		weight := uint64(1)
		if f := strings.Fields(line); len(f) > 1 {
			if w, err := strconv.ParseUint(f[0], 10, 32); err == nil {
				if w == 0 {
					return nil, fmt.Errorf("line %d: weight 0", n+1)
				}
				weight = w
				line = strings.TrimSpace(line[len(f[0]):])
			}
		}
		c, err := ParseCustom(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		c.Weight = weight
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no commands in the file")
	}
	return out, nil
}

// MixTests lists the catalogue names a --mix accepts: one per test.
func MixTests() []string {
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
func BuildRecipe(spec string, customs []Custom, o Options) (*Recipe, error) {
	r := &Recipe{Opts: o}
	byName := map[string]Custom{}
	for i, c := range customs {
		if _, dup := byName[c.Name]; dup {
			// Unnamed repeats of the same verb get a suffix.
			c.Name = fmt.Sprintf("%s%d", c.Name, i+1)
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
			return nil, fmt.Errorf("--mix %q: want NAME:WEIGHT,... with whole weights above 0, such as get:9,set:1", spec)
		}
		if seen[name] {
			return nil, fmt.Errorf("--mix %q names %s twice", spec, name)
		}
		seen[name] = true
		if c, ok := byName[name]; ok {
			r.Items = append(r.Items, RecipeItem{Name: name, Weight: weight, Args: c.Args})
			continue
		}
		t := testByMixName(strings.ToLower(name))
		if t == nil {
			return nil, fmt.Errorf("--mix: unknown command %q (catalogue: %s; or name a --command)", name, strings.Join(MixTests(), ", "))
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
