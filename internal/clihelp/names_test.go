package clihelp

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestCacheNames: every flag type pacer uses keeps its names (a v1-style
// "name, alias" included), its type behind Unwrap, and parses as before.
func TestCacheNames(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "host", Aliases: []string{"H"}},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
		&cli.DurationFlag{Name: "duration"},
		&cli.IntFlag{Name: "clients", Aliases: []string{"c"}},
		&cli.Int64Flag{Name: "i64"},
		&cli.Uint64Flag{Name: "seed"},
		&cli.Float64Flag{Name: "error-rate"},
		&cli.StringSliceFlag{Name: "command"},
		&cli.StringFlag{Name: "old, o"}, // urfave cuts it at the comma
		&cli.GenericFlag{Name: "generic", Value: &cli.StringSlice{}},
	}
	var got map[string]any
	cmd := &cli.Command{Name: "x", Flags: slices.Clone(flags), Action: func(c *cli.Context) error {
		got = map[string]any{"host": c.String("host"), "quiet": c.Bool("quiet"), "duration": c.Duration("duration"),
			"clients": c.Int("clients"), "i64": c.Int64("i64"), "seed": c.Uint64("seed"), "error-rate": c.Float64("error-rate"),
			"command": c.StringSlice("command"), "old": c.String("old"), "c set": c.IsSet("clients"), "seed set": c.IsSet("seed")}
		return nil
	}}
	CacheNames([]*cli.Command{cmd})
	for i, f := range cmd.Flags {
		if !slices.Equal(f.Names(), flags[i].Names()) {
			t.Errorf("%T: names %q, want %q", flags[i], f.Names(), flags[i].Names())
		}
		if Unwrap(f) != flags[i] {
			t.Errorf("%T: Unwrap gives %T", flags[i], Unwrap(f))
		}
	}
	if _, wrapped := cmd.Flags[len(flags)-1].(interface{ Unwrap() cli.Flag }); wrapped {
		t.Error("a GenericFlag was wrapped")
	}
	app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{cmd}}
	err := app.Run([]string{"p", "x", "-H", "a", "-q", "--duration", "2s", "-c", "3", "--i64", "-4", "--error-rate", "0.5",
		"--command", "SET", "--command", "GET", "--old", "v"})
	want := map[string]any{"host": "a", "quiet": true, "duration": 2 * time.Second, "clients": 3, "i64": int64(-4), "seed": uint64(0),
		"error-rate": 0.5, "command": []string{"SET", "GET"}, "old": "v", "c set": true, "seed set": false}
	if err != nil || len(got) != len(want) {
		t.Fatalf("run: %v, got %v", err, got)
	}
	for k, v := range want {
		if g := got[k]; !equal(g, v) {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
}

func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, _ := b.([]string)
		return slices.Equal(as, bs)
	}
	return a == b
}
