package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/scenarios"
)

// TestTimelineBounds: the speed and the passes scale the trace, and every
// overflow is a usage error that names the flag that made it.
func TestTimelineBounds(t *testing.T) {
	long := scenarios.TraceSummary{Commands: 10_000_000, Span: 24 * time.Hour}
	long.MeanRate = float64(long.Commands) / long.Span.Seconds()
	short := scenarios.TraceSummary{Commands: 2, Span: 100 * time.Millisecond, MeanRate: 20}
	for _, c := range []struct {
		sum   scenarios.TraceSummary
		cfg   Config
		want  string        // "" no error; else in the usage error
		span  time.Duration // when no error
		speed float64
	}{
		// One comment per row: what it shows.
		{short, Config{Speed: 1, Loops: 1}, "", 100 * time.Millisecond, 1},                                   // the trace as it is
		{short, Config{Speed: 2, Loops: 3}, "", 250 * time.Millisecond, 2},                                   // passes a length (its span and a gap) apart: (2·200 ms + 100 ms)/2
		{short, Config{Rate: 40, Loops: 1}, "", 50 * time.Millisecond, 2},                                    // a rate makes a speed
		{short, Config{Rate: 20e6, Loops: 1}, "", 100 * time.Nanosecond, 1e6},                                // the fastest speed, from a rate
		{short, Config{Rate: 1e9, Loops: 1}, "--rate 1000M: that is 5e+07×", 0, 0},                           // --rate has --speed's cap
		{short, Config{Speed: 1e-300, Loops: 1}, "--speed 1e-300: the replay would last", 0, 0},              // a tiny speed
		{long, Config{Rate: 0.001, Loops: 1}, "--rate 0.001: the replay would last 317 years", 0, 0},         // a slow rate on a long trace
		{long, Config{Speed: 1, Loops: 1_000_000}, "--loop 1000000: the replay would last 2740 years", 0, 0}, // many passes of a day
		{short, Config{Speed: 1e-9, Loops: 1}, "", 100 * time.Millisecond * 1e9, 1e-9},                       // long, but within the bound
	} {
		p := &Plan{Summary: c.sum, Loops: c.cfg.Loops}
		err := p.timeline(c.cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want == "" && (p.Span != c.span || p.Speed != c.speed):
			t.Errorf("%+v: span %v speed %g, want %v %g", c.cfg, p.Span, p.Speed, c.span, c.speed)
		case c.want != "" && (!usage.Is(err) || !strings.Contains(usagetest.CLI(err), c.want)):
			t.Errorf("%+v: %v, want a usage error with %q", c.cfg, err, c.want)
		}
	}
}
