package scenarios

import (
	"math"
	"strings"
	"testing"
)

// FuzzCommandsFile: any text either is refused with a one-line error or
// gives at most MaxTemplates templates with weights in [1, MaxWeight] that
// build into a mix whose commands are never longer than MaxCommandSize.
func FuzzCommandsFile(f *testing.F) {
	for _, s := range []string{
		"# a mix\n9 hot=GET key:__key__\n\n1 SET key:__key__ __data__\nINCR c:__key__\n",
		"99999999999999999999 GET k", "-1 GET k", "3", "hot=GET a\nhot=GET b\n", "SET a\nSET b\nset2=GET c\n",
		"\r\n\t 5 \"x y\" 'z'\\ w\n", "4294967295 PING\n4294967295 PING\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cs, err := parseCommandsFile(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if len(cs) == 0 || len(cs) > MaxTemplates {
			t.Fatalf("%d templates", len(cs))
		}
		for _, c := range cs {
			if c.Weight < 1 || c.Weight > MaxWeight || len(c.Args) == 0 {
				t.Fatalf("template %+v", c)
			}
		}
		sizes, _ := ParseSizes("1-40")
		o := Options{Sizes: sizes, Keyspace: 1000}
		r, err := BuildRecipe("", cs, o)
		if err != nil {
			return // names used twice
		}
		seen := map[string]bool{}
		for _, n := range r.Names() {
			if seen[n] {
				t.Fatalf("name %q given twice: %v", n, r.Names())
			}
			seen[n] = true
		}
		m, err := r.Build()
		if err != nil {
			t.Fatalf("built recipe refused: %v", err)
		}
		s := NewMixStream(m, 1, Uniform{N: 1000})
		limit := r.MaxCommandSize()
		for range 8 {
			if b, _ := s.Next(); len(b) > limit {
				t.Fatalf("a command of %d bytes, MaxCommandSize %d", len(b), limit)
			}
		}
	})
}

// FuzzKeyDist: any --key-dist spec over any keyspace is refused or gives
// a distribution whose draws stay in [0, N) (and end: a draw that loops
// fails the fuzzer by its timeout).
func FuzzKeyDist(f *testing.F) {
	for _, s := range []string{"uniform", "sequential", "zipf:0.99", "zipf:10", "zipf:1e-300", "gaussian:50%,1000",
		"gaussian:99.6,0.001", "gaussian:50,1e300", "gaussian:50%,inf", "gaussian:0,5e-324"} {
		f.Add(s, uint64(100))
		f.Add(s, uint64(math.MaxUint64))
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, spec string, n uint64) {
		d, err := parseKeyDist(spec, n)
		if err != nil {
			return
		}
		r := NewRand(n)
		for range 64 {
			if k := d.Draw(r); n > 0 && k >= n {
				t.Fatalf("%s over %d drew %d", spec, n, k)
			}
		}
	})
}
