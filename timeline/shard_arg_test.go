package timeline

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
)

func TestParseShard(t *testing.T) {
	env := func(v string, set bool) func(string) (string, bool) {
		return func(name string) (string, bool) { return v, set && name == JobIndexEnv }
	}
	for _, tc := range []struct {
		arg    string
		lookup func(string) (string, bool)
		k, n   int
		want   string // error text; "" for none
	}{
		{"2/4", env("", false), 2, 4, ""},
		{"1/1", env("", false), 1, 1, ""},
		{"1048576/1048576", env("", false), 1 << 20, 1 << 20, ""},
		{"auto/3", env(" 2 ", true), 3, 3, ""},
		{"auto/3", env("", false), 0, 0, "JOB_COMPLETION_INDEX is not set"},
		{"auto/3", env("3", true), 0, 0, `JOB_COMPLETION_INDEX="3" is not an index from 0 to 2`},
		{"5/4", env("", false), 0, 0, "K must be from 1 to 4"},
		{"0/4", env("", false), 0, 0, "K must be from 1 to 4"},
		{"4", env("", false), 0, 0, "want K/N"},
		{"1/0", env("", false), 0, 0, "want K/N"},
		{"1/2000000", env("", false), 0, 0, "want K/N"},
		// K is a whole number, written as one: digits only, no sign, no
		// leading zero, no spaces.
		{"1.5/3", env("", false), 0, 0, `K "1.5" is not a whole number`},
		{"one/3", env("", false), 0, 0, `K "one" is not a whole number`},
		{"/3", env("", false), 0, 0, `K "" is not a whole number`},
		{"-1/3", env("", false), 0, 0, `K "-1" is not plain: digits only`},
		{"+1/3", env("", false), 0, 0, `K "+1" is not plain: digits only`},
		{"01/3", env("", false), 0, 0, `K "01" is not plain: no leading zero`},
		{" 1/3", env("", false), 0, 0, `K " 1" is not plain: digits only`},
		{"1 /3", env("", false), 0, 0, `K "1 " is not plain: digits only`},
		{" 1/1 ", env("", false), 0, 0, "want K/N"},
		{"99999999999999999999/3", env("", false), 0, 0, "K must be from 1 to 3"},
		// N likewise.
		{"1/3.0", env("", false), 0, 0, "want K/N"},
		{"1/+3", env("", false), 0, 0, "want K/N"},
		{"1/03", env("", false), 0, 0, "want K/N"},
		{"1/ 3", env("", false), 0, 0, "want K/N"},
		{"1/3 ", env("", false), 0, 0, "want K/N"},
		{"auto/03", env("0", true), 0, 0, "want K/N"},
		{" auto/3", env("0", true), 0, 0, `K " auto" is not a whole number`},
	} {
		k, n, err := ParseShard(tc.arg, tc.lookup)
		switch {
		case tc.want == "" && (err != nil || k != tc.k || n != tc.n):
			t.Errorf("%q: %d/%d, %v; want %d/%d", tc.arg, k, n, err, tc.k, tc.n)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !usage.Is(err)):
			t.Errorf("%q: %v; want a usage error with %q", tc.arg, err, tc.want)
		}
	}
}
