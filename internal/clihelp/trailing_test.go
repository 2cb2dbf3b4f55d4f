package clihelp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/internal/usage"
)

// TestTrailing: flags after the files, with and without =, booleans,
// "-" as a path, and the usage errors.
func TestTrailing(t *testing.T) {
	var o string
	var q bool
	paths, set, err := Trailing([]string{"a.json", "-", "--o", "x.json", "-q", "b.json"}, map[string]*string{"o": &o}, map[string]*bool{"q": &q})
	if err != nil || !reflect.DeepEqual(paths, []string{"a.json", "-", "b.json"}) || o != "x.json" || !q || !set["o"] {
		t.Fatalf("%q %v %q %v %v", paths, set, o, q, err)
	}
	if _, set, err = Trailing([]string{"a.json", "-o=y.json"}, map[string]*string{"o": &o}, nil); err != nil || o != "y.json" || !set["o"] {
		t.Fatalf("-o=: %q %v %v", o, set, err)
	}
	for _, args := range [][]string{{"a.json", "--nope"}, {"a.json", "-o"}} {
		if _, _, err := Trailing(args, map[string]*string{"o": &o}, nil); !usage.Is(err) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

func TestTrailingLists(t *testing.T) {
	var labels []string
	var plot string
	paths, set, err := TrailingLists([]string{"a.json", "--label", "a.json=A", "-", "--label=b.json=B", "--plot", "x.png"},
		map[string]*string{"plot": &plot}, nil, map[string]*[]string{"label": &labels})
	if err != nil || strings.Join(paths, " ") != "a.json -" || strings.Join(labels, " ") != "a.json=A b.json=B" || plot != "x.png" || !set["label"] {
		t.Fatalf("paths %q labels %q plot %q err %v", paths, labels, plot, err)
	}
	if _, _, err := TrailingLists([]string{"a.json", "--label"}, nil, nil, map[string]*[]string{"label": &labels}); err == nil || !strings.Contains(err.Error(), "needs an argument") {
		t.Fatalf("a --label without its value: %v", err)
	}
}

func TestFlagsFirst(t *testing.T) {
	flags := []cli.Flag{&cli.BoolFlag{Name: "dry-run"}, &cli.Float64Flag{Name: "speed"}, &cli.StringFlag{Name: "json", Aliases: []string{"j"}}}
	for _, c := range []struct{ in, want string }{
		{"trace.txt --speed 2", "--speed 2 trace.txt"},
		{"--speed 2 trace.txt", "--speed 2 trace.txt"},
		{"trace.txt --speed=2 --dry-run -j out.json", "--speed=2 --dry-run -j out.json trace.txt"},
		{"a.json --speed -1 b.json", "--speed -1 a.json b.json"},
		{"- --dry-run", "--dry-run -"},
		{"trace.txt --unknown x", "--unknown trace.txt x"},
		{"trace.txt -- --speed 2", "trace.txt -- --speed 2"},
		{"trace.txt --speed", "trace.txt --speed"},
	} {
		got := strings.Join(FlagsFirst(flags, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
