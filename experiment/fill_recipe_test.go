package experiment

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/scenarios"
)

func TestFillRecipe(t *testing.T) {
	r, err := FillRecipe("SET key:__key__ __data__", 10, scenarios.FixedSize(3))
	if err != nil || r.ID() == "" {
		t.Fatalf("FillRecipe = %v, %v", r, err)
	}
	for tmpl, want := range map[string]string{
		"SET k v":          `--command "SET k v" has no __key__`,
		`SET "k:__key__ v`: "--command: ",
	} {
		if _, err := FillRecipe(tmpl, 10, scenarios.FixedSize(3)); err == nil || !strings.Contains(usagetest.CLI(err), want) || !usage.Is(err) {
			t.Errorf("%q: %v, want a usage error with %q", tmpl, err, want)
		}
	}
}

// TestNewFill: a fill is its recipe over the keys, within the closed
// loop's in-flight budget: 16 connections × 64 commands of 2 MB values
// hold 2 GiB, more than MaxClosedInFlight, a usage error naming it; a
// template without the key placeholder is refused as FillRecipe refuses it.
func TestNewFill(t *testing.T) {
	fc, err := NewFill(FillCommand, 1000, scenarios.FixedSize(3), 16, 64)
	if err != nil || fc.Recipe == nil || fc.Keys != 1000 || fc.Conns != 16 || fc.Pipeline != 64 {
		t.Fatalf("NewFill = %+v, %v", fc, err)
	}
	if _, err := NewFill(FillCommand, 1000, scenarios.FixedSize(2<<20), 16, 64); err == nil || !usage.Is(err) || !strings.Contains(usagetest.CLI(err), "(the largest command of fill)") {
		t.Errorf("2 GiB in flight: %v, want a usage error", err)
	}
	if _, err := NewFill("SET k v", 1000, scenarios.FixedSize(3), 16, 64); err == nil || !usage.Is(err) {
		t.Errorf("no key placeholder: %v", err)
	}
}
