package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

func TestReadInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `{"schema": "` + Schema + `", "tests": []}`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("a.json", doc), write("x/r.json", doc), write("y/r.json", "\n\t "+doc)
	in, err := ReadInputs(t.Context(), []string{a, b, c, "-"}, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, x := range in {
		labels = append(labels, x.Label)
	}
	if want := []string{"a.json", b, c, "stdin"}; strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", labels, want)
	}
	for _, tc := range []struct {
		paths []string
		stdin string
		want  string
	}{
		{[]string{"-", "-"}, doc, "- (stdin) given twice"},
		{[]string{"-"}, "", "-: empty: not a result document"},
		{[]string{"-"}, "  [1]", "-: not a result document (a JSON object written by --json, or redis-benchmark --csv)"},
		{[]string{write("bad.json", `{"schema": "other"}`)}, "", "not a pacer result"},
		{[]string{filepath.Join(dir, "none.json")}, "", "none.json: open"},
	} {
		_, err := ReadInputs(t.Context(), tc.paths, strings.NewReader(tc.stdin))
		if err == nil || !strings.Contains(usagetest.CLI(err), tc.want) || !usage.Is(err) {
			t.Errorf("%q: %v, want a usage error with %q", tc.paths, err, tc.want)
		}
	}
}
