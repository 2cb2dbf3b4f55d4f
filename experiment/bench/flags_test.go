package bench

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// TestFlagsParse: redis-benchmark's clamps (-P, -k, --precision,
// --threads) and the combinations pacer refuses as usage errors.
func TestFlagsParse(t *testing.T) {
	ok := Flags{Requests: 10, Pipeline: -3, KeepAlive: 7, Precision: -1, Threads: 900, Repeat: 1, Latency: "first-reply"}
	var cfg Config
	s, err := ok.Parse(&cfg)
	if err != nil || cfg.Pipeline != 1 || s.KeepAlive != 1 || cfg.Reconnect || cfg.Precision != 3 || s.Threads != MaxThreads || len(s.Warnings) != 1 {
		t.Fatalf("clamps: %+v %+v %v", cfg, s, err)
	}
	for _, c := range []struct {
		f    func(*Flags)
		want string
	}{
		{func(f *Flags) { f.Requests = 0 }, "-n 0: want at least one request"},
		{func(f *Flags) { f.Cluster, f.KeepAlive = true, 0 }, "--cluster with -k 0"},
		{func(f *Flags) { f.Cluster, f.Idle = true, true }, "--cluster with -I"},
		{func(f *Flags) { f.Latency = "last" }, `--latency "last"`},
		{func(f *Flags) { f.Rate = new("fast") }, "--rate:"},
		{func(f *Flags) { f.Repeat, f.Loop = 3, true }, "--repeat 3 cannot be combined with -l"},
	} {
		f := ok
		c.f(&f)
		if _, err := f.Parse(&Config{}); !usage.Is(err) || !strings.Contains(usagetest.CLI(err), c.want) {
			t.Errorf("%+v: %v, want a usage error %q", f, err, c.want)
		}
	}
}
