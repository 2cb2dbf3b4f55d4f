package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

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

// stream builds a sender's command stream for the test.
func (w *workload) stream(t workTest, seed uint64) (*scenarios.Stream, error) {
	m, err := t.recipe.Build()
	if err != nil {
		return nil, err
	}
	return scenarios.NewMixStream(m, seed, w.keys), nil
}

// parseSizes reads -d. bench keeps redis-benchmark's clamp of a plain
// number below 1 to 1 byte; above maxValueSize every command refuses
// (redis-benchmark would clamp to 1 GiB, which Redis then rejects).
func parseSizes(c *cli.Context, benchClamp bool) (scenarios.Sizes, error) {
	s := c.String("d")
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		if n > maxValueSize {
			return scenarios.Sizes{}, usageErrorf("-d %d: values are at most %d bytes (512 MiB, Redis's proto-max-bulk-len)", n, maxValueSize)
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
	w := &workload{opts: scenarios.Options{Sizes: sizes}}
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
		b, err := readCommandsFile(path)
		if err != nil {
			return nil, err
		}
		more, err := scenarios.ParseCommandsFile(string(b))
		if err != nil {
			return nil, usageErrorf("--commands %s: %v", path, err)
		}
		customs = append(customs, more...)
	}
	mix := c.String("mix")
	if c.IsSet("ratio") {
		if mix != "" {
			return nil, usageErrorf("--ratio is a --mix of set and get: give one of them")
		}
		if mix, err = parseRatio(c.String("ratio")); err != nil {
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
	tests, err := scenarios.Select(c.String("t"))
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	for _, t := range tests {
		w.tests = append(w.tests, workTest{recipe: scenarios.TestRecipe(t, w.opts), title: t.Title})
	}
	return w, nil
}

// maxCommandsFile bounds the --commands file.
const maxCommandsFile = 1 << 20

// readCommandsFile reads the --commands file, at most maxCommandsFile
// bytes.
func readCommandsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("--commands: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCommandsFile+1))
	if err != nil {
		return nil, usageErrorf("--commands: %v", err)
	}
	if len(b) > maxCommandsFile {
		return nil, usageErrorf("--commands %s: larger than %s", path, formatBytes(maxCommandsFile))
	}
	return b, nil
}

// parseRatio maps memtier's --ratio SET:GET to a --mix spec.
// TODO(merge): replace by scenarios.ParseRatio (same signature) and
// delete this stand-in.
func parseRatio(s string) (string, error) {
	bad := fmt.Errorf("--ratio %q: want SET:GET with whole numbers, not both 0, such as 1:10", s)
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	set, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 32)
	get, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	if !ok || err1 != nil || err2 != nil || set+get == 0 {
		return "", bad
	}
	var parts []string
	if set > 0 {
		parts = append(parts, "set:"+strconv.FormatUint(set, 10))
	}
	if get > 0 {
		parts = append(parts, "get:"+strconv.FormatUint(get, 10))
	}
	return strings.Join(parts, ","), nil
}

// largest returns the size in bytes of the largest command the test can
// send (every value at the largest -d size), without building it.
func (w *workload) largest(t workTest) (int64, error) {
	size := int64(w.opts.Sizes.Max())
	if size == 0 {
		size = 3 // scenarios' default
	}
	var most int64
	for _, it := range t.recipe.Items {
		var n int64
		if it.Args != nil {
			n = commandLen(it.Args, w.opts.Random || w.opts.Keyspace > 0, size)
		} else {
			var err error
			if n, err = probeLen(it, w.opts, w.keys, size); err != nil {
				return 0, err
			}
		}
		most = max(most, n)
	}
	return most, nil
}

// commandLen is the RESP size of a custom command whose values are size
// bytes: placeholders are replaced as scenarios compiles them
// (__rand_int__ and __key__ by 12 digits, __data__ by the value).
func commandLen(args []string, random bool, size int64) int64 {
	n := int64(len("*\r\n") + len(strconv.Itoa(len(args))))
	for _, a := range args {
		var l int64
		for i := 0; i < len(a); {
			switch {
			case random && strings.HasPrefix(a[i:], scenarios.RandPlaceholder):
				l, i = l+12, i+len(scenarios.RandPlaceholder)
			case strings.HasPrefix(a[i:], scenarios.KeyPlaceholder):
				l, i = l+12, i+len(scenarios.KeyPlaceholder)
			case strings.HasPrefix(a[i:], scenarios.DataPlaceholder):
				l, i = l+size, i+len(scenarios.DataPlaceholder)
			default:
				l, i = l+1, i+1
			}
		}
		n += bulkLen(l)
	}
	return n
}

// bulkLen is the RESP size of a bulk string of l bytes: $l\r\n...\r\n.
func bulkLen(l int64) int64 { return 1 + int64(len(strconv.FormatInt(l, 10))) + 2 + l + 2 }

// probeLen measures a catalogue command: it builds it with 1-byte and
// 2-byte values (small, whatever -d is), reads which arguments grow and by
// how much, and extrapolates to size bytes.
func probeLen(it scenarios.RecipeItem, o scenarios.Options, keys scenarios.KeyDist, size int64) (int64, error) {
	probe := func(n int) ([]byte, error) {
		po := o
		po.Sizes = scenarios.FixedSize(n)
		m, err := (&scenarios.Recipe{Opts: po, Items: []scenarios.RecipeItem{it}}).Build()
		if err != nil {
			return nil, err
		}
		b, _ := scenarios.NewMixStream(m, 1, keys).Next()
		return append([]byte(nil), b...), nil
	}
	one, err := probe(1)
	if err != nil {
		return 0, usageErrorf("%v", err)
	}
	two, err := probe(2)
	if err != nil {
		return 0, usageErrorf("%v", err)
	}
	a1, b1 := respArgLens(one), respArgLens(two)
	if a1 == nil || len(a1) != len(b1) {
		return int64(len(one)), nil // inline, or no values
	}
	n := int64(len("*\r\n") + len(strconv.Itoa(len(a1))))
	for i := range a1 {
		values := b1[i] - a1[i] // __data__ occurrences in the argument
		n += bulkLen(a1[i] - values + values*size)
	}
	return n, nil
}

// respArgLens returns the argument lengths of a RESP command, nil if b is
// not one.
func respArgLens(b []byte) []int64 {
	readLen := func(prefix byte) (int64, bool) {
		if len(b) == 0 || b[0] != prefix {
			return 0, false
		}
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(string(b[1:i]), 10, 64)
		b = b[i+2:]
		return n, err == nil && n >= 0
	}
	count, ok := readLen('*')
	if !ok {
		return nil
	}
	var out []int64
	for range count {
		l, ok := readLen('$')
		if !ok || int64(len(b)) < l+2 {
			return nil
		}
		b = b[l+2:]
		out = append(out, l)
	}
	return out
}

// checkClosedBudget refuses a closed loop whose batches could hold more
// than maxClosedInFlight bytes: -c × -P × the largest command.
func checkClosedBudget(w *workload, conns, pipeline int) error {
	for _, t := range w.tests {
		l, err := w.largest(t)
		if err != nil {
			return err
		}
		if total := int64(conns) * int64(pipeline) * l; total > maxClosedInFlight {
			return usageErrorf("-c %d × -P %d × %s (the largest command of %s) = %s in flight; at most %s: lower -c, -P or -d",
				conns, pipeline, formatBytes(l), t.title, formatBytes(total), formatBytes(maxClosedInFlight))
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
				formatBytes(l), t.title, formatBytes(int64(maxBuffer)))
		}
	}
	return nil
}
