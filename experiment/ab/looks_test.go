package ab_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/ab"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/stats"
	"github.com/pacer-load/pacer/timeline"
)

// lookSession measures a PING test in rounds of 200 ms against two
// embedded targets with a budget, looking as decide says, and returns
// the result, the looks taken and the sides of the runs in order.
func lookSession(t *testing.T, budget time.Duration, decide func(*ab.Result, ab.Look) bool) (*ab.Result, []ab.Look, []int) {
	t.Helper()
	var sides [2]ab.Side
	for s := range sides {
		srv := embedded.MustStart(embedded.Config{})
		t.Cleanup(func() { srv.Close() })
		sides[s] = ab.Side{Env: experiment.InProcessEnv(srv.Addr())}
	}
	tests := []experiment.Test{experiment.Command("ping", "PING", "PING")}
	cfg := ab.Config{Tests: tests, Rounds: 2, RoundDuration: 200 * time.Millisecond, Conns: 2, Interval: 100 * time.Millisecond,
		Open: &ab.Open{Rate: timeline.RatePerSecond(1000), Arrival: "uniform"}, Budget: budget}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var looks []ab.Look
	var order []int
	res := ab.Measure(ctx, sides, cfg, func(r ab.Run) { order = append(order, r.Side) }, func(r *ab.Result, l ab.Look) bool {
		if n := r.Runs[ab.A][l.Test].Len(); n != l.Rounds || r.Runs[ab.B][l.Test].Len() != l.Rounds {
			t.Errorf("look %d: %d and %d runs measured, want the %d rounds of both sides", l.N, n, r.Runs[ab.B][l.Test].Len(), l.Rounds)
		}
		looks = append(looks, l)
		return decide(r, l)
	})
	if res.Err != nil || res.Interrupted {
		t.Fatalf("measure: %v, interrupted %v", res.Err, res.Interrupted)
	}
	return res, looks, order
}

// TestLooksUntilTheGateDecides: with a budget, a test is looked at after
// its planned rounds (at 95%) and after every two more (at Bonferroni's
// level for the looks the budget holds), in the order A B B A A B …,
// until a look decides; the result says how the budget was used.
func TestLooksUntilTheGateDecides(t *testing.T) {
	t.Parallel()
	res, looks, order := lookSession(t, 20*time.Second, func(_ *ab.Result, l ab.Look) bool { return l.N == 3 })
	if len(looks) != 3 {
		t.Fatalf("%d looks, want 3: %+v", len(looks), looks)
	}
	planned := looks[0].Planned
	for i, l := range looks {
		want := stats.Bonferroni(stats.Level, planned)
		if i == 0 {
			want = stats.Level
		}
		if l.N != i+1 || l.Rounds != 2+2*i || l.Planned != planned || l.Level != want {
			t.Errorf("look %d: %+v, want rounds %d of %d planned looks at %.4f", i+1, l, 2+2*i, planned, want)
		}
	}
	if planned < 4 {
		t.Errorf("a budget of 20 s holds %d looks of rounds of 2 × 200 ms, want many more", planned)
	}
	for round := range 6 {
		for k, s := range ab.Order(round) {
			if i := 2*round + k; i >= len(order) || order[i] != s {
				t.Fatalf("runs in the order %v, want A B, B A, … for 6 rounds", order)
			}
		}
	}
	want := diff.Decide{BudgetS: 20, Rounds: 6, PlannedRounds: 2, Looks: 3, PlannedLooks: planned, Level: looks[2].Level, Decided: true, By: "sequential"}
	if got := res.Decide[0]; got == nil || *got != want {
		t.Errorf("decide %+v, want %+v", got, want)
	}
	if d := res.Decides([]experiment.Test{experiment.Command("ping", "PING", "PING")}); d["ping"] != res.Decide[0] {
		t.Errorf("decides by test ID: %v", d)
	}
}

// TestLooksEndWithTheBudget: a gate that never decides takes the looks
// the budget holds and no more (fewer when the rounds slow down: a
// loaded host may leave room for the first alone), and the result says
// it ran out; a first look that decides ends the planned rounds at once.
func TestLooksEndWithTheBudget(t *testing.T) {
	t.Parallel()
	res, looks, _ := lookSession(t, 5*time.Second, func(*ab.Result, ab.Look) bool { return false })
	last := looks[len(looks)-1]
	d := res.Decide[0]
	if d == nil || d.Decided || d.By != "budget" || d.Looks != last.N || d.Looks != len(looks) || d.Rounds != 2+2*(last.N-1) || last.N > last.Planned {
		t.Fatalf("decide %+v after looks %+v: want the budget's looks, undecided", d, looks)
	}
	t.Logf("%d looks of %d planned, %d rounds", len(looks), last.Planned, d.Rounds)
	res, looks, _ = lookSession(t, 5*time.Second, func(*ab.Result, ab.Look) bool { return true })
	if len(looks) != 1 || res.Decide[0].By != "first look" || res.Decide[0].Rounds != 2 || res.Decide[0].Level != stats.Level {
		t.Fatalf("decide %+v after looks %+v: want the first look's decision after the planned 2 rounds", res.Decide[0], looks)
	}
}

// TestLooksSimulated measures the looks' rule where the truth is known:
// the rounds' log change of a percentile drawn around a known change,
// with the spread this VM's rounds show at p99 (sd 0.17) or with spikes
// (15% of rounds ±1 in log), judged by the gate's test (the paired
// interval against a 10% allowance) after 6 rounds at 95% and after
// every two more at LookLevel, as Measure looks, up to the rounds a
// budget holds. At a change right on the allowance, where failing and
// passing are both wrong, each must stay under 5%; more looks must
// decide more often where the answer is clear. The table it logs is the
// one docs/diff.md quotes.
func TestLooksSimulated(t *testing.T) {
	t.Parallel()
	const trials, allowance = 4000, 0.10
	rng := rand.New(rand.NewPCG(38, 34))
	normal := func() float64 { return 0.17 * rng.NormFloat64() }
	spiky := func() float64 {
		v := 0.08 * rng.NormFloat64()
		if rng.Float64() < 0.15 {
			v += float64(2*rng.IntN(2) - 1)
		}
		return v
	}
	type rate struct{ fail, pass, rounds float64 }
	session := func(noise func() float64, change float64, maxRounds int) rate {
		var r rate
		planned := 1 + (maxRounds-6)/2
		for range trials {
			var base, cand []float64
			out := stats.Unsure
			for n := 1; ; n++ {
				for len(base) < 6+2*(n-1) {
					base, cand = append(base, 1), append(cand, math.Exp(math.Log1p(change)+noise()))
				}
				ch, err := stats.ChangePaired(base, cand, stats.Relative, ab.LookLevel(n, planned))
				if err != nil {
					t.Fatal(err)
				}
				if out = ch.Against(allowance, stats.HigherIsWorse); out != stats.Unsure || n == planned {
					break
				}
			}
			r.rounds += float64(len(base)) / trials
			switch out {
			case stats.Exceeded:
				r.fail += 1.0 / trials
			case stats.Within:
				r.pass += 1.0 / trials
			}
		}
		return r
	}
	for _, nz := range []struct {
		name  string
		noise func() float64
	}{{"sd 0.17", normal}, {"spiky", spiky}} {
		for _, change := range []float64{0, allowance, 0.3, 1} {
			var prev rate
			for i, maxRounds := range []int{6, 12, 24} {
				r := session(nz.noise, change, maxRounds)
				t.Logf("%-8s change %+4.0f%% up to %2d rounds: fail %5.1f%%, pass %5.1f%%, mean rounds %4.1f", nz.name, 100*change, maxRounds, 100*r.fail, 100*r.pass, r.rounds)
				switch {
				case change == allowance && (r.fail > 0.05 || r.pass > 0.05):
					t.Errorf("%s, change on the allowance, up to %d rounds: fail %.1f%%, pass %.1f%%: want each under 5%%", nz.name, maxRounds, 100*r.fail, 100*r.pass)
				case change == 0 && r.fail > 0.01:
					t.Errorf("%s, no change, up to %d rounds: failed %.1f%%", nz.name, maxRounds, 100*r.fail)
				case change > allowance && r.pass > 0.01:
					t.Errorf("%s, %+.0f%%, up to %d rounds: passed %.1f%%, want under 1%%", nz.name, 100*change, maxRounds, 100*r.pass)
				case i > 0 && change != allowance && r.fail+r.pass < prev.fail+prev.pass-0.02:
					t.Errorf("%s, %+.0f%%: %d rounds decided %.1f%%, fewer than %.1f%% with fewer rounds", nz.name, 100*change, maxRounds, 100*(r.fail+r.pass), 100*(prev.fail+prev.pass))
				}
				prev = r
			}
		}
	}
}

// TestLookAtDecidesTheGate: pacer ab's look compares the rounds so far
// as the session's end does and reports the gate's decision for the
// test: two identical targets at one rate deliver it alike, so a
// throughput clause decides (pass) at a look, and no look follows it,
// unless the rounds were not to be trusted (a loaded host made pacer
// late: beside two busy loops every round is), which the gate must then
// say; a clause no interval can meet (p50 within 0.001%) decides at
// none, and the budget ends the rounds.
func TestLookAtDecidesTheGate(t *testing.T) {
	t.Parallel()
	tests := []experiment.Test{experiment.Command("ping", "PING", "PING")}
	newDoc := func(s int) *report.Document {
		doc := report.NewDocument("open", "test", nil)
		doc.Config = map[string]any{"ab": map[string]any{"session": "s1", "side": ab.SideName(s)}}
		return doc
	}
	labels, targets := [2]string{"a", "b"}, [2]string{"A", "B"}
	for _, c := range []struct {
		gate   string
		decide bool
		budget time.Duration
	}{{"throughput:5%", true, 10 * time.Second}, {"p50:0.001%", false, 5 * time.Second}} {
		g, err := diff.ParseGate(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		o := diff.Options{Gate: g}
		var decided []bool
		var why string // the gate's reason at the last look
		_, looks, _ := lookSession(t, c.budget, func(r *ab.Result, l ab.Look) bool {
			ok := r.LookAt(l, tests, newDoc, labels, targets, o)
			decided = append(decided, ok)
			if docs, _, err := r.Documents(tests, newDoc); err == nil {
				if d, err := ab.Compare(docs, labels, targets, o); err == nil && d.Gate != nil {
					why = d.Gate.Reason
				}
			}
			return ok
		})
		last := len(decided) - 1
		for i, d := range decided[:last] {
			if d {
				t.Fatalf("%s: look %d decided, and look %d followed it: %+v", c.gate, i+1, i+2, looks)
			}
		}
		switch {
		case decided[last] && !c.decide:
			t.Errorf("%s decided at look %d: %s", c.gate, last+1, why)
		case !decided[last] && c.decide && !strings.Contains(why, "untrusted"):
			t.Errorf("%s: undecided after %d looks without an untrusted side: %s", c.gate, len(looks), why)
		case !decided[last] && c.decide:
			t.Logf("%s: undecided after %d looks, the host's doing: %s", c.gate, len(looks), why)
		}
	}
}
