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
// detector, so a test that skips (or stops asserting) under it, by reading
// raceEnabled, would never run in CI; .ci/run's second pass, without
// -race, must name each of them in the right package.
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
	found := 0
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
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !mentions(fn.Body, "raceEnabled") {
				continue
			}
			found++
			if re := listed[filepath.ToSlash(pkg)]; re == nil || !re.MatchString(fn.Name.Name) {
				t.Errorf("%s: %s reads raceEnabled, but .ci/run's pass without -race does not run it in ./%s", path, fn.Name.Name, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no test reads raceEnabled: is this test looking in the right place?")
	}
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
