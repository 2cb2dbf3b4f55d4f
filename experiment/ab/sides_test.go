package ab

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// embeddedSides starts two embedded targets, closed when t ends, and
// returns them with the sides that drive them in this process.
func embeddedSides(t *testing.T) (a, b *embedded.Server, sides [2]Side) {
	t.Helper()
	a, b = embedded.MustStart(embedded.Config{}), embedded.MustStart(embedded.Config{})
	t.Cleanup(func() {
		a.Close()
		b.Close()
	})
	return a, b, [2]Side{{Env: experiment.InProcessEnv(a.Addr())}, {Env: experiment.InProcessEnv(b.Addr())}}
}

// sidesWithBGone starts an embedded target for side A, closed when t
// ends, and gives side B an address nobody listens on.
func sidesWithBGone(t *testing.T) (*embedded.Server, [2]Side) {
	t.Helper()
	a := embedded.MustStart(embedded.Config{})
	t.Cleanup(func() { a.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	return a, [2]Side{{Env: experiment.InProcessEnv(a.Addr())}, {Env: experiment.InProcessEnv(gone)}}
}

func dbsize(t *testing.T, addr string) int64 {
	t.Helper()
	v, err := conn.Do(context.Background(), conn.Options{Addr: addr}, "DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	return v.Int
}

// TestFillBothSidesAlike: both embedded targets hold every key once after
// Fill, A filled before B, each fill seen as it ends.
func TestFillBothSidesAlike(t *testing.T) {
	t.Parallel()
	a, b, sides := embeddedSides(t)
	var seen []int
	done, err := Fill(context.Background(), sides, 300, scenarios.FixedSize(16), Config{Seed: 7, Interval: time.Second},
		func(s int, res *scheduler.Result) {
			seen = append(seen, s)
			if res.Counts.Completed != 300 {
				t.Errorf("side %s: %d keys written, want 300", SideName(s), res.Counts.Completed)
			}
		})
	if !done || err != nil {
		t.Fatalf("done %v, err %v", done, err)
	}
	if len(seen) != 2 || seen[0] != A || seen[1] != B {
		t.Errorf("fills seen in the order %v, want A then B", seen)
	}
	for _, srv := range []*embedded.Server{a, b} {
		if n := dbsize(t, srv.Addr()); n != 300 {
			t.Errorf("%s: %d keys, want 300", srv.Addr(), n)
		}
	}
}

// TestFillNamesTheSideThatFailed: B's target listens to nobody: A is
// filled, B's failure is a FillError naming it.
func TestFillNamesTheSideThatFailed(t *testing.T) {
	t.Parallel()
	a, sides := sidesWithBGone(t)
	_, err := Fill(context.Background(), sides, 10, scenarios.FixedSize(8), Config{Seed: 1, Interval: time.Second}, nil)
	var fe *FillError
	if !errors.As(err, &fe) || fe.Side != B || fe.Err == nil {
		t.Fatalf("err %v, want a FillError of side b", err)
	}
	if n := dbsize(t, a.Addr()); n != 10 {
		t.Errorf("a: %d keys, want 10", n)
	}
}

// TestOtherSide: B's environment shares A's settings, with its own target
// and the server it asked.
func TestOtherSide(t *testing.T) {
	t.Parallel()
	a, b := embedded.MustStart(embedded.Config{}), embedded.MustStart(embedded.Config{})
	defer a.Close()
	defer b.Close()
	envA := experiment.InProcessEnv(a.Addr())
	envA.Quiet = true
	envB := Other(context.Background(), envA, conn.Options{Addr: b.Addr(), Now: scheduler.Now}, nil)
	if envB == envA || envB.Target == envA.Target || envB.Target.Options.Addr != b.Addr() || !envB.Quiet || !envB.InProcess {
		t.Fatalf("B's environment %+v", envB)
	}
	if envB.Server == nil || !envB.Server.ID.Available {
		t.Errorf("B's server was not asked: %+v", envB.Server)
	}
	if envA.Target.Options.Addr != a.Addr() {
		t.Errorf("A's target changed to %s", envA.Target.Options.Addr)
	}
}

func TestSession(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 5)
	// The seed and the start in nanoseconds, in base 36.
	if got, want := Session(36, start), "10-"+strconv.FormatInt(1700000000000000005, 36); got != want {
		t.Errorf("Session = %q, want %q", got, want)
	}
	if Session(1, start) == Session(2, start) || Session(1, start) == Session(1, start.Add(time.Nanosecond)) {
		t.Error("sessions of different seeds or starts alike")
	}
	if Session(3, start) != Session(3, start) {
		t.Error("a session's name is not its seed and start")
	}
}

// TestDocumentPoolsTheRounds: two rounds of a closed loop on each side
// become one test per side whose runs are the rounds; no target was lost.
func TestDocumentPoolsTheRounds(t *testing.T) {
	t.Parallel()
	_, _, sides := embeddedSides(t)
	tests := []experiment.Test{experiment.Command("ping", "PING", "PING")}
	cfg := Config{Tests: tests, Rounds: 2, RoundDuration: 100 * time.Millisecond, Conns: 1, Seed: 3,
		Interval: 50 * time.Millisecond, Closed: &Closed{Pipeline: 1}}
	res := Measure(context.Background(), sides, cfg, nil, nil)
	if res.Err != nil || res.Interrupted {
		t.Fatalf("err %v, interrupted %v", res.Err, res.Interrupted)
	}
	for s := range 2 {
		doc := report.NewDocument("closed", "test", nil)
		lost, err := res.Document(s, tests, doc)
		if err != nil || lost != nil {
			t.Fatalf("side %s: lost %+v, err %v", SideName(s), lost, err)
		}
		if len(doc.Tests) != 1 || doc.Tests[0].ID != "ping" || doc.Tests[0].Repeats == nil || doc.Tests[0].Repeats.N != 2 {
			t.Fatalf("side %s: tests %+v", SideName(s), doc.Tests)
		}
		if len(doc.Tests[0].ResponsePercentiles) == 0 {
			t.Errorf("side %s: no percentiles", SideName(s))
		}
	}
}

// TestSidePathAndLost: each side's file is named by the side before the
// extension, and a lost target names its side and test on one line.
func TestSidePathAndLost(t *testing.T) {
	for _, c := range []struct{ path, a, b string }{
		{"run.json", "run.a.json", "run.b.json"},
		{"out/ab", "out/ab.a", "out/ab.b"},
		{"dir.v2/r.json", "dir.v2/r.a.json", "dir.v2/r.b.json"},
	} {
		if a, b := SidePath(c.path, A), SidePath(c.path, B); a != c.a || b != c.b {
			t.Errorf("%s: %s and %s, want %s and %s", c.path, a, b, c.a, c.b)
		}
	}
	l := &Lost{Side: B, Test: "get", Reason: "connection refused\nafter 3 tries"}
	if got, want := l.Error(), "b: get: target lost: connection refused after 3 tries"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
