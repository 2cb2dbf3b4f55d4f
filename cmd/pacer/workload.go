package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/scenarios"
)

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

// id is the test's stable ID in the JSON (tests[].id): see
// scenarios.Recipe.ID.
func (t workTest) id() string { return t.recipe.ID() }

// stream builds a sender's command stream for the test.
func (w *workload) stream(t workTest, seed uint64) (*scenarios.Stream, error) {
	m, err := t.recipe.Build()
	if err != nil {
		return nil, err
	}
	return scenarios.NewMixStream(m, seed, w.keys), nil
}

// parseSizes reads -d. bench keeps redis-benchmark's clamp of a plain
// number below 1 to 1 byte; above scenarios.MaxValueSize every command refuses
// (redis-benchmark would clamp to 1 GiB, which Redis then rejects).
func parseSizes(c *cli.Context, benchClamp bool) (scenarios.Sizes, error) {
	s := c.String("d")
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		if n > scenarios.MaxValueSize {
			return scenarios.Sizes{}, usageErrorf("-d %d: values are at most %d bytes (512 MiB, Redis's proto-max-bulk-len)", n, scenarios.MaxValueSize)
		}
		if benchClamp && n < 1 {
			return scenarios.FixedSize(1), nil
		}
	}
	z, err := scenarios.ParseSizes(s)
	if err != nil {
		return z, usageErrorf("%v", err)
	}
	return z, nil
}

// parseWorkload reads -d (sizes), -r, --key-dist, --mix, --ratio,
// --command(s), -t and a trailing command into tests. Without -t the
// flag's default is used ("" is the whole suite); an empty -t is an
// error. ignoreT drops -t (bench, when a command is given).
func parseWorkload(c *cli.Context, sizes scenarios.Sizes, trailing []string, ignoreT bool) (*workload, error) {
	w, err := readWorkload(c, sizes, trailing, ignoreT)
	if err != nil {
		return nil, err
	}
	// A title is the user's command text: a password typed into it (AUTH,
	// a template) must not reach the output, the JSON, the .hlog tags or
	// the progress. The commands sent are compiled from the templates, not
	// from the titles.
	s := secretsFrom(c.Context)
	for i := range w.tests {
		t := &w.tests[i]
		t.title = s.Redact(t.title)
		for k := range t.names {
			t.names[k] = s.Redact(t.names[k])
		}
	}
	return w, nil
}

func readWorkload(c *cli.Context, sizes scenarios.Sizes, trailing []string, ignoreT bool) (*workload, error) {
	// bench, run, compare and sweep --cluster insert redis-benchmark's
	// ":{tag}" into the catalogue's keys (open loops fill it per request,
	// closed loops per batch).
	tags := c.Bool("cluster") && c.Command != nil && (c.Command.Name == "bench" || c.Command.Name == "run" || c.Command.Name == "compare" || c.Command.Name == "sweep")
	w := &workload{opts: scenarios.Options{Sizes: sizes, Cluster: tags}}
	tSet := c.IsSet("t") && !ignoreT
	if tSet && strings.Trim(c.String("t"), " ,") == "" {
		return nil, usageErrorf("-t %q names no test: give one or more, such as -t get,set (leave -t out for the whole suite)", c.String("t"))
	}
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
		more, err := scenarios.LoadCommandsFile(path)
		if err != nil {
			return nil, usageErrorf("--commands: %v", err)
		}
		customs = append(customs, more...)
	}
	mix := c.String("mix")
	if c.IsSet("ratio") {
		if mix != "" {
			return nil, usageErrorf("--ratio is a --mix of set and get: give one of them")
		}
		if mix, err = scenarios.ParseRatio(c.String("ratio")); err != nil {
			return nil, usageErrorf("%v", err)
		}
	}
	if mix != "" && len(weights) > 0 {
		return nil, usageErrorf("--mix sets the weights: drop --command-weight")
	}
	if mix != "" || len(customs) > 0 {
		if tSet {
			return nil, usageErrorf("-t selects catalogue tests; use --mix to combine them with --command")
		}
		if len(trailing) > 0 {
			return nil, usageErrorf("a command after the flags cannot be combined with --mix or --command: use --command")
		}
		r, err := scenarios.BuildRecipe(mix, customs, w.opts)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if err := checkBuildable(r); err != nil {
			return nil, err
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
			if err = checkBuildable(r); err != nil {
				return nil, err
			}
			_, err = r.Build()
		}
		if err != nil {
			return nil, usageErrorf("command: %v", err)
		}
		w.tests = []workTest{{recipe: r, title: scenarios.Title(trailing), custom: true}}
		return w, nil
	}
	tests, err := scenarios.Select(c.String("t"))
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	for _, t := range tests {
		w.tests = append(w.tests, workTest{recipe: scenarios.TestRecipe(t, w.opts), title: t.Title})
	}
	return w, nil
}

// checkBuildable refuses, before anything is compiled, a recipe whose
// largest command exceeds what any load command accepts: compiling fills
// fixed-size values, so a line of __data__ at -d 512MiB would allocate
// terabytes before any later check saw it.
func checkBuildable(r *scenarios.Recipe) error {
	if n := int64(r.MaxCommandSize()); n > maxClosedInFlight {
		return usageErrorf("a command of %s is larger than %s: lower -d or use fewer __data__", bytesize.Format(n), bytesize.Format(maxClosedInFlight))
	}
	return nil
}

// largest returns the size in bytes of the largest command the test can
// send (RESP framing and the largest value size included).
func (w *workload) largest(t workTest) (int64, error) {
	return int64(t.recipe.MaxCommandSize()), nil
}

// than maxClosedInFlight bytes: -c × -P × the largest command.
func checkClosedBudget(w *workload, conns, pipeline int) error {
	for _, t := range w.tests {
		l, err := w.largest(t)
		if err != nil {
			return err
		}
		if total := int64(conns) * int64(pipeline) * l; total > maxClosedInFlight {
			return usageErrorf("-c %d × -P %d × %s (the largest command of %s) = %s in flight; at most %s: lower -c, -P or -d",
				conns, pipeline, bytesize.Format(l), t.title, bytesize.Format(total), bytesize.Format(maxClosedInFlight))
		}
	}
	return nil
}

// checkMaxBuffer refuses a command that can never fit a connection's
// --max-buffer.
func checkMaxBuffer(w *workload, maxBuffer int) error {
	for _, t := range w.tests {
		l, err := w.largest(t)
		if err != nil {
			return err
		}
		if l > int64(maxBuffer) {
			return usageErrorf("a command of %s (%s) is larger than --max-buffer %s: raise --max-buffer or lower -d",
				bytesize.Format(l), t.title, bytesize.Format(int64(maxBuffer)))
		}
	}
	return nil
}
