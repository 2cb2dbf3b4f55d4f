package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/report"
	reporttext "github.com/pacer-load/pacer/report/text"
)

func TestTextGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := reporttext.Text(&b, report.AsTest(t, resulttest.Sample(), nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	resulttest.Golden(t, "text.golden", b.Bytes())
}

func TestQuietGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := reporttext.Quiet(&b, report.AsTest(t, resulttest.Sample(), nil), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	resulttest.Golden(t, "quiet.golden", b.Bytes())
}

func TestAutoPacingShowsItsQuantum(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		quantum  time.Duration
		text     string
		jsonUsec float64
	}{
		{600 * time.Microsecond, "auto pacing (600 µs quantum)", 600},
		{0, "auto pacing (precise)", 0},
	} {
		r := resulttest.Sample()
		r.Pacing, r.PacingQuantum = "auto", c.quantum
		var b bytes.Buffer
		if err := reporttext.Text(&b, report.AsTest(t, r, nil), report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "50 connections, "+c.text+"\n") {
			t.Errorf("text lacks %q:\n%s", c.text, b.String())
		}
		tt, err := report.FromResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if tt.Pacing != "auto" || tt.PacingQuantumUs == nil || *tt.PacingQuantumUs != c.jsonUsec {
			t.Errorf("JSON pacing %q, quantum %v µs, want auto, %v", tt.Pacing, tt.PacingQuantumUs, c.jsonUsec)
		}
	}
}
