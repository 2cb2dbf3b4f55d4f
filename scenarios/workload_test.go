package scenarios

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// harmonic is the generalised harmonic number H(n, s) = Σ 1/k^s.
func harmonic(n int, s float64) float64 {
	var h float64
	for k := n; k >= 1; k-- {
		h += math.Pow(float64(k), -s)
	}
	return h
}

func TestZipfMatchesItsDistribution(t *testing.T) {
	for _, s := range []float64{0.5, 0.99, 1, 1.2} {
		const n, draws = 10000, 400000
		z := newZipf(n, s)
		r := NewRand(11)
		counts := make([]int, n)
		for range draws {
			k := z.Draw(r)
			if k >= n {
				t.Fatalf("s=%v: draw %d outside [0, %d)", s, k, n)
			}
			counts[k]++
		}
		hn := harmonic(n, s)
		// Rank 1, rank 10 and the top 1% against 1/k^s / H(n, s).
		for _, k := range []int{1, 10} {
			want := math.Pow(float64(k), -s) / hn
			got := float64(counts[k-1]) / draws
			if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/draws)+1e-4 {
				t.Errorf("s=%v: rank %d share %.5f, want %.5f", s, k, got, want)
			}
		}
		top := 0
		for _, c := range counts[:n/100] {
			top += c
		}
		want := harmonic(n/100, s) / hn
		if got := float64(top) / draws; math.Abs(got-want) > 0.005 {
			t.Errorf("s=%v: top 1%% share %.4f, want %.4f", s, got, want)
		}
	}
}

func TestKeyDistributions(t *testing.T) {
	r := NewRand(5)
	seq := NewSequential(5)
	var got []string
	for range 7 {
		got = append(got, strconv.FormatUint(seq.Draw(r), 10))
	}
	if strings.Join(got, ",") != "0,1,2,3,4,0,1" {
		t.Errorf("sequential: %v", got)
	}
	g, err := newGaussian(100000, 50000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq float64
	const n = 100000
	for range n {
		v := float64(g.Draw(r))
		sum += v
		sq += v * v
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-50000) > 20 || math.Abs(sd-1000) > 20 {
		t.Errorf("gaussian mean %.1f sd %.1f", mean, sd)
	}
	u := Uniform{N: 10}
	var hist [10]int
	for range 100000 {
		hist[u.Draw(r)]++
	}
	for i, c := range hist {
		if c < 9500 || c > 10500 {
			t.Errorf("uniform: key %d drawn %d times", i, c)
		}
	}
}

func TestParseKeyDist(t *testing.T) {
	good := map[string]string{"uniform": "uniform", "sequential": "sequential", "zipf:0.99": "zipf:0.99", "gaussian:500,10": "gaussian:500,10", "gaussian:50%,10": "gaussian:500,10"}
	for in, want := range good {
		d, err := parseKeyDist(in, 1000)
		if err != nil || d.String() != want {
			t.Errorf("parseKeyDist(%q) = %v, %v", in, d, err)
		}
	}
	for _, in := range []string{"zipf", "zipf:0", "zipf:-1", "zipf:x", "gaussian:1", "gaussian:5000,10", "gaussian:5,0", "pareto:1", "uniform:3", ""} {
		if _, err := parseKeyDist(in, 1000); err == nil {
			t.Errorf("parseKeyDist(%q) accepted", in)
		}
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in        string
		min, max  int
		mean      float64
		fixed     bool
		wantError bool
	}{
		{"32", 32, 32, 32, true, false},
		{"32-1024", 32, 1024, 528, false, false},
		{"64:8,4096:2", 64, 4096, (64*8 + 4096*2) / 10.0, false, false},
		{"0", 0, 0, 0, false, true},
		{"1024-32", 0, 0, 0, false, true},
		{"64:0", 0, 0, 0, false, true},
		{"big", 0, 0, 0, false, true},
		{"600000000", 0, 0, 0, false, true},
	}
	for _, tc := range tests {
		z, err := ParseSizes(tc.in)
		if (err != nil) != tc.wantError {
			t.Errorf("ParseSizes(%q): %v", tc.in, err)
			continue
		}
		if err != nil {
			continue
		}
		_, fixed := z.Fixed()
		if z.min != tc.min || z.Max() != tc.max || z.Mean() != tc.mean || fixed != tc.fixed || z.String() != tc.in {
			t.Errorf("ParseSizes(%q) = min %d max %d mean %v fixed %v %q", tc.in, z.min, z.Max(), z.Mean(), fixed, z.String())
		}
	}
	z, _ := ParseSizes("64:8,4096:2")
	r := NewRand(1)
	big := 0
	for range 10000 {
		if z.Draw(r) == 4096 {
			big++
		}
	}
	if big < 1800 || big > 2200 {
		t.Errorf("4096 drawn %d of 10000 times, want ~2000", big)
	}
}

// decode splits a RESP array of bulk strings, checking every length.
func decode(t *testing.T, b []byte) []string {
	t.Helper()
	s := string(b)
	if !strings.HasPrefix(s, "*") {
		t.Fatalf("not an array: %q", s)
	}
	i := strings.Index(s, "\r\n")
	n, _ := strconv.Atoi(s[1:i])
	s = s[i+2:]
	var out []string
	for range n {
		j := strings.Index(s, "\r\n")
		l, err := strconv.Atoi(s[1:j])
		if s[0] != '$' || err != nil || len(s) < j+2+l+2 || s[j+2+l:j+4+l] != "\r\n" {
			t.Fatalf("bad bulk in %q", s)
		}
		out = append(out, s[j+2:j+2+l])
		s = s[j+4+l:]
	}
	if s != "" {
		t.Fatalf("trailing bytes %q", s)
	}
	return out
}

func TestVariableSizesEncodeCorrectly(t *testing.T) {
	sizes, _ := ParseSizes("1-300")
	tpl, err := Compile("SET", []string{"SET", "key:__key__", "v-__data__"}, Options{Sizes: sizes, Keyspace: 50})
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(3, Uniform{N: 50})
	seen := map[int]bool{}
	for range 2000 {
		args := decode(t, tpl.Fill(g))
		if len(args) != 3 || !strings.HasPrefix(args[2], "v-") {
			t.Fatalf("args %q", args)
		}
		n := len(args[2]) - 2
		if n < 1 || n > 300 || args[2][2:] != string(Data(n)) {
			t.Fatalf("value of %d bytes", n)
		}
		seen[n] = true
		k, _ := strconv.Atoi(strings.TrimPrefix(args[1], "key:"))
		if len(args[1]) != 16 || k >= 50 {
			t.Fatalf("key %q", args[1])
		}
	}
	if len(seen) < 200 {
		t.Fatalf("only %d distinct sizes in 2000 draws of 1-300", len(seen))
	}
}

func TestKeyIsSharedRandIntIsNot(t *testing.T) {
	tpl, _ := Compile("x", []string{"HSET", "h:__key__", "f:__rand_int__", "k:__key__", "g:__rand_int__"}, Options{Keyspace: 1 << 40})
	g := newGen(9, Uniform{N: 1 << 40})
	for range 100 {
		a := decode(t, tpl.Fill(g))
		if a[1][2:] != a[3][2:] {
			t.Fatalf("__key__ differs within a command: %q", a)
		}
		if a[2][2:] == a[4][2:] {
			t.Fatalf("two __rand_int__ slots drew the same number: %q", a)
		}
	}
}

func TestMixRatiosAndKinds(t *testing.T) {
	r, err := BuildRecipe("get:9,set:1", nil, Options{Sizes: FixedSize(3), Keyspace: 100})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	if r.Title() != "MIX get:9,set:1" || strings.Join(m.Names(), ",") != "get,set" {
		t.Fatalf("title %q names %v", r.Title(), m.Names())
	}
	s := NewMixStream(m, 1, Uniform{N: 100})
	var kinds [2]int
	for range 100000 {
		b, kind := s.Next()
		kinds[kind]++
		if (kind == 0) != strings.Contains(string(b), "GET") {
			t.Fatalf("kind %d sent %q", kind, b)
		}
	}
	if share := float64(kinds[0]) / 100000; math.Abs(share-0.9) > 0.005 {
		t.Fatalf("get share %.4f, want 0.9", share)
	}
}

func TestRecipesAndCustomCommands(t *testing.T) {
	hot, err := ParseCustom(`hot=GET "key:__key__"`)
	if err != nil || hot.Name != "hot" || strings.Join(hot.Args, "|") != "GET|key:__key__" {
		t.Fatalf("%+v %v", hot, err)
	}
	plain, _ := ParseCustom("SET key:__key__ __data__")
	if plain.Name != "set" {
		t.Fatalf("unnamed custom named %q", plain.Name)
	}
	eq, _ := ParseCustom("SET k a=b")
	if eq.Name != "set" || len(eq.Args) != 3 {
		t.Fatalf("a = in an argument is not a name: %+v", eq)
	}
	r, err := BuildRecipe("hot:3,set:1,incr:1", []Custom{hot, plain}, Options{Keyspace: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "hot,set,incr" {
		t.Fatalf("names %s", got)
	}
	if r.Items[1].Args == nil || r.Items[2].test == nil {
		t.Fatal("the custom set should win over the catalogue's; incr comes from the catalogue")
	}
	for _, spec := range []string{"get", "get:0", "get:1,get:2", "nosuch:1", "get:x"} {
		if _, err := BuildRecipe(spec, nil, Options{}); err == nil {
			t.Errorf("--mix %q accepted", spec)
		}
	}
	// __key__ without -r is an error when building.
	r, _ = BuildRecipe("", []Custom{plain}, Options{})
	if _, err := r.Build(); err == nil {
		t.Fatal("__key__ without a keyspace accepted")
	}
	if _, err := splitArgs(`SET "unterminated`); err == nil {
		t.Fatal("unterminated quote accepted")
	}
	if args, _ := splitArgs(`SET k 'a b' "c\"d" e\ f`); strings.Join(args, "|") != `SET|k|a b|c"d|e f` {
		t.Fatalf("split %q", args)
	}
}

func TestParseCommandsFile(t *testing.T) {
	cs, err := parseCommandsFile("# a mix\n9 hot=GET key:__key__\n\n1 SET key:__key__ __data__\nINCR c:__key__\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].Weight != 9 || cs[0].Name != "hot" || cs[1].Weight != 1 || cs[2].Name != "incr" || cs[2].Weight != 1 {
		t.Fatalf("%+v", cs)
	}
	for _, bad := range []string{"", "# only\n", "0 GET k", `GET "k`} {
		if _, err := parseCommandsFile(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func BenchmarkFillKeyFixedSize(b *testing.B) {
	tpl, _ := Compile("SET", []string{"SET", "key:__key__", "__data__"}, Options{Sizes: FixedSize(64), Keyspace: 1000000})
	g := newGen(1, newZipf(1000000, 0.99))
	b.ReportAllocs()
	for b.Loop() {
		tpl.Fill(g)
	}
}

func BenchmarkFillVariableSize(b *testing.B) {
	sizes, _ := ParseSizes("32-1024")
	tpl, _ := Compile("SET", []string{"SET", "key:__key__", "__data__"}, Options{Sizes: sizes, Keyspace: 1000000})
	g := newGen(1, Uniform{N: 1000000})
	b.ReportAllocs()
	for b.Loop() {
		tpl.Fill(g)
	}
}

func BenchmarkMixStream(b *testing.B) {
	r, _ := BuildRecipe("get:9,set:1", nil, Options{Sizes: FixedSize(3), Keyspace: 100000})
	m, _ := r.Build()
	s := NewMixStream(m, 1, Uniform{N: 100000})
	b.ReportAllocs()
	for b.Loop() {
		s.Next()
	}
}

// FuzzTemplates: any command line that splits compiles into a template
// whose every fill is a well-formed RESP array of the same arguments'
// shape, and nothing panics.
func FuzzTemplates(f *testing.F) {
	for _, s := range []string{"SET key:__key__ __data__", `HSET h:__rand_int__ "f __data__" x`, "GET {tag}:__key__", `a\ b 'c d' "e\"f"`, "__data____key____rand_int__"} {
		f.Add(s, "1-40")
	}
	f.Fuzz(func(t *testing.T, line, sizes string) {
		args, err := splitArgs(line)
		if err != nil || len(args) == 0 || len(args) > 64 {
			return
		}
		z, err := ParseSizes(sizes)
		if err != nil || z.Max() > 4096 {
			z = FixedSize(3)
		}
		tpl, err := Compile("f", args, Options{Sizes: z, Keyspace: 1000})
		if err != nil {
			return
		}
		g := newGen(1, Uniform{N: 1000})
		for range 3 {
			if got := decode(t, tpl.Fill(g)); len(got) != len(args) {
				t.Fatalf("%q encoded as %d arguments", args, len(got))
			}
		}
	})
}

// TestMixStreamNilKeysIsUniform: a mix stream without a key distribution
// draws keys uniformly over the templates' keyspace (it panicked).
func TestMixStreamNilKeysIsUniform(t *testing.T) {
	r, err := BuildRecipe("", []Custom{{Name: "get", Args: []string{"GET", "__key__"}, Weight: 1}}, Options{Keyspace: 10})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := NewMixStream(m, 1, nil)
	seen := map[string]bool{}
	for range 1000 {
		cmd, _ := s.Next()
		seen[string(cmd)] = true
	}
	if len(seen) != 10 {
		t.Errorf("%d distinct commands over a keyspace of 10", len(seen))
	}
}
