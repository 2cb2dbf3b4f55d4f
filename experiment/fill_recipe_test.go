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
