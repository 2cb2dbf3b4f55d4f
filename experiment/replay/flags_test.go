package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// TestFlags: the replay's own flags, read and checked in the user's
// order, with each mistake a usage error in the flag's words.
func TestFlags(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, g := range names {
				if g == n {
					return true
				}
			}
			return false
		}
	}
	base := func() Flags {
		return Flags{Args: []string{"trace.txt"}, Format: "auto", Speed: "1", Loop: 1, Set: given()}
	}
	o, err := base().Parse()
	if err != nil || o.Path != "trace.txt" || o.Speed != 1 || o.Loops != 1 || o.DBSet || o.Duration != 0 {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	f := base()
	f.Speed, f.DB, f.Duration, f.Requests, f.Warmup = "2x", 3, 10*time.Second, 500, time.Second
	f.Set = given("speed", "db", "duration", "n", "warmup")
	if o, err = f.Parse(); err != nil || o.Speed != 2 || !o.DBSet || o.DB != 3 || o.Duration != 10*time.Second || o.Requests != 500 || o.Warmup != time.Second {
		t.Fatalf("given: %+v %v", o, err)
	}
	f = base()
	f.Rate, f.Set = "10k", given("rate")
	if o, err = f.Parse(); err != nil || o.Rate != 10000 {
		t.Fatalf("--rate: %+v %v", o, err)
	}
	for _, tc := range []struct {
		f    func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Args = nil }, "replay needs a TRACE"},
		{func(f *Flags) { f.Args = []string{"a", "b"} }, "got 2 arguments"},
		{func(f *Flags) { f.Cluster, f.Embedded = true, true }, "--cluster needs a Redis Cluster"},
		{func(f *Flags) { f.Format = "x" }, "--format"},
		{func(f *Flags) { f.Set = given("key-prefix") }, "--key-prefix"},
		{func(f *Flags) { f.DB, f.Set = -1, given("db") }, "--db -1"},
		{func(f *Flags) { f.Set = given("speed", "rate") }, "give one"},
		{func(f *Flags) { f.Rate, f.Set = "x", given("rate") }, "--rate:"},
		{func(f *Flags) { f.Speed = "0" }, `--speed "0"`},
		{func(f *Flags) { f.Speed = "1e7" }, `--speed "1e7"`},
		{func(f *Flags) { f.Duration, f.Set = -time.Second, given("duration") }, "--duration -1s"},
		{func(f *Flags) { f.Set = given("n") }, "-n 0"},
		{func(f *Flags) { f.Warmup = -time.Second }, "--warmup -1s"},
		{func(f *Flags) { f.Duration, f.Warmup = time.Duration(1<<62), time.Duration(1<<62) }, "too long"},
	} {
		f := base()
		tc.f(&f)
		if _, err := f.Parse(); !usage.Is(err) || !strings.Contains(usagetest.CLI(err), tc.want) {
			t.Errorf("%+v: %v, want a usage error with %q", f, err, tc.want)
		}
	}
}
