package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/scenarios"
)

// workloadFlags are the flags that shape what is sent, shared by run,
// bench and compare (each adds -t, -d and -r in its own way).
func workloadFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mix", Usage: "send a weighted mix as one test: `NAME:WEIGHT,...` of catalogue tests (get, set, incr, ...) or named --command templates", Category: "workload"},
		&cli.StringSliceFlag{Name: "command", Usage: "a custom command `[NAME=]TEMPLATE` (repeatable); placeholders __rand_int__, __key__, __data__, {tag}", Category: "workload"},
		&cli.StringSliceFlag{Name: "command-weight", Usage: "weight of each --command, in order (default 1)", Category: "workload"},
		&cli.StringFlag{Name: "commands", Usage: "read templates from `FILE`: one per line, optional leading weight, # comments", Category: "workload"},
		&cli.StringFlag{Name: "key-dist", Value: "uniform", Usage: "distribution of __key__ and __rand_int__ over -r keys: uniform, sequential, zipf:S, gaussian:MEAN,SD", Category: "workload"},
	}
}

// workload is what one invocation sends: one or more tests.
type workload struct {
	opts  scenarios.Options
	keys  scenarios.KeyDist
	tests []workTest
	// mixed is set when --mix, --command or --commands built the test.
	mixed bool
}

// workTest is one test: a recipe compiled afresh for every sender.
type workTest struct {
	recipe *scenarios.Recipe
	title  string
	// names of the commands, for per-command results (nil for one).
	names []string
	// custom is set for a command given after the flags.
	custom bool
}

// stream builds a sender's command stream for the test.
func (w *workload) stream(t workTest, seed uint64) (*scenarios.Stream, error) {
	m, err := t.recipe.Build()
	if err != nil {
		return nil, err
	}
	return scenarios.NewMixStream(m, seed, w.keys), nil
}

// parseWorkload reads -d (sizes), -r, --key-dist, --mix, --command(s),
// -t and a trailing command into tests. defaultTests is used without -t.
func parseWorkload(c *cli.Context, sizes scenarios.Sizes, defaultTests string, trailing []string) (*workload, error) {
	w := &workload{opts: scenarios.Options{Sizes: sizes}}
	if c.IsSet("r") {
		n, err := strconv.ParseInt(c.String("r"), 10, 64)
		if err != nil {
			return nil, usageErrorf("-r %q: want a keyspace size", c.String("r"))
		}
		if n < 0 {
			return nil, usageErrorf("-r %d: must not be negative", n)
		}
		w.opts.Random, w.opts.Keyspace = true, uint64(n)
	}
	keys, err := scenarios.ParseKeyDist(c.String("key-dist"), w.opts.Keyspace)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if c.IsSet("key-dist") && !w.opts.Random {
		return nil, usageErrorf("--key-dist needs a keyspace: give -r N")
	}
	w.keys = keys

	var customs []scenarios.Custom
	for _, s := range c.StringSlice("command") {
		cu, err := scenarios.ParseCustom(s)
		if err != nil {
			return nil, usageErrorf("--command: %v", err)
		}
		customs = append(customs, cu)
	}
	weights := c.StringSlice("command-weight")
	if len(weights) > len(customs) {
		return nil, usageErrorf("%d --command-weight for %d --command", len(weights), len(customs))
	}
	for i, ws := range weights {
		v, err := strconv.ParseUint(ws, 10, 32)
		if err != nil || v == 0 {
			return nil, usageErrorf("--command-weight %q: want a whole number above 0", ws)
		}
		customs[i].Weight = v
	}
	if path := c.String("commands"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usageErrorf("--commands: %v", err)
		}
		more, err := scenarios.ParseCommandsFile(string(b))
		if err != nil {
			return nil, usageErrorf("--commands %s: %v", path, err)
		}
		customs = append(customs, more...)
	}
	mix := c.String("mix")
	if mix != "" && len(weights) > 0 {
		return nil, usageErrorf("--mix sets the weights: drop --command-weight")
	}
	if mix != "" || len(customs) > 0 {
		if c.IsSet("t") {
			return nil, usageErrorf("-t selects catalogue tests; use --mix to combine them with --command")
		}
		if len(trailing) > 0 {
			return nil, usageErrorf("a command after the flags cannot be combined with --mix or --command: use --command")
		}
		r, err := scenarios.BuildRecipe(mix, customs, w.opts)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if _, err := r.Build(); err != nil {
			return nil, usageErrorf("%v", err)
		}
		t := workTest{recipe: r, title: r.Title()}
		if len(r.Items) > 1 {
			t.names = r.Names()
		}
		w.tests, w.mixed = []workTest{t}, true
		return w, nil
	}
	if len(trailing) > 0 {
		r, err := scenarios.BuildRecipe("", []scenarios.Custom{{Name: strings.ToLower(trailing[0]), Args: trailing, Weight: 1}}, w.opts)
		if err == nil {
			_, err = r.Build()
		}
		if err != nil {
			return nil, usageErrorf("command: %v", err)
		}
		w.tests = []workTest{{recipe: r, title: scenarios.Title(trailing), custom: true}}
		return w, nil
	}
	list := defaultTests
	if c.IsSet("t") {
		list = c.String("t")
	}
	tests, err := scenarios.Select(list)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	for _, t := range tests {
		w.tests = append(w.tests, workTest{recipe: scenarios.TestRecipe(t, w.opts), title: t.Title})
	}
	return w, nil
}
