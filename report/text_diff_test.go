package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
)

func TestDiffText(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := text.DiffText(&b, report.DiffFixture()); err != nil {
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
	d := report.DiffFixture()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !report.IsDiff(b) || report.IsDiff([]byte(`{"schema":"pacer.result/v1"}`)) {
		t.Fatal("IsDiff")
	}
	back, err := report.ReadDiff(b)
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
		if _, err := report.ReadDiff([]byte(bad)); err == nil {
			t.Errorf("%s: read", bad)
		}
	}
}
