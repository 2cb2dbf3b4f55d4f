package experiment

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/memlimit"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// TestFitMemory: the connections' caps are held to three quarters of the
// memory limit: defaults lowered with a note, caps the user gave kept, a
// run that cannot fit refused in one line naming the limit.
func TestFitMemory(t *testing.T) {
	t.Parallel()
	const cmd = 40
	load := OpenLoad{MaxBuffer: 1 << 20, MaxInflight: 10000}
	cgroup := func(b int64) memlimit.Limit { return memlimit.Limit{Bytes: b, Source: "the cgroup's memory limit"} }
	as := func(b int64) memlimit.Limit { return memlimit.Limit{Bytes: b, Source: "ulimit -v", AddressSpace: true} }
	for _, c := range []struct {
		name                 string
		conns                int
		bufferSet, inflSet   bool
		lim                  memlimit.Limit
		wantBuffer, wantInfl int
		wantNote, wantErr    string
	}{
		{"no limit", 9000, false, false, memlimit.Limit{}, 1 << 20, 10000, "", ""},
		{"room enough", 50, false, false, cgroup(4 << 30), 1 << 20, 10000, "", ""},
		// 9,000 × (1 MiB + 10,000 × 33 B + 80 KiB) is 12 GiB: both halved
		// into what 4 GiB leaves.
		{"defaults lowered", 9000, false, false, cgroup(4 << 30), -1, -1, "holds 9000 connections at --max-buffer", ""},
		{"the user's buffer kept", 9000, true, false, cgroup(4 << 30), -1, -1, "", "9000 connections at --max-buffer 1MiB"},
		{"the user's small buffer kept", 9000, false, true, cgroup(8 << 30), -1, 10000, "holds 9000 connections", ""},
		{"both given", 9000, true, true, cgroup(4 << 30), 0, 0, "", "lower -c, --max-buffer or --max-inflight"},
		{"not even the floor", 9000, false, false, as(2560 << 20), 0, 0, "", "9000 connections need at least"},
	} {
		fit, err := FitMemory(c.conns, load, c.bufferSet, c.inflSet, cmd, c.lim, 10000)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(usagetest.CLI(err), c.wantErr) || strings.Contains(usagetest.CLI(err), "\n") {
				t.Errorf("%s: %v, want one line with %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !strings.Contains(usagetest.CLI(fit.Note), c.wantNote) || (c.wantNote == "") != (fit.Note == nil) {
			t.Errorf("%s: note %q, want %q", c.name, fit.Note, c.wantNote)
		}
		if c.wantBuffer > 0 && fit.MaxBuffer != c.wantBuffer || c.wantInfl > 0 && fit.MaxInflight != c.wantInfl {
			t.Errorf("%s: caps %d, %d; want %d, %d", c.name, fit.MaxBuffer, fit.MaxInflight, c.wantBuffer, c.wantInfl)
		}
		// Whatever it chose fits.
		usable := c.lim.Bytes
		if c.lim.AddressSpace {
			usable -= addressReserve
		}
		worst := int64(c.conns) * (connFixed + int64(fit.MaxBuffer) + cmd + int64(fit.MaxInflight)*(FIFOEntryBytes+1))
		if c.lim.Bytes > 0 && worst > usable/4*3-memoryBase {
			t.Errorf("%s: caps %d, %d hold %d bytes, more than the limit %d allows", c.name, fit.MaxBuffer, fit.MaxInflight, worst, c.lim.Bytes)
		}
		if fit.Note != nil && (fit.MaxBuffer < minFittedBuffer || fit.MaxInflight < minFittedInflight) {
			t.Errorf("%s: caps %d, %d below the floor", c.name, fit.MaxBuffer, fit.MaxInflight)
		}
	}
}
