package apidoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
)

// flagName is a command-line flag as a message spells it: --rate.
var flagName = regexp.MustCompile(`--[A-Za-z]`)

// flagTextAllowed are the string literals below cmd/ that may spell a flag,
// by the file (or directory, ending in /) that holds them and a part of the
// literal, each with the reason. Anything else that names a setting says
// it as usage.OptionError does, and cmd/pacer spells it.
var flagTextAllowed = []struct{ file, text, why string }{
	{"internal/redistest/", "--", "the test servers' own command lines (redis-server --port)"},
	{"report/peers/foreign.go", "redis-benchmark --csv", "another tool's flag: the format pacer reads"},
	{"report/formats.go", "memtier_benchmark --json-out-file", "another tool's flag: the format pacer reads"},
	{"report/peers/read.go", "redis-benchmark --csv", "another tool's flag: the format pacer reads"},
	{"report/formats.go", "redis-benchmark --csv", "another tool's flag: the format pacer reads"},
	{"endpoint/keys.go", "redis-benchmark --cluster", "another tool's flag: what it does alike"},
	{"embedded/faults.go", "-ERR injected by pacer (--error-rate)", "a RESP reply the embedded server sends, not a Go error"},
	{"metrics/collector.go", "--timeout closed their connection", "Prometheus HELP text of the metrics the command line serves"},
	{"metrics/topology.go", "(--visibility)", "Prometheus HELP text of the metrics the command line serves"},
	{"report/text/notes.go", "--repeat", "report text for the terminal, which says how to narrow the interval"},
	{"report/text/side.go", "(--seed to repeat)", "report text for the terminal"},
	{"report/text/diff.go", "--repeat", "report text for the terminal"},
	{"report/text/diff.go", "gate --max-regression", "report text for the terminal"},
	{"report/plots/diff_html.go", "gate <code>--max-regression", "the diff report's HTML page"},
	{"experiment/compare/text.go", "(--rate)", "report text for the terminal"},
	{"experiment/compare/text.go", "(--seed to repeat)", "report text for the terminal"},
	{"diff/figure.go", "--rounds", "a figure's note in the diff report"},
	{"diff/compare.go", "--interval", "a figure's note in the diff report"},
	{"diff/compare.go", "pacer ab session with --decide-within", "a test's note in the diff report"},
	{"diff/compare.go", "redis-benchmark --csv holds no histograms", "other tools' flags: the formats diff reads and refuses"},
	{"scheduler/openloop/events.go", "(--timeout)", "an event's detail in the result document and the live view"},
	{"experiment/sweep/", "--", "a sweep's verdict and reasons, fields of its result document"},
	{"experiment/replicas.go", "--read-from prefer-replicas", "a note the run prints as it goes (Env.Say takes text)"},
	{"scenarios/trace_", "--", "a trace's Reason and Hint, fields of replay's summary and of its TraceError"},
}

// Packages below cmd/ speak Go: no string in them names a flag (--rate),
// save those flagTextAllowed lists; the settings an error names are
// usage.OptionError's placeholders, spelt as flags by cmd/pacer.
func TestNoFlagNamesBelowCmd(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	used := make([]bool, len(flagTextAllowed))
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case strings.HasPrefix(d.Name(), "."), d.Name() == "testdata", rel == "cmd", rel == "bench",
				rel == "internal/clihelp": // the command line's own helpers
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // deploy/: a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				checkPlaceholders(t, fset, call)
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !flagName.MatchString(s) {
				return true
			}
			for i, a := range flagTextAllowed {
				if (rel == a.file || strings.HasSuffix(a.file, "/") && strings.HasPrefix(rel, a.file) ||
					strings.HasSuffix(a.file, "_") && strings.HasPrefix(rel, a.file)) && strings.Contains(s, a.text) {
					used[i] = true
					return true
				}
			}
			t.Errorf("%s: %q names a flag: name the setting with a usage.OptionError placeholder ({rate}), which cmd/pacer spells as a flag",
				fset.Position(lit.Pos()), s)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("%d files checked: the walk missed the module", checked)
	}
	for i, a := range flagTextAllowed {
		if !used[i] {
			t.Errorf("flagTextAllowed: %s %q matches no string: drop it", a.file, a.text)
		}
	}
}

// placeholder is a {name} in an OptionError's format.
var placeholder = regexp.MustCompile(`\{[A-Za-z][a-z0-9-]*\}`)

// notSettings are braces in formats that are not placeholders.
var notSettings = map[string]bool{"{tag}": true}

// checkPlaceholders fails when a usage.Option or usage.Flagf format names a
// setting that usage does not know: it would be printed as written.
func checkPlaceholders(t *testing.T, fset *token.FileSet, call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) < 2 {
		return
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "usage" || sel.Sel.Name != "Option" && sel.Sel.Name != "Flagf" {
		return
	}
	ast.Inspect(call.Args[1], func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, _ := strconv.Unquote(lit.Value)
		for _, p := range placeholder.FindAllString(s, -1) {
			if !notSettings[p] && !usage.Known(p[1:len(p)-1]) {
				t.Errorf("%s: %s is no setting usage knows: add it to usage's options", fset.Position(lit.Pos()), p)
			}
		}
		return true
	})
	if flag, ok := call.Args[0].(*ast.BasicLit); ok {
		if f, _ := strconv.Unquote(flag.Value); f != "" && !usage.Known(f) {
			t.Errorf("%s: %q is no setting usage knows", fset.Position(flag.Pos()), f)
		}
	}
}
