package scenarios

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// drawsFinish runs n draws of d in a goroutine and fails if they do not
// finish within a generous bound: a hang detector, not a speed check.
func drawsFinish(t *testing.T, name string, d KeyDist, keys uint64, n int) {
	t.Helper()
	const hang = 20 * time.Second
	done := make(chan error, 1)
	go func() {
		r := NewRand(1)
		for range n {
			if k := d.Draw(r); keys > 0 && k >= keys {
				done <- fmt.Errorf("draw %d outside [0, %d)", k, keys)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	case <-time.After(hang):
		t.Fatalf("%s: %d draws did not finish in %v (a draw loops)", name, n, hang)
	}
}

func TestHostileKeyDistsRefusedOrBounded(t *testing.T) {
	tests := []struct {
		spec    string
		keys    uint64
		refused bool // must be a usage error
	}{
		{"gaussian:99.6,0.001", 100, true},           // the keyspace holds ~0 of it: keys round to 100
		{"gaussian:50,1e300", 100, true},             // 100 keys out of a 1e300-wide bell
		{"gaussian:50%,inf", 100, true},              // not finite
		{"gaussian:50%,NaN", 100, true},              // not a number
		{"gaussian:inf,1", 100, true},                // mean not finite
		{"gaussian:NaN%,1", 100, true},               // percent not a number
		{"gaussian:50,-1", 100, true},                // SD below 0
		{"gaussian:50,0", 100, true},                 // SD 0
		{"gaussian:50,1e-320", 100, false},           // a spike on key 50: fine
		{"gaussian:0,1e-300", 1, false},              // one key
		{"gaussian:0,1e6", 1, true},                  // one key out of a million-wide bell
		{"gaussian:99.4,0.001", 100, false},          // rounds to 99, inside
		{"gaussian:50%,1e18", math.MaxUint64, false}, // huge keyspace
		{"gaussian:0,5e-324", math.MaxUint64, false},
		{"zipf:1e-300", math.MaxUint64, false},
		{"zipf:1e-300", 1, false},
		{"zipf:10", 1, false},
		{"zipf:10", math.MaxUint64, false},
		{"zipf:1", math.MaxUint64, false},
		{"zipf:0.999999999999", math.MaxUint64, false},
		{"zipf:1.000000000001", 2, false},
		{"zipf:11", 100, true},
		{"zipf:inf", 100, true},
		{"zipf:NaN", 100, true},
		{"uniform", math.MaxUint64, false},
		{"uniform", 1, false},
		{"sequential", math.MaxUint64, false},
	}
	for _, tc := range tests {
		d, err := parseKeyDist(tc.spec, tc.keys)
		if tc.refused {
			if err == nil {
				t.Errorf("parseKeyDist(%q, %d) accepted", tc.spec, tc.keys)
				drawsFinish(t, tc.spec, d, tc.keys, 1000)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseKeyDist(%q, %d): %v", tc.spec, tc.keys, err)
			continue
		}
		drawsFinish(t, fmt.Sprintf("%s over %d", tc.spec, tc.keys), d, tc.keys, 200000)
	}
}

func TestCommandsFileWeights(t *testing.T) {
	for _, bad := range []string{
		"99999999999999999999 GET k", // does not fit: an error, not a command named 9999…
		"4294967296 GET k",           // above MaxWeight
		"-1 GET k",
		"+3 GET k",
		"0 GET k",
	} {
		if cs, err := parseCommandsFile(bad); err == nil {
			t.Errorf("%q accepted as %+v", bad, cs)
		} else if !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: error %q does not name the line", bad, err)
		}
	}
	cs, err := parseCommandsFile("4294967295 GET k\n")
	if err != nil || cs[0].Weight != 4294967295 {
		t.Fatalf("largest weight: %+v %v", cs, err)
	}
}

func TestTotalWeightMustNotOverflow(t *testing.T) {
	half := uint64(1) << 63
	cs := []Custom{{Name: "a", Args: []string{"GET", "a"}, Weight: half}, {Name: "b", Args: []string{"GET", "b"}, Weight: half}}
	if r, err := BuildRecipe("", cs, Options{}); err == nil {
		if m, err := r.Build(); err == nil {
			t.Fatalf("weights summing past 2^64 accepted: %s", m.Title())
		}
	}
	zero := []Custom{{Name: "a", Args: []string{"GET", "a"}, Weight: 0}}
	if r, err := BuildRecipe("", zero, Options{}); err == nil {
		if _, err := r.Build(); err == nil {
			t.Fatal("weight 0 accepted")
		}
	}
}

func TestDuplicateNames(t *testing.T) {
	parse := func(lines ...string) []Custom {
		var cs []Custom
		for _, l := range lines {
			c, err := ParseCustom(l)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		return cs
	}
	// Two templates the user named alike: an error, not a silent rename.
	for _, cs := range [][]Custom{
		parse("hot=GET a", "hot=GET b"),
		parse("x=GET a", "SET k v", "x=SET b v"),
	} {
		if r, err := BuildRecipe("", cs, Options{}); err == nil {
			t.Errorf("duplicate names accepted: %v", r.Names())
		}
	}
	// Unnamed templates are named after their verb, with the first free suffix.
	tests := []struct {
		lines []string
		want  string
	}{
		{[]string{"SET a 1", "SET b 2", "SET c 3"}, "set,set2,set3"},
		{[]string{"GET a", "SET b 1", "GET c"}, "get,set,get2"},
		{[]string{"set2=GET x", "SET a 1", "SET b 2"}, "set2,set,set3"},
		{[]string{"SET a 1", "set=GET x"}, "set2,set"},
	}
	for _, tc := range tests {
		r, err := BuildRecipe("", parse(tc.lines...), Options{})
		if err != nil {
			t.Errorf("%q: %v", tc.lines, err)
			continue
		}
		if got := strings.Join(r.Names(), ","); got != tc.want {
			t.Errorf("%q named %s, want %s", tc.lines, got, tc.want)
		}
	}
}

// comments returns comment lines of exactly n bytes in all.
func comments(n int) string {
	const line = 1024
	full := strings.Repeat("#", line-1) + "\n"
	return strings.Repeat(full, n/line) + strings.Repeat("#", n%line)
}

func TestCommandsFileLimits(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // in the error; "" for accepted
	}{
		{"most templates", strings.Repeat("GET k\n", MaxTemplates), ""},
		{"one template too many", strings.Repeat("GET k\n", MaxTemplates) + "# c\n\nGET k\n", "line 1003: more than 1000 templates"},
		{"longest line", "PING\n" + "GET " + strings.Repeat("k", MaxCommandLine-4) + "\r\n", ""},
		{"line too long", "PING\n" + "GET " + strings.Repeat("k", MaxCommandLine-3) + "\n", "line 2: longer than 65536 bytes"},
		{"very long last line", "PING\n" + strings.Repeat("k", 3*MaxCommandLine), "line 2: longer than 65536 bytes"},
		{"file too big", strings.Repeat("# a comment of a few bytes\n", MaxCommandsFileSize/20), "more than 1048576 bytes"},
		{"file of the largest size", "PING\n" + comments(MaxCommandsFileSize-len("PING\n")), ""},
		{"file one byte too big", "PING\n" + comments(MaxCommandsFileSize-len("PING\n")+1), "more than 1048576 bytes"},
	}
	for _, tc := range tests {
		_, err := parseCommandsFile(tc.text)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of more than one line: %q", tc.name, err)
		}
	}
}

func TestLoadCommandsFileEndsOnEndlessInput(t *testing.T) {
	// /dev/zero: no newline, ever.
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := loadCommandsFile(t.Context(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "line 1: longer than") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	// A FIFO fed comments without end: the size limit ends the read.
	// (The writer goroutine ends when the reader closes the FIFO.)
	fifo := testrun.Fifo(t, "fifo")
	dir := filepath.Dir(fifo)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		line := []byte(strings.Repeat("# more\n", 512))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(line); err != nil {
				return // the reader closed it
			}
		}
	}()
	if _, err := loadCommandsFile(t.Context(), fifo); err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("endless FIFO: %v", err)
	}
	if _, err := loadCommandsFile(t.Context(), filepath.Join(dir, "none")); err == nil {
		t.Error("a missing file accepted")
	}
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("3 hot=GET k\nSET k v\n"), 0o600)
	if cs, err := loadCommandsFile(t.Context(), good); err != nil || len(cs) != 2 || cs[0].Weight != 3 || !cs[0].Named || cs[1].Named {
		t.Errorf("good file: %+v %v", cs, err)
	}
}

func TestTemplateMemoryIsItsSize(t *testing.T) {
	// 300 templates, values of 4 KiB: what they allocate is bounded by
	// what they hold (their encoded bytes, the file's text) plus a small
	// constant per template, whatever the number of templates.
	const n, size = 300, 4096
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d c%d=HSET h:%d:__key__ f:__rand_int__ __data__ g:%d\n", i+1, i, i, i)
	}
	text := b.String()
	o := Options{Sizes: FixedSize(size), Keyspace: 1000}
	valuePattern(size) // shared by every template, made once
	var encoded int
	got := testrun.Allocated(func() {
		cs, err := parseCommandsFile(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := BuildRecipe("", cs, o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Build()
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Len() {
			encoded += m.entries[i].t.Len()
		}
	})
	// The allocator rounds a block up by less than a quarter; parsing
	// costs a few times the text (runes, arguments); and a template has
	// a name, its arguments, slots and a map entry.
	const perTemplate = 2048
	limit := uint64(encoded*5/4 + 32*len(text) + n*perTemplate)
	t.Logf("%d templates holding %d bytes (file %d bytes) allocated %d bytes, limit %d", n, encoded, len(text), got, limit)
	if got > limit {
		t.Errorf("%d templates allocated %d bytes, more than %d", n, got, limit)
	}
}

func TestTemplatesWithoutDataCostNoValue(t *testing.T) {
	// A template that sends no value holds none, whatever -d.
	const n, size = 50, 1 << 20
	var cs []Custom
	for i := range n {
		cs = append(cs, Custom{Name: fmt.Sprintf("g%d", i), Args: []string{"GET", fmt.Sprintf("k%d", i)}, Weight: 1})
	}
	for _, sizes := range []Sizes{FixedSize(size), {min: 1, max: size}} {
		r, err := BuildRecipe("", cs, Options{Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		r.Build() // the shared value pattern, if any, is made once
		got := testrun.Allocated(func() {
			if _, err := r.Build(); err != nil {
				t.Fatal(err)
			}
		})
		if got > n*1024 {
			t.Errorf("-d %s: %d GET templates allocated %d bytes", sizes, n, got)
		}
	}
}

func TestLenIsExact(t *testing.T) {
	sizes, _ := ParseSizes("1:1,9:1")
	for _, args := range [][]string{
		{"SET", strings.Repeat("x", 100) + "__data__"}, // 109 bytes at most: a 3-digit length
		{"SET", "k", "__data____data____data__"},
		{"SET", strings.Repeat("y", 95) + "__data__"}, // 96 or 104: the length's digits vary
	} {
		tpl, err := Compile("x", args, Options{Sizes: sizes})
		if err != nil {
			t.Fatal(err)
		}
		g := newGen(1, Uniform{})
		longest := 0
		for range 200 {
			longest = max(longest, len(tpl.Fill(g)))
		}
		if tpl.Len() != longest {
			t.Errorf("%q: Len %d, longest command %d", args, tpl.Len(), longest)
		}
	}
}

func TestGaussianMatchesTruncatedNormal(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, tc := range []struct {
		n        uint64
		mean, sd float64
	}{
		{10, 2, 3},       // both ends cut
		{10, 9.7, 1},     // the mean past the last key's centre: the left tail only
		{10, 0, 0.4},     // a spike at the first key
		{1000, 500, 1e5}, // far wider than the keyspace: nearly uniform
	} {
		g, err := newGaussian(tc.n, tc.mean, tc.sd)
		if err != nil {
			t.Fatal(err)
		}
		const draws = 200000
		r := NewRand(3)
		counts := make([]int, tc.n)
		for range draws {
			counts[g.Draw(r)]++
		}
		lo, hi := phi((-0.5-tc.mean)/tc.sd), phi((float64(tc.n)-0.5-tc.mean)/tc.sd)
		for k := uint64(0); k < tc.n; k += max(1, tc.n/10) {
			p := (phi((float64(k)+0.5-tc.mean)/tc.sd) - phi((float64(k)-0.5-tc.mean)/tc.sd)) / (hi - lo)
			got := float64(counts[k]) / draws
			if math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/draws)+1e-4 {
				t.Errorf("gaussian:%g,%g over %d: key %d share %.5f, want %.5f", tc.mean, tc.sd, tc.n, k, got, p)
			}
		}
	}
}

func TestMaxCommandSize(t *testing.T) {
	sizes, _ := ParseSizes("1:1,9:1,1000:60") // the largest is drawn often: ten at once in MSET too
	tests := []struct {
		name   string
		recipe func(Options) (*Recipe, error)
	}{
		{"catalogue", func(o Options) (*Recipe, error) { return BuildRecipe("get:1,set:1,mset:1,ping_inline:1", nil, o) }},
		{"customs", func(o Options) (*Recipe, error) {
			return BuildRecipe("", []Custom{
				{Name: "a", Args: []string{"SET", strings.Repeat("x", 100) + "__data__"}, Weight: 1},
				{Name: "b", Args: []string{"HSET", "h:__key__", "__data____data__", "f:__rand_int__"}, Weight: 1},
			}, o)
		}},
	}
	for _, tc := range tests {
		for _, o := range []Options{{Sizes: sizes, Keyspace: 100}, {Sizes: FixedSize(7), Keyspace: 100}, {Sizes: sizes}} {
			r, err := tc.recipe(o)
			if err != nil {
				t.Fatal(err)
			}
			if o.Keyspace == 0 && tc.name == "customs" {
				continue // __key__ needs -r
			}
			m, err := r.Build()
			if err != nil {
				t.Fatal(err)
			}
			s := NewMixStream(m, 1, Uniform{N: o.Keyspace})
			longest := 0
			for range 5000 {
				b, _ := s.Next()
				longest = max(longest, len(b))
			}
			if got := r.MaxCommandSize(); got != longest {
				t.Errorf("%s -d %s: MaxCommandSize %d, longest command sent %d", tc.name, o.Sizes, got, longest)
			}
		}
	}
	// Computed without allocating the values: 512 MiB values cost nothing.
	r, _ := BuildRecipe("mset:1", nil, Options{Sizes: FixedSize(MaxValueSize), Keyspace: 10})
	var n int
	if got := testrun.Allocated(func() { n = r.MaxCommandSize() }); got > 1<<16 || n < 10*MaxValueSize {
		t.Errorf("MSET of 512 MiB values: MaxCommandSize %d, allocated %d bytes", n, got)
	}
}

func TestValueSizeLimit(t *testing.T) {
	if _, err := ParseSizes(fmt.Sprint(MaxValueSize)); err != nil {
		t.Errorf("-d %d: %v", MaxValueSize, err)
	}
	for _, s := range []string{fmt.Sprint(MaxValueSize + 1), "1-600000000", "64:1,999999999999:1"} {
		_, err := ParseSizes(s)
		if err == nil || !strings.Contains(err.Error(), "512 MiB") {
			t.Errorf("-d %s: %v", s, err)
		}
	}
	// An argument that a value makes larger than a server accepts.
	if _, err := Compile("x", []string{"SET", "k", "v__data__"}, Options{Sizes: FixedSize(MaxValueSize)}); err == nil {
		t.Error("an argument above MaxValueSize compiled")
	}
}

func TestParseRatio(t *testing.T) {
	for in, want := range map[string]string{"1:10": "set:1,get:10", "0:1": "get:1", "3:0": "set:3", " 2:5 ": "set:2,get:5"} {
		if got, err := parseRatio(in); err != nil || got != want {
			t.Errorf("parseRatio(%q) = %q, %v; want %q", in, got, err, want)
		}
		mix, _ := parseRatio(in)
		if _, err := BuildRecipe(mix, nil, Options{}); err != nil {
			t.Errorf("--mix %s from --ratio %s: %v", mix, in, err)
		}
	}
	for _, in := range []string{"0:0", "1", "1:", ":1", "a:b", "-1:2", "1:10:3", "1.5:2", "4294967296:1", ""} {
		if got, err := parseRatio(in); err == nil {
			t.Errorf("parseRatio(%q) = %q", in, got)
		}
	}
}

func TestSeedsReproduce(t *testing.T) {
	seq := func(seed uint64) []uint64 {
		r := NewRand(seed)
		out := make([]uint64, 8)
		for i := range out {
			out[i] = r.Uint64()
		}
		return out
	}
	if a, b := seq(42), seq(42); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed gave different numbers")
	}
	if a, b := seq(1), seq(2); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Error("different seeds gave the same numbers")
	}
}

func TestSendersShareTheValuePattern(t *testing.T) {
	// Senders build their mixes in parallel (bench: one per connection);
	// the value pattern they share is made once and only read.
	sizes, _ := ParseSizes("1-5000")
	r, err := BuildRecipe("set:1,mset:1,xadd:1", nil, Options{Sizes: sizes, Keyspace: 100})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for i := range 8 {
		go func() {
			m, err := r.Build()
			if err == nil {
				s := NewMixStream(m, uint64(i), Uniform{N: 100})
				for range 200 {
					s.Next()
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
