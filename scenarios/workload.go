package scenarios

import (
	"context"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/usage"
)

// Workload is what a load command was asked to send, as its flags say it:
// catalogue tests (-t), a mix (--mix, --ratio), templates (--command,
// --command-weight, --commands) or a command after the flags, over a
// keyspace (-r, --key-dist) with values of Sizes (-d). Build turns it into
// tests; its errors are usage errors in the flags' words.
type Workload struct {
	Sizes Sizes
	// Tests lists catalogue tests for Select ("" is the whole suite);
	// TestsGiven says the user gave it: an empty list is then an error,
	// and it cannot be combined with a mix or templates.
	Tests      string
	TestsGiven bool
	// Keyspace is -r, when KeyspaceGiven; without it keys are fixed.
	Keyspace      string
	KeyspaceGiven bool
	// KeyDist is --key-dist (uniform when not given); given
	// (KeyDistGiven) it needs a keyspace.
	KeyDist      string
	KeyDistGiven bool
	// Commands are --command's templates, Weights --command-weight's (in
	// order, at most one each), CommandsFile --commands.
	Commands     []string
	Weights      []string
	CommandsFile string
	// Mix is --mix; Ratio (when RatioGiven) memtier's SET:GET, the same
	// as a mix of set and get.
	Mix        string
	Ratio      string
	RatioGiven bool
	// Trailing is a command given after the flags.
	Trailing []string
	// Cluster inserts redis-benchmark's ":{tag}" into the catalogue's
	// keys.
	Cluster bool
	// MaxCommand bounds the largest command, checked before anything is
	// compiled (0: no bound).
	MaxCommand int64
}

// Suite is what a Workload builds: its tests and what they share.
type Suite struct {
	Options Options
	Keys    KeyDist
	Tests   []SuiteTest
	// Mixed is set when a mix or templates built the test.
	Mixed bool
}

// SuiteTest is one test: a recipe compiled afresh for every sender.
type SuiteTest struct {
	Recipe *Recipe
	Title  string
	// Names of the commands, for per-command results (nil for one).
	Names []string
	// Custom is set for a command given after the flags.
	Custom bool
}

// Build reads the workload into its tests. ctx interrupts reading the
// --commands file (a FIFO that no one writes).
func (w Workload) Build(ctx context.Context) (*Suite, error) {
	s := &Suite{Options: Options{Sizes: w.Sizes, Cluster: w.Cluster}}
	if w.TestsGiven && strings.Trim(w.Tests, " ,") == "" {
		return nil, usage.Flagf("t", "{t} %q names no test: give one or more, such as {t} get,set (leave {t} out for the whole suite)", w.Tests)
	}
	if w.KeyspaceGiven {
		n, err := strconv.ParseInt(w.Keyspace, 10, 64)
		if err != nil {
			return nil, usage.Flagf("r", "{r} %q: want a keyspace size", w.Keyspace)
		}
		if n < 0 {
			return nil, usage.Flagf("r", "{r} %d: must not be negative", n)
		}
		s.Options.Random, s.Options.Keyspace = true, uint64(n)
	}
	dist := w.KeyDist
	if dist == "" && !w.KeyDistGiven {
		dist = "uniform"
	}
	keys, err := parseKeyDist(dist, s.Options.Keyspace)
	if err != nil {
		return nil, usage.Errorf("%w", err)
	}
	if w.KeyDistGiven && !s.Options.Random {
		return nil, usage.Flagf("key-dist", "{key-dist} needs a keyspace: give {r} N")
	}
	s.Keys = keys

	var customs []Custom
	for _, c := range w.Commands {
		cu, err := ParseCustom(c)
		if err != nil {
			return nil, usage.Flagf("command", "{command}: %v", err)
		}
		customs = append(customs, cu)
	}
	if len(w.Weights) > len(customs) {
		return nil, usage.Flagf("", "%d {command-weight} for %d {command}", len(w.Weights), len(customs))
	}
	for i, ws := range w.Weights {
		v, err := strconv.ParseUint(ws, 10, 32)
		if err != nil || v == 0 {
			return nil, usage.Flagf("command-weight", "{command-weight} %q: want a whole number above 0", ws)
		}
		customs[i].Weight = v
	}
	if w.CommandsFile != "" {
		more, err := loadCommandsFile(ctx, w.CommandsFile)
		if err != nil {
			return nil, usage.Flagf("commands", "{commands}: %v", err)
		}
		customs = append(customs, more...)
	}
	mix := w.Mix
	if w.RatioGiven {
		if mix != "" {
			return nil, usage.Flagf("ratio", "{ratio} is a {mix} of set and get: give one of them")
		}
		if mix, err = parseRatio(w.Ratio); err != nil {
			return nil, usage.Errorf("%w", err)
		}
	}
	if mix != "" && len(w.Weights) > 0 {
		return nil, usage.Flagf("mix", "{mix} sets the weights: drop {command-weight}")
	}
	switch {
	case mix != "" || len(customs) > 0:
		if w.TestsGiven {
			return nil, usage.Flagf("t", "{t} selects catalogue tests; use {mix} to combine them with {command}")
		}
		if len(w.Trailing) > 0 {
			return nil, usage.Flagf("", "a command after the flags cannot be combined with {mix} or {command}: use {command}")
		}
		r, err := BuildRecipe(mix, customs, s.Options)
		if err != nil {
			return nil, usage.Errorf("%w", err)
		}
		if err := w.buildable(r); err != nil {
			return nil, err
		}
		if _, err := r.Build(); err != nil {
			return nil, usage.Errorf("%w", err)
		}
		t := SuiteTest{Recipe: r, Title: r.Title()}
		if len(r.Items) > 1 {
			t.Names = r.Names()
		}
		s.Tests, s.Mixed = []SuiteTest{t}, true
	case len(w.Trailing) > 0:
		r, err := BuildRecipe("", []Custom{{Name: strings.ToLower(w.Trailing[0]), Args: w.Trailing, Weight: 1}}, s.Options)
		if err == nil {
			if err = w.buildable(r); err != nil {
				return nil, err
			}
			_, err = r.Build()
		}
		if err != nil {
			return nil, usage.Errorf("command: %w", err)
		}
		s.Tests = []SuiteTest{{Recipe: r, Title: Title(w.Trailing), Custom: true}}
	default:
		tests, err := Select(w.Tests)
		if err != nil {
			return nil, usage.Errorf("%w", err)
		}
		for _, t := range tests {
			s.Tests = append(s.Tests, SuiteTest{Recipe: TestRecipe(t, s.Options), Title: t.Title})
		}
	}
	return s, nil
}

// buildable refuses, before anything is compiled, a recipe whose largest
// command exceeds MaxCommand: compiling fills fixed-size values, so a
// line of __data__ at -d 512MiB would allocate terabytes before any later
// check saw it.
func (w Workload) buildable(r *Recipe) error {
	if n := int64(r.MaxCommandSize()); w.MaxCommand > 0 && n > w.MaxCommand {
		return usage.Flagf("", "a command of %s is larger than %s: lower {d} or use fewer __data__", bytesize.Format(n), bytesize.Format(w.MaxCommand))
	}
	return nil
}
