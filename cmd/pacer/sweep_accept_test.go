package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
)

// Issue 12, "what it must reach": against the embedded target with an
// exponential service time of mean 100 µs and against a real
// redis-server, `sweep --search --slo 'p99<=1ms'` converges within 12
// steps and two searches agree within 10%; a closed sweep over
// -c 1,5,10,50,200 names the knee, and where the server is the bottleneck
// its Little's-law column matches the measured mean within 10%.
//
// These run real loads for about a minute in all (steps of 800 ms after a
// 200 ms settle), so -short skips them, and so does the race detector. The
// search's own rules keep it steady against a neighbour's burst of CPU
// (a failure must repeat, a step that meets the SLO on service time
// passes); but where the machine's own scheduling noise reaches the 1 ms
// bound at every rate, no search can tell the server's limit, and the
// agreement check says so and is skipped (noiseFloor).

// searchOnce runs one search and returns its sustainable rate, steps and
// step table.
func searchOnce(t *testing.T, target []string) (float64, int, string) {
	t.Helper()
	args := append([]string{"sweep"}, target...)
	args = append(args, "--search", "--slo", "p99<=1ms", "--step-duration", "800ms", "--settle", "200ms", "-q")
	doc, stdout, stderr := sweepJSON(t, []int{exitOK, exitSLO, exitUntrusted}, args...)
	s := doc.Sweep
	if s == nil || s.SustainableRate == nil {
		t.Fatalf("%v: no sustainable rate\n%s%s", target, stdout, stderr)
	}
	if !s.Converged || s.Steps > defaultMaxSteps {
		t.Errorf("%v: converged %v in %d steps (%s), want converged within %d\n%s", target, s.Converged, s.Steps, s.Reason, defaultMaxSteps, stdout)
	}
	return *s.SustainableRate, s.Steps, stdout
}

// noiseFloor is the worst service-time p99 of a light and of a moderate
// load (1k/s and 16k/s for 1 s each) on a target whose own share is a few
// microseconds (the embedded target without delay, or redis-server): what
// the machine's scheduling adds to every step.
func noiseFloor(t *testing.T, target []string) float64 {
	t.Helper()
	floor := 0.0
	for _, rate := range []string{"1k", "16k"} {
		args := append([]string{"run"}, target...)
		args = append(args, "--rate", rate, "--duration", "1s", "-t", "get", "-q", "--lag-limit", "1s")
		doc, _ := runJSON(t, anyVerdict, args...)
		floor = max(floor, doc.Tests[0].Service.P99)
	}
	return floor
}

// maxNoiseFloor is the noise floor above which a 1 ms p99 SLO measures
// the machine, not the server: half the bound.
const maxNoiseFloor = 0.5

func TestSweepSearchAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real searches of about 10 s each")
	}
	if raceEnabled {
		t.Skip("the race detector slows pacer several times: a 1 ms SLO would measure it, not the server")
	}
	srv := redistest.Start(t)
	var skipped []string
	for _, tc := range []struct {
		name        string
		target      []string
		calibration []string // the same machine, without the server's share
	}{
		{"embedded exp:100us", []string{"--embedded", "--delay", "exp:100us"}, []string{"--embedded"}},
		{"redis-server", hostPort(t, srv.Addr), hostPort(t, srv.Addr)},
	} {
		// A search for p99 <= 1 ms is a measurement of the server only
		// where the machine itself stays well below 1 ms; on a machine
		// whose neighbours keep both cores busy it is not, and two
		// searches then measure two moments of the neighbours.
		if floor := noiseFloor(t, tc.calibration); floor > maxNoiseFloor {
			skipped = append(skipped, fmt.Sprintf("%s: the machine's noise floor (service p99 %.3f ms at 1k or 16k/s) is above %.1f ms, half the SLO", tc.name, floor, maxNoiseFloor))
			continue
		}
		a, na, outA := searchOnce(t, tc.target)
		b, nb, outB := searchOnce(t, tc.target)
		if floor := noiseFloor(t, tc.calibration); floor > maxNoiseFloor {
			skipped = append(skipped, fmt.Sprintf("%s: the machine's noise floor rose to a service p99 of %.3f ms during the searches (%.0f/s and %.0f/s)", tc.name, floor, a, b))
			continue
		}
		t.Logf("%s: sustainable %.0f/s in %d steps, then %.0f/s in %d steps\n%s\n%s", tc.name, a, na, b, nb, outA, outB)
		if d := math.Abs(a-b) / math.Min(a, b); d > 0.10 {
			t.Errorf("%s: two searches found %.0f/s and %.0f/s: %.1f%% apart, want within 10%%", tc.name, a, b, 100*d)
		}
	}
	switch {
	case len(skipped) == 2:
		t.Skip("SKIPPED, too noisy to judge: " + strings.Join(skipped, "; "))
	case len(skipped) == 1:
		t.Log("SKIPPED " + skipped[0])
	}
}

func TestSweepClosedNamesTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a closed sweep of 5 s")
	}
	if raceEnabled {
		t.Skip("the race detector slows the client several times: Little's law would measure it")
	}
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name   string
		target []string
		// little: check Little's law from the knee on, where the server
		// is the bottleneck.
		little bool
	}{
		// One command at a time, 100 µs each on average: the server is
		// the bottleneck from a few clients on.
		{"embedded exp:100us", []string{"--embedded", "--delay", "exp:100us"}, true},
		{"redis-server", hostPort(t, srv.Addr), false},
	} {
		args := append([]string{"sweep"}, tc.target...)
		args = append(args, "--closed", "-c", "1,5,10,50,200", "--step-duration", "1s", "-q")
		doc, stdout, _ := sweepJSON(t, []int{exitOK}, args...)
		t.Logf("%s:\n%s", tc.name, stdout)
		s := doc.Sweep
		if s == nil || len(s.Points) != 5 {
			t.Fatalf("%s: sweep %+v", tc.name, s)
		}
		if s.Knee == nil {
			t.Errorf("%s: no knee named", tc.name)
			continue
		}
		if !tc.little {
			continue
		}
		var bad []string
		for _, p := range s.Points {
			if p.Clients >= s.Knee.Clients && math.Abs(p.LittleRatio-1) > 0.10 {
				bad = append(bad, fmt.Sprintf("-c %d: little %.3f ms against a mean of %.3f ms", p.Clients, p.LittleMs, p.MeanMs))
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s: Little's law is off by more than 10%% beyond the knee (-c %d): %s", tc.name, s.Knee.Clients, strings.Join(bad, "; "))
		}
	}
}
