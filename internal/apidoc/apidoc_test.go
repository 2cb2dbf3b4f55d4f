package apidoc

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pkg is one directory's Go package, parsed.
type pkg struct {
	dir   string // relative to the module root
	name  string
	files []*ast.File // non-test files
	tests []*ast.File // _test.go files, both packages
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// publicPackages parses every package of the module that a Go user can
// import: not main, not under internal/ (nor cmd/ or bench/, which hold
// programs), not in testdata or a nested module.
func publicPackages(t *testing.T) []pkg {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var out []pkg
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if rel != "." {
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" {
				return filepath.SkipDir
			}
			if rel == "cmd" || rel == "bench" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		p := pkg{dir: filepath.ToSlash(rel)}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, e.Name()), nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if strings.HasSuffix(e.Name(), "_test.go") {
				p.tests = append(p.tests, f)
				continue
			}
			p.name = f.Name.Name
			p.files = append(p.files, f)
		}
		if len(p.files) > 0 && p.name != "main" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no public package found")
	}
	return out
}

// Every public package says what it is for, once.
func TestPublicPackagesHaveADoc(t *testing.T) {
	for _, p := range publicPackages(t) {
		var docs []string
		for _, f := range p.files {
			if f.Doc != nil {
				docs = append(docs, f.Doc.Text())
			}
		}
		switch {
		case len(docs) == 0:
			t.Errorf("%s: no package doc", p.dir)
		case len(docs) > 1:
			t.Errorf("%s: %d package docs; keep one", p.dir, len(docs))
		case !strings.HasPrefix(docs[0], "Package "+p.name+" "):
			t.Errorf("%s: the package doc does not start with %q", p.dir, "Package "+p.name+" ")
		}
	}
}

// Every public package has an Example that go test runs, and none that
// looks checked but is not.
func TestPublicPackagesHaveARunnableExample(t *testing.T) {
	for _, p := range publicPackages(t) {
		run := 0
		for _, ex := range doc.Examples(p.tests...) {
			if ex.Output != "" || ex.EmptyOutput {
				run++
				continue
			}
			if mentionsOutput(ex) {
				t.Errorf("%s: Example%s has an Output line that go test does not see (a comment just above it joins it?): it is compiled, never run",
					p.dir, ex.Name)
			}
		}
		if run == 0 {
			t.Errorf("%s: no Example with an Output comment (go test runs only those)", p.dir)
		}
	}
}

// outputLine is go test's "Output:" (or "Unordered output:") line.
var outputLine = regexp.MustCompile(`(?i)^\s*(unordered )?output:`)

// mentionsOutput reports whether a line of a comment in ex's body reads
// as an Output line.
func mentionsOutput(ex *doc.Example) bool {
	for _, cg := range ex.Comments { // the file's: keep the body's
		if cg.Pos() < ex.Code.Pos() || cg.End() > ex.Code.End() {
			continue
		}
		for line := range strings.Lines(cg.Text()) {
			if outputLine.MatchString(line) {
				return true
			}
		}
	}
	return false
}
