package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/experiment/sweep"
	"github.com/pacer-load/pacer/report"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// The acceptance of closed sweeps: a closed sweep over -c 1,5,10,50,200
// names the knee, and where the server is the bottleneck its Little's-law
// column matches the measured mean within 10%.
//
// The other half, two searches for p99<=1ms agreeing within 10%, is a
// property of the machine's noise as much as of the search (on this VM
// redis-server's p99 sits at 0.6-1.0 ms from 1k/s to 400k/s), so it is
// measured by bench/search, not asserted here; the search's rules
// (convergence within 12 steps, a failure confirmed apart in time) are
// tested without a clock in search_test.go.

func TestSweepClosedNamesTheKnee(t *testing.T) {
	testrun.SkipShort(t, "two closed sweeps of 2.5 s")
	testrun.SkipRace(t, "it slows the client several times: Little's law would measure it")
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
		args = append(args, "--closed", "-c", "1,5,10,50,200", "--step-duration", "500ms", "-q")
		doc, stdout, _ := sweepJSON(t, []int{exitOK}, args...)
		t.Logf("%s:\n%s", tc.name, stdout)
		s := doc.Sweep
		if s == nil || len(s.Points) != 5 {
			t.Fatalf("%s: sweep %+v", tc.name, s)
		}
		if s.Knee == nil {
			// redis-server's throughput on a shared 2-core machine can
			// still gain 5% from -c 50 to 200 (the client's threads get
			// more of the CPUs): then no point meets the rule, which is
			// what the document must say. Where the server is the
			// bottleneck (little), a knee must be named.
			pts := make([]report.ClosedPoint, len(s.Points))
			for i, p := range s.Points {
				pts[i] = report.ClosedPoint{Clients: p.Clients, Pipeline: p.Pipeline, Throughput: p.Throughput, P99Ms: p.P99Ms}
			}
			if k := sweep.FindKnee(pts); tc.little || k >= 0 {
				t.Errorf("%s: no knee named (the rule names point %d)", tc.name, k)
			} else {
				t.Logf("%s: every point gained 5%% or more: no knee in this range", tc.name)
			}
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
