package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// workload is what one invocation sends: one or more tests.
type workload struct {
	opts  scenarios.Options
	keys  scenarios.KeyDist
	tests []workTest
	// mixed is set when --mix, --command or --commands built the test.
	mixed bool
}

// workTest is one test as the experiments take it (its recipe compiled
// afresh for every sender's stream, its ID stable in the JSON: see
// scenarios.Recipe.ID), and whether it is a command given after the flags.
type workTest struct {
	experiment.Test
	custom bool
}

// testOf is the test of recipe r titled title, its streams drawing keys
// from keys.
func testOf(r *scenarios.Recipe, title string, names []string, keys scenarios.KeyDist) experiment.Test {
	return experiment.Test{ID: r.ID(), Title: title, Names: names, Recipe: r,
		Stream: func(seed uint64) (scheduler.Commands, error) {
			m, err := r.Build()
			if err != nil {
				return nil, err
			}
			return scenarios.NewMixStream(m, seed, keys), nil
		}}
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
// --command(s), -t and a trailing command into tests (scenarios.Workload).
// Without -t the flag's default is used ("" is the whole suite, as -t
// all); an empty -t is an error. ignoreT drops -t (bench, when a command
// is given).
func parseWorkload(c *cli.Context, sizes scenarios.Sizes, trailing []string, ignoreT bool) (*workload, error) {
	tests, given := c.String("t"), c.IsSet("t") && !ignoreT
	switch strings.ToLower(strings.Trim(tests, " ,")) {
	case "":
		if given {
			return nil, usageErrorf("-t %q names no test: give one or more, such as -t get,set, or -t all for the whole suite", tests)
		}
	case "all":
		tests = strings.Join(scenarios.TestNames(), ",")
	}
	// bench, run, compare and sweep --cluster insert redis-benchmark's
	// ":{tag}" into the catalogue's keys (open loops fill it per request,
	// closed loops per batch).
	tags := c.Bool("cluster") && c.Command != nil && (c.Command.Name == "bench" || c.Command.Name == "run" || c.Command.Name == "compare" || c.Command.Name == "sweep")
	s, err := scenarios.Workload{Sizes: sizes, Tests: tests, TestsGiven: given,
		Keyspace: c.String("r"), KeyspaceGiven: c.IsSet("r"), KeyDist: c.String("key-dist"), KeyDistGiven: c.IsSet("key-dist"),
		Commands: c.StringSlice("command"), Weights: c.StringSlice("command-weight"), CommandsFile: c.String("commands"),
		Mix: c.String("mix"), Ratio: c.String("ratio"), RatioGiven: c.IsSet("ratio"), Trailing: trailing,
		Cluster: tags, MaxCommand: experiment.MaxClosedInFlight}.Build(c.Context)
	if err != nil {
		return nil, err
	}
	// A title is the user's command text: a password typed into it (AUTH,
	// a template) must not reach the output, the JSON, the .hlog tags or
	// the progress. The commands sent are compiled from the templates, not
	// from the titles.
	sec := secretsFrom(c.Context)
	w := &workload{opts: s.Options, keys: s.Keys, mixed: s.Mixed}
	for _, t := range s.Tests {
		for k := range t.Names {
			t.Names[k] = sec.Redact(t.Names[k])
		}
		w.tests = append(w.tests, workTest{Test: testOf(t.Recipe, sec.Redact(t.Title), t.Names, s.Keys), custom: t.Custom})
	}
	return w, nil
}

// parseOpenWorkload reads -d and the workload of run, sweep and compare,
// whose -t (which selects what tests does) and a command after the flags
// exclude each other.
func parseOpenWorkload(c *cli.Context, tests string) (*workload, error) {
	sizes, err := parseSizes(c, false)
	if err != nil {
		return nil, err
	}
	if c.IsSet("t") && c.Args().Len() > 0 {
		return nil, usageErrorf("-t selects %s; it cannot be combined with a custom command", tests)
	}
	return parseWorkload(c, sizes, c.Args().Slice(), false)
}

// list is the workload's tests as the experiments take them.
func (w *workload) list() []experiment.Test {
	tests := make([]experiment.Test, len(w.tests))
	for i, j := range w.tests {
		tests[i] = j.Test
	}
	return tests
}
