package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/diff"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/stats"
)

func TestDiffText(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := text.DiffText(&b, diffFixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testrun.Contains(t, out,
		"baseline:  before.json, pacer test",
		"candidate: after.json (redis://:xxxxx@127.0.0.1:6380), pacer test",
		`====== GET <b>"x"</b> ====== open, 5000 req/s; 3 runs against 3 runs (the spread between runs)`,
		"p50 (ms)                    0.300        0.390      +0.090 (+30.0%)      [+20.0%, +40.0%]  worse",
		"p99.99 (ms)", "[+20.0%, …]  cannot tell",
		"throughput (req/s)        5000.00      4999.00        -1.00 (-0.0%)        [-0.1%, +0.0%]  same",
		"errors (%)                  0.000        0.000               +0.000      [+0.000, +0.000]  same",
		"cannot tell:\n  p99.99: too few samples",
		"Not compared:\n  SET: only in the baseline",
		"gate --max-regression p99:10%: fail: p99 of GET",
	)
	// The table's columns line up: every figure's word starts at one
	// column.
	var at []int
	for l := range strings.Lines(out) {
		if !strings.Contains(l, " (ms) ") && !strings.Contains(l, " (req/s) ") && !strings.Contains(l, " (%) ") {
			continue
		}
		l = strings.TrimRight(l, "\n")
		for _, w := range []string{"worse", "better", "same", "cannot tell"} {
			if strings.HasSuffix(l, "  "+w) {
				at = append(at, len([]rune(strings.TrimSuffix(l, w))))
			}
		}
	}
	if len(at) != 5 || slices.Min(at) != slices.Max(at) {
		t.Errorf("the words start at columns %v:\n%s", at, out)
	}
}

func TestReadDiffRoundTrip(t *testing.T) {
	t.Parallel()
	d := diffFixture()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !diff.IsDocument(b) || diff.IsDocument([]byte(`{"schema":"pacer.result/v1"}`)) {
		t.Fatal("IsDiff")
	}
	back, err := diff.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	text.DiffText(&x, d)
	text.DiffText(&y, back)
	if x.String() != y.String() {
		t.Errorf("read back, the text differs:\n%s\nwant\n%s", y.String(), x.String())
	}
	for _, bad := range []string{
		`{"schema":"pacer.diff/v1","tests":[{"figures":[{"word":"maybe"}]}]}`,
		`{"schema":"pacer.diff/v1","tests":[{"figures":[{"word":"same","interval":[1]}]}]}`,
		`{"schema":"pacer.diff/v2"}`,
		`{"schema":`,
	} {
		if _, err := diff.Read([]byte(bad)); err == nil {
			t.Errorf("%s: read", bad)
		}
	}
}

// TestDiffTextOfALookedAtTest: a test of pacer ab --decide-within heads
// its interval column with its own level and says how it used the
// budget, and the words' line says the tables' levels differ; the
// document read back says the same.
func TestDiffTextOfALookedAtTest(t *testing.T) {
	t.Parallel()
	d := diffFixture()
	d.Tests[0].Decide = &diff.Decide{BudgetS: 300, Rounds: 10, PlannedRounds: 6, Looks: 3, PlannedLooks: 7, Level: stats.Bonferroni(stats.Level, 7), Decided: true, By: "sequential"}
	var b bytes.Buffer
	if err := text.DiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	testrun.Contains(t, b.String(),
		"change        99.3% interval  word",
		"  decided at look 3 of 7, after 10 rounds (6 planned; budget 5m0s): 99.3% intervals",
		"worse, better: the interval (95%, or the level a test's table names) excludes no change",
	)
	raw, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := diff.Read(raw)
	if err != nil || back.Tests[0].Decide == nil || *back.Tests[0].Decide != *d.Tests[0].Decide {
		t.Fatalf("read back: %v, decide %+v", err, back.Tests[0].Decide)
	}
	for _, c := range []struct {
		dec  diff.Decide
		want string
	}{
		{diff.Decide{BudgetS: 90, Rounds: 6, PlannedRounds: 6, Looks: 1, PlannedLooks: 2, Level: 0.95, Decided: true, By: "first look"}, "decided at the first look, after 6 rounds (6 planned; budget 1m30s): 95% intervals"},
		{diff.Decide{BudgetS: 90, Rounds: 8, PlannedRounds: 6, Looks: 2, PlannedLooks: 2, Level: 0.975, By: "budget"}, "undecided when the budget ran out: look 2 of 2, after 8 rounds (6 planned; budget 1m30s): 97.5% intervals"},
	} {
		if got := text.DecideText(&c.dec); got != c.want {
			t.Errorf("%+v: %q, want %q", c.dec, got, c.want)
		}
	}
}
