package scenarios

import (
	"regexp"
	"strings"
	"testing"
)

func TestCompileAndFill(t *testing.T) {
	tpl, err := Compile("SET", []string{"SET", "key:__rand_int__", "__data__"}, Options{Sizes: FixedSize(3), Keyspace: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rng := newGen(1, Uniform{N: 1000})
	before := tpl.Len()
	for range 1000 {
		b := string(tpl.Fill(rng))
		if len(b) != before {
			t.Fatalf("length changed: %d -> %d", before, len(b))
		}
		if !strings.HasPrefix(b, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000") {
			t.Fatalf("unexpected encoding %q", b)
		}
		if !strings.HasSuffix(b, "\r\n$3\r\n"+string(Data(3))+"\r\n") {
			t.Fatalf("data not expanded: %q", b)
		}
	}
}

func TestNoKeyspaceLeavesPlaceholder(t *testing.T) {
	// redis-benchmark without -r sends __rand_int__ literally.
	tpl, _ := Compile("GET", []string{"GET", "key:__rand_int__"}, Options{Sizes: FixedSize(3)})
	if got := string(tpl.Fill(newGen(1, Uniform{}))); !strings.Contains(got, "key:__rand_int__") {
		t.Fatalf("placeholder replaced without -r: %q", got)
	}
	if tpl.Slots() != 0 {
		t.Fatal("slots without -r")
	}
}

func TestEverySlotGetsItsOwnNumber(t *testing.T) {
	tpl, _ := Catalogue[19].Compile(Options{Sizes: FixedSize(1), Keyspace: 1 << 40}, false) // MSET (10 keys)
	if tpl.Name() != "MSET (10 keys)" || tpl.Slots() != 10 {
		t.Fatalf("%s has %d slots", tpl.Name(), tpl.Slots())
	}
	b := string(tpl.Fill(newGen(7, Uniform{N: 1 << 40})))
	seen := map[string]bool{}
	for _, part := range strings.Split(b, "key:")[1:] {
		seen[part[:12]] = true
	}
	if len(seen) < 9 {
		t.Fatalf("slots share numbers: %v", seen)
	}
}

func TestPutDigits12(t *testing.T) {
	tests := []struct {
		v    uint64
		want string
	}{
		{0, "000000000000"},
		{42, "000000000042"},
		{999999999999, "999999999999"},
		{1000000000000, "000000000000"}, // wraps at 12 digits, like redis-benchmark
	}
	for _, tc := range tests {
		b := make([]byte, 12)
		putDigits12(b, tc.v)
		if string(b) != tc.want {
			t.Errorf("putDigits12(%d) = %s, want %s", tc.v, b, tc.want)
		}
	}
}

func TestRandBelowIsUniformAndBounded(t *testing.T) {
	r := NewRand(3)
	var counts [10]int
	for range 100000 {
		v := r.Below(10)
		if v >= 10 {
			t.Fatalf("Below(10) = %d", v)
		}
		counts[v]++
	}
	for i, c := range counts {
		if c < 9500 || c > 10500 {
			t.Errorf("value %d drawn %d times of 100000", i, c)
		}
	}
	if r.Below(0) != 0 {
		t.Error("Below(0) != 0")
	}
	if a, b := NewRand(5), NewRand(5); a.Uint64() != b.Uint64() {
		t.Error("same seed, different numbers")
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		list    string
		want    []string
		wantErr bool
	}{
		{"set,get", []string{"SET", "GET"}, false},
		{"get,set", []string{"SET", "GET"}, false}, // suite order, not -t order
		{"SET", []string{"SET"}, false},            // case-insensitive
		{"ping", []string{"PING_INLINE", "PING_MBULK"}, false},
		{"lrange_300", []string{"LPUSH (needed to benchmark LRANGE)", "LRANGE_300 (first 300 elements)"}, false},
		{"nosuch", nil, true},
		{",", nil, true},
	}
	for _, tc := range tests {
		got, err := Select(tc.list)
		if (err != nil) != tc.wantErr {
			t.Errorf("Select(%q): err %v", tc.list, err)
			continue
		}
		var titles []string
		for _, g := range got {
			titles = append(titles, g.Title)
		}
		if strings.Join(titles, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Select(%q) = %v, want %v", tc.list, titles, tc.want)
		}
	}
	all, _ := Select("")
	if len(all) != 21 {
		t.Errorf("default suite has %d tests", len(all))
	}
}

func TestCatalogueEncodings(t *testing.T) {
	o := Options{Sizes: FixedSize(3)}
	byTitle := map[string]*Template{}
	for _, tc := range Catalogue {
		tpl, err := tc.Compile(o, false)
		if err != nil {
			t.Fatal(err)
		}
		byTitle[tc.Title] = tpl
	}
	if got := string(byTitle["PING_INLINE"].Bytes()); got != "PING\r\n" {
		t.Errorf("PING_INLINE = %q", got)
	}
	if got := string(byTitle["ZADD"].Bytes()); got != "*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$1\r\n0\r\n$20\r\nelement:__rand_int__\r\n" {
		t.Errorf("ZADD = %q", got)
	}
	cl, _ := Catalogue[2].Compile(o, true)
	if !strings.Contains(string(cl.Bytes()), "key:{tag}:__rand_int__") {
		t.Errorf("cluster SET = %q", cl.Bytes())
	}
}

func BenchmarkFill(b *testing.B) {
	tpl, _ := Catalogue[19].Compile(Options{Sizes: FixedSize(3), Keyspace: 100000}, false)
	s := NewStream(tpl, 1)
	b.ReportAllocs()
	for b.Loop() {
		s.Next()
	}
}

func TestRandomWithZeroKeyspaceFillsZeros(t *testing.T) {
	// redis-benchmark -r 0: placeholders become twelve zeros.
	tpl, _ := Compile("GET", []string{"GET", "key:__rand_int__"}, Options{Random: true})
	if got := string(tpl.Fill(newGen(1, Uniform{}))); !strings.Contains(got, "key:000000000000") {
		t.Fatalf("got %q", got)
	}
}

// Every catalogue test has its own ID, a lower-case word that scripts can
// use; recipes take it over, and custom commands and mixes have theirs.
func TestIDs(t *testing.T) {
	word := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	seen := map[string]string{}
	for _, tt := range Catalogue {
		id := tt.ID()
		if !word.MatchString(id) {
			t.Errorf("%s: ID %q", tt.Title, id)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share the ID %q", other, tt.Title, id)
		}
		seen[id] = tt.Title
		if got := TestRecipe(tt, Options{}).ID(); got != id {
			t.Errorf("%s: recipe ID %q, want %q", tt.Title, got, id)
		}
	}
	if seen["lpush_for_lrange"] != "LPUSH (needed to benchmark LRANGE)" || seen["get"] != "GET" {
		t.Errorf("IDs %v", seen)
	}
	for _, c := range []struct {
		spec    string
		customs []Custom
		want    string
	}{
		{"get:1", nil, "get"},
		{"get:9,set:1", nil, MixID},
		{"", []Custom{{Args: []string{"SET", "k", "v"}, Weight: 1}}, CustomID},
		{"", []Custom{{Args: []string{"SET", "k", "v"}, Weight: 1}, {Args: []string{"GET", "k"}, Weight: 1}}, MixID},
	} {
		r, err := BuildRecipe(c.spec, c.customs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.ID(); got != c.want {
			t.Errorf("%q %v: ID %q, want %q", c.spec, c.customs, got, c.want)
		}
	}
}

func TestRecipeArgsAreWhatBuildCompiles(t *testing.T) {
	tests, err := Select("mset,ping_inline")
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range []bool{false, true} {
		for _, tt := range tests {
			args := TestRecipe(tt, Options{Cluster: cl, Keyspace: 10}).Args()
			switch {
			case tt.inline != "":
				if args[0] != nil {
					t.Errorf("%s: inline test with args %q", tt.Title, args[0])
				}
			case len(args[0]) != 21 || args[0][0] != "MSET":
				t.Errorf("%s: %q", tt.Title, args[0])
			case strings.Contains(args[0][1], TagPlaceholder) != cl:
				t.Errorf("%s, cluster %v: key %q", tt.Title, cl, args[0][1])
			}
		}
	}
	r, err := BuildRecipe("", []Custom{{Name: "g", Args: []string{"GET", "k:__rand_int__"}, Weight: 1}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := r.Args(); len(a) != 1 || strings.Join(a[0], " ") != "GET k:__rand_int__" {
		t.Errorf("custom: %q", a)
	}
}
