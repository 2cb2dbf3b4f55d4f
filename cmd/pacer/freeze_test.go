package main

import (
	"path/filepath"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestFreezeShowsInItsIntervals: with the embedded server frozen 200 ms
// every 2 s and 100 ms intervals, the intervals a freeze covers show it
// (checked on the JSON the interval plot draws): an interval wholly
// inside a freeze completes nothing, and the age of the oldest
// unanswered request at its end (oldest_inflight_ms) is at least the
// interval's length; the freeze's own intervals reach 150 ms in
// oldest_inflight_max_ms. The age is read at each interval's end, so
// oldest_inflight_ms itself reaches 150 ms only when an interval ends
// 150 ms or more into the freeze (the freeze's phase against the
// intervals is the server's).
func TestFreezeShowsInItsIntervals(t *testing.T) {
	testrun.SkipShort(t, "a 5 s run with freezes")
	testrun.SkipRace(t, "it slows the generator: its requests may not be out when a freeze begins")
	dir := t.TempDir()
	path, _ := savedRun(t, dir, "freeze.json", "run", "--embedded", "--stall", "200ms", "--every", "2s", "--interval", "100ms",
		"--rate", "2k", "--duration", "5s", "-c", "4", "-t", "get", "--lag-limit", "1s", "-q")
	doc := readJSON[struct {
		Tests []struct {
			Intervals []freezeInterval `json:"intervals"`
		} `json:"tests"`
	}](t, path)
	ivs := doc.Tests[0].Intervals
	freezes, held := 0, 0
	for i := 0; i < len(ivs); i++ {
		if ivs[i].Completed > 0 || ivs[i].Scheduled == 0 || ivs[i].DurationS < 0.099 {
			continue
		}
		// Intervals i..j complete nothing: a freeze covers them.
		j := i
		for j+1 < len(ivs) && ivs[j+1].Completed == 0 {
			j++
		}
		freezes++
		peak := 0.0
		for k := max(i-1, 0); k <= min(j+1, len(ivs)-1); k++ {
			iv := ivs[k]
			if iv.Oldest == nil || iv.OldestMax == nil {
				t.Fatalf("interval at %gs has no oldest_inflight_ms", iv.StartS)
			}
			switch {
			case k < i || k > j:
			case *iv.Oldest >= 95:
				held++
			case iv.InFlight != nil && *iv.InFlight == 0:
				// A generator late on a loaded machine had nothing out
				// when the freeze began: its lateness, not a freeze
				// the interval hides.
				t.Logf("interval at %gs, inside a freeze, had no request out", iv.StartS)
			default:
				t.Errorf("interval at %gs, inside a freeze: oldest_inflight_ms %.1f, want at least its 100 ms", iv.StartS, *iv.Oldest)
			}
			peak = max(peak, *iv.OldestMax)
		}
		if peak < 150 {
			t.Errorf("the freeze at %gs: oldest_inflight_max_ms reaches %.1f ms, want 150 or more", ivs[i].StartS, peak)
		}
		t.Logf("freeze at %.1fs: intervals %d..%d, oldest at their ends %v ms, peak %.1f ms", ivs[i].StartS, i, j, oldestOf(ivs[i:j+1]), peak)
		i = j
	}
	// The server's clock starts before the run's: 2 freezes, or 1 when
	// setting up took the first.
	if freezes < 1 || freezes > 2 || held == 0 {
		t.Errorf("%d freezes in the intervals, want the 2 of a 5 s run; %d frozen intervals show the oldest request held", freezes, held)
	}
	// The interval plot of it draws.
	if code, _, stderr := pacer(t, "report", path, "--plot", filepath.Join(dir, "freeze.png")); !runOK(code) {
		t.Fatalf("report --plot: exit %d: %s", code, stderr)
	}
}

// freezeInterval is what the test reads of an interval.
type freezeInterval struct {
	StartS    float64  `json:"start_s"`
	DurationS float64  `json:"duration_s"`
	Scheduled uint64   `json:"scheduled"`
	Completed uint64   `json:"completed"`
	Oldest    *float64 `json:"oldest_inflight_ms"`
	OldestMax *float64 `json:"oldest_inflight_max_ms"`
	InFlight  *uint64  `json:"in_flight"`
}

func oldestOf(ivs []freezeInterval) []float64 {
	var out []float64
	for _, iv := range ivs {
		if iv.Oldest != nil {
			out = append(out, *iv.Oldest)
		}
	}
	return out
}
