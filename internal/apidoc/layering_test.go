package apidoc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layer ranks pacer's packages as CONTRIBUTING.md's layout draws them:
// a package imports only packages of a lower rank (and internal/), so
// imports flow one way, downward. A package missing here fails the test:
// a new package takes its place in the table (and in the layout) first.
var layer = map[string]int{
	"histo": 1, "conn": 1, "scenarios": 1, "embedded": 1, "stats": 1, "events": 1, "timeline": 1,
	"host": 2, "cluster": 2, "serverinfo": 2, "sentinel": 2, "visibility": 2, "messages": 2,
	"scheduler": 3,
	"report":    4, "metrics": 4, "scheduler/closedloop": 4, "scheduler/openloop": 4,
	"verdict": 5, "report/peers": 5,
	"diff": 6, "report/merge": 6,
	"report/text": 7, "endpoint": 7,
	"report/watch": 8, "report/plots": 8,
	"experiment":    9,
	"experiment/ab": 10, "experiment/bench": 10, "experiment/compare": 10, "experiment/replay": 10, "experiment/sweep": 10,
	"pubsub": 10, "stream": 10, "tracking": 10,
	"cmd/pacer": 11,
	".":         11, // the library's facade, package pacer
}

const modulePath = "github.com/pacer-load/pacer/"

// TestLayering: no package imports one of its own rank or above it (no
// cycles, and the transport never reaches up to the driver).
func TestLayering(t *testing.T) {
	root := moduleRoot(t)
	imports := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal" || rel == "bench") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // deploy/: a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if own, ok := strings.CutPrefix(p, modulePath); ok && !strings.HasPrefix(own, "internal/") {
				imports[dir][own] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < len(layer) {
		t.Fatalf("found %d packages, the table ranks %d: the walk is broken", len(imports), len(layer))
	}
	var dirs []string
	for dir := range imports {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		rank, ok := layer[dir]
		if !ok {
			t.Errorf("%s has no rank in the layering table: give it one (and a line in CONTRIBUTING.md's layout)", dir)
			continue
		}
		for imp := range imports[dir] {
			if r, ok := layer[imp]; !ok || r >= rank {
				t.Errorf("%s (rank %d) imports %s (rank %d): imports flow downward only", dir, rank, imp, r)
			}
		}
	}
}
