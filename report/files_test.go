package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

func TestOutputPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, path := range []string{"", StdoutPath, filepath.Join(dir, "ok.json")} {
		if err := CheckOutputPath(path); err != nil {
			t.Errorf("CheckOutputPath(%q) = %v", path, err)
		}
	}
	for _, path := range []string{dir, filepath.Join(dir, "missing", "x.json")} {
		if err := CheckOutputPath(path); err == nil {
			t.Errorf("CheckOutputPath(%q) accepted", path)
		}
	}
	doc := &Document{Schema: Schema, Tests: []Test{}}
	var stdout bytes.Buffer
	if err := WriteJSON(&stdout, StdoutPath, doc); err != nil || !strings.Contains(stdout.String(), Schema) {
		t.Errorf("WriteJSON to stdout: %v %q", err, stdout.String())
	}
	file := filepath.Join(dir, "r.json")
	if err := (Files{JSON: file}).Checkpoint(doc); err != nil {
		t.Errorf("Checkpoint: %v", err)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), Schema) {
		t.Errorf("Checkpoint wrote %q, %v", b, err)
	}
	if err := (Files{JSON: StdoutPath}).Checkpoint(doc); err != nil {
		t.Errorf("Checkpoint to stdout must wait for the end: %v", err)
	}
}

func TestFilesCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, tc := range []struct {
		f    Files
		want string // "" for no error
	}{
		{Files{}, ""},
		{Files{JSON: a, HdrLog: b, HdrSpectrum: StdoutPath}, ""},
		{Files{JSON: os.DevNull, HdrLog: os.DevNull}, ""},
		{Files{JSON: StdoutPath, HdrSpectrum: StdoutPath}, "--json - and --hdr-spectrum -: only one output can go to stdout"},
		{Files{JSON: a, HdrLog: dir + "/./a"}, "--json and --hdr-log both name " + dir + "/./a: give each its own file"},
		{Files{HdrLog: dir}, "--hdr-log: cannot write"},
	} {
		err := tc.f.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.f, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(usagetest.CLI(err), tc.want) || !usage.Is(err)):
			t.Errorf("%+v: %v, want a usage error %q", tc.f, err, tc.want)
		}
	}
	if !(Files{HdrLog: "x"}).Any() || (Files{}).Any() || !(Files{HdrSpectrum: "-"}).Stdout() || (Files{JSON: "x"}).Stdout() {
		t.Error("Any or Stdout wrong")
	}
}
