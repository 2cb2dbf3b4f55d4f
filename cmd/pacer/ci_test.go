package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRaceSkippedTestsRunInCI: .ci/run runs every test under the race
// detector, so a test that skips (or stops asserting) under it, by calling
// testrun.SkipRace or reading testrun.RaceEnabled (itself or through a
// helper of its package), would never run in CI; .ci/run's second pass,
// without -race, must name each of them in the right package.
func TestRaceSkippedTestsRunInCI(t *testing.T) {
	root := filepath.Join("..", "..")
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	// Each second-pass line: its -run pattern and its package.
	pass := regexp.MustCompile(`go test -count=1 [^\n]*-run '([^']+)' (\./[^\s]+)`)
	listed := map[string]*regexp.Regexp{}
	for _, m := range pass.FindAllStringSubmatch(string(ci), -1) {
		listed[strings.TrimPrefix(m[2], "./")] = regexp.MustCompile(m[1])
	}
	// A test asks about the race detector itself or through a helper of
	// its package (a function, not a test, whose body asks).
	type testFunc struct{ path, pkg, name string }
	var tests []testFunc
	calls := map[testFunc]*ast.BlockStmt{}
	helpers := map[string]map[string]bool{} // per package
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "deploy" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		pkg = filepath.ToSlash(pkg)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if strings.HasPrefix(fn.Name.Name, "Test") {
				tf := testFunc{path, pkg, fn.Name.Name}
				tests = append(tests, tf)
				calls[tf] = fn.Body
			} else if asksAboutRace(fn.Body) {
				if helpers[pkg] == nil {
					helpers[pkg] = map[string]bool{}
				}
				helpers[pkg][fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tf := range tests {
		body := calls[tf]
		reads := asksAboutRace(body)
		for h := range helpers[tf.pkg] {
			reads = reads || mentions(body, h)
		}
		if !reads {
			continue
		}
		found++
		if re := listed[tf.pkg]; re == nil || !re.MatchString(tf.name) {
			t.Errorf("%s: %s skips or checks less under -race, but .ci/run's pass without -race does not run it in ./%s", tf.path, tf.name, tf.pkg)
		}
	}
	if found == 0 {
		t.Fatal("no test asks about the race detector: is this test looking in the right place?")
	}
}

// asksAboutRace reports whether n calls testrun.SkipRace or reads
// testrun.RaceEnabled.
func asksAboutRace(n ast.Node) bool {
	return mentions(n, "SkipRace") || mentions(n, "RaceEnabled")
}

// mentions reports whether the identifier name occurs in n.
func mentions(n ast.Node, name string) bool {
	seen := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			seen = true
		}
		return !seen
	})
	return seen
}
